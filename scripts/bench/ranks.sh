#!/usr/bin/env bash
# Many inputs: what each input of a multi-rank run costs. Converts a synthetic N-rank MPI+GPU run
# (`prvsight synth mpi_run`: one export per rank, 4 ranks a node, 10 iterations; see
# src/synth/mpi_run.rs) for each N, and prints per N the wall time and peak RSS (GNU time's
# maximum resident set) of `convert` (the fastest of RUNS runs, each into new files, the inputs
# read into the page cache first), then the per-input overhead: the least-squares slope of time
# and RSS against N. docs/PERFORMANCE.md "Many inputs" gives these figures.
#
#   scripts/bench/ranks.sh [-b BIN ...] [-r RUNS] [N ...]     # N: default 4 16 64 256 1024
#
# -b BIN: the prvsight binaries to measure (default target/release/prvsight; repeat -b for
# several, e.g. a build from before a change; each N is then run by every binary in turn).
# RUNS defaults to 3. Inputs go to $BENCH_DIR/ranks/N (default /tmp/prvsight-bench), written by
# this tree's release build; ARGS after `--` go to every convert (e.g. `-- -o x.prv.gz` is not
# allowed, but `-- -t mpi,kernel` is).
set -euo pipefail
cd "$(dirname "$0")/../.."
BENCH=${BENCH_DIR:-/tmp/prvsight-bench}
RUNS=3
BINS=()
while [ $# -gt 0 ]; do
  case $1 in
    -b) BINS+=("$2"); shift 2 ;;
    -r) RUNS=$2; shift 2 ;;
    --) break ;;
    -*) sed -n '2,16p' "$0" >&2; exit 2 ;;
    *) break ;;
  esac
done
NS=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do NS+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
ARGS=("$@")
[ ${#NS[@]} -gt 0 ] || NS=(4 16 64 256 1024)
[ ${#BINS[@]} -gt 0 ] || BINS=(target/release/prvsight)
[ -x /usr/bin/time ] || { echo "ranks.sh needs GNU time (/usr/bin/time: apt-get install time)" >&2; exit 2; }
cargo build --release --quiet --bin prvsight
SYNTH=$PWD/target/release/prvsight
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

for n in "${NS[@]}"; do
  dir=$BENCH/ranks/$n
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    "$SYNTH" synth mpi_run --ranks "$n" -o "$dir" 2>/dev/null
    touch "$dir/.complete"
  fi
done

echo "| binary | N | inputs MiB | records | wall s | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for n in "${NS[@]}"; do
  dir=$BENCH/ranks/$n
  mib=$(du -sm "$dir" | cut -f1)
  for bin in "${BINS[@]}"; do
    best=
    for _ in $(seq "$RUNS"); do
      rm -f "$OUT"/run.*
      cat "$dir"/*.sqlite >/dev/null
      /usr/bin/time -f "%e %M" -o "$OUT/time" "$bin" convert "$dir"/*.sqlite -o "$OUT/run.prv" "${ARGS[@]}" 2>"$OUT/log" ||
        { cat "$OUT/log" >&2; exit 1; }
      read -r wall rss <"$OUT/time"
      if [ -z "$best" ] || awk -v a="$wall" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then best="$wall $rss"; fi
    done
    records=$(sed -n 's/.*wrote .* (\([0-9]*\) records.*/\1/p' "$OUT/log")
    read -r wall rss <<<"$best"
    awk -v b="$bin" -v n="$n" -v m="$mib" -v r="$records" -v w="$wall" -v k="$rss" \
      'BEGIN { printf "| %s | %d | %d | %s | %.3f | %.0f |\n", b, n, m, r, w, k / 1000 }'
    echo "$bin $n $wall $rss" >>"$OUT/points"
  done
done
echo
# Least squares over the N measured: seconds and kB per input, and the fit's value at N = 0.
awk '{ k = $1; n[k]++; x[k] += $2; y[k] += $3; z[k] += $4; xx[k] += $2 * $2; xy[k] += $2 * $3; xz[k] += $2 * $4 }
  END { for (k in n) { d = n[k] * xx[k] - x[k] * x[k]; if (d == 0) continue
      st = (n[k] * xy[k] - x[k] * y[k]) / d; sr = (n[k] * xz[k] - x[k] * z[k]) / d
      printf "%s: per input %.2f ms and %.0f kB; at N = 0: %.3f s, %.0f MB\n", k, st * 1000, sr,
        (y[k] - st * x[k]) / n[k], (z[k] - sr * x[k]) / n[k] / 1000 } }' "$OUT/points"
