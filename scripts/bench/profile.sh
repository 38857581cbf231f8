#!/usr/bin/env bash
# Where prvsight's conversion time goes: a sampling profile of one native release conversion.
#
#   scripts/bench/profile.sh INPUT.sqlite
#
# Uses `perf record -e cpu-clock` (a software clock: works in VMs without hardware counters);
# without perf, valgrind --tool=callgrind (much slower: use a ~10 MB input). Prints the top
# functions and the split between SQLite (the only C code in the binary), prvsight's Rust code,
# libc and the kernel. Files go to $BENCH_DIR (default /tmp/prvsight-bench)/profile/.
set -euo pipefail
cd "$(dirname "$0")/../.."
IN=${1:?usage: scripts/bench/profile.sh INPUT.sqlite}
OUT=${BENCH_DIR:-/tmp/prvsight-bench}/profile
mkdir -p "$OUT"
cargo build --release --quiet --bin prvsight
BIN=$PWD/target/release/prvsight

if perf record -e cpu-clock -o /dev/null -- true >/dev/null 2>&1; then
  perf record -q -e cpu-clock -F 4000 -o "$OUT/perf.data" -- "$BIN" convert "$IN" -o "$OUT/p.prv" 2>&1 | tail -2
  perf report -i "$OUT/perf.data" --no-children --stdio --sort dso,symbol 2>/dev/null |
    grep -E '^ +[0-9.]+%' > "$OUT/flat.txt"
  echo "== top 25 functions (% of samples)"
  head -25 "$OUT/flat.txt" | cut -c1-150
  echo "== split"
  awk '{
      pct = $1; sub("%", "", pct); dso = $2; sym = ""; for (i = 4; i <= NF; i++) sym = sym " " $i
      if (dso ~ /kernel/) k += pct
      else if (dso ~ /^libc/ || dso ~ /ld-linux/) c += pct
      else if (sym ~ /::/ || sym ~ /^ *</) r += pct
      else s += pct
    }
    END { printf "SQLite (C, in the binary) %.1f %%\nprvsight Rust code         %.1f %%\nlibc (memcpy, malloc...)   %.1f %%\nkernel (I/O, page faults)  %.1f %%\n", s, r, c, k }' "$OUT/flat.txt"
else
  command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
  valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" "$BIN" convert "$IN" -o "$OUT/p.prv"
  callgrind_annotate "$OUT/callgrind.out" | head -40
fi
rm -f "$OUT"/p.{prv,pcf,row}
