#!/usr/bin/env bash
# Before against after: builds of prvsight compared on one input in alternated runs. This
# project's VMs drift by ±10 % within minutes, so the runs of one build are never timed apart
# from the other's: each round runs every build once, each round starting one build further on
# (no build always runs first, or right after the same other). Each run converts into new
# files (the outputs of the run before removed first), after the input is read into the page
# cache. Prints per build the median and fastest wall time, the median CPU time (user + system
# of the process and its threads) and the median count of minor page faults (memory touched
# for the first time): docs/PERFORMANCE.md gives these as "alternated, medians of N". Then,
# per build after the first, the round-by-round difference from the first (its median and
# middle half: wall and CPU), which the drift between rounds does not enter.
#
#   scripts/bench/ab.sh [-n ROUNDS] [-c] INPUT.sqlite BIN [BIN ...] [-- ARGS ...]
#
# ROUNDS defaults to 11. -c adds a copy of the first BIN as a control: what its difference from
# the first shows is this machine's noise (milliseconds between two copies at 10 MB), the floor
# a change must clear. ARGS go to every
# `BIN convert INPUT -o OUT -q` (e.g. `-- -t nvtx` or `-- --read-ahead off`). To compare a build
# with a later one, copy it aside first:
#   cp target/release/prvsight /tmp/before && (edit, cargo build --release) &&
#   scripts/bench/ab.sh -c /tmp/prvsight-bench/in/inflated_10mb.sqlite /tmp/before target/release/prvsight
set -euo pipefail
ROUNDS=11
CONTROL=
while [ $# -gt 0 ]; do
  case $1 in
    -n) ROUNDS=$2; shift 2 ;;
    -c) CONTROL=1; shift ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { sed -n '2,22p' "$0" >&2; exit 2; }
IN=$1; shift
BINS=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do BINS+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
ARGS=("$@")
[ -x /usr/bin/time ] || { echo "ab.sh needs GNU time (/usr/bin/time: apt-get install time)" >&2; exit 2; }
for b in "${BINS[@]}"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }; done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if [ -n "$CONTROL" ]; then
  cp "${BINS[0]}" "$OUT/control-copy"
  BINS+=("$OUT/control-copy")
fi

# The CPU seconds (user + system) of this shell's children so far, from `times` written to a file
# (in a command substitution it would be a subshell's, which has no children).
children_cpu() {
  times >"$OUT/times"
  tail -1 "$OUT/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); s += p[1] * 60 + p[2] } printf "%.4f", s }'
}

N=${#BINS[@]}
for r in $(seq "$ROUNDS"); do
  for k in $(seq 0 $((N - 1))); do
    i=$(((r + k) % N))
    rm -f "$OUT"/ab.*
    cat "$IN" >/dev/null
    children_cpu >"$OUT/c0"; t0=$EPOCHREALTIME
    /usr/bin/time -f "%R" -o "$OUT/faults" "${BINS[$i]}" convert "$IN" -o "$OUT/ab.prv" -q "${ARGS[@]}" >/dev/null
    t1=$EPOCHREALTIME; children_cpu >"$OUT/c1"
    c0=$(cat "$OUT/c0"); c1=$(cat "$OUT/c1")
    echo "$i ${t0/,/.} ${t1/,/.} $c0 $c1 $(tail -1 "$OUT/faults")"
  done
done | awk -v names="${BINS[*]}" -v control="$CONTROL" '
  { n = ++runs[$1]; wall[$1, n] = ($3 - $2) * 1000; cpu[$1, n] = ($5 - $4) * 1000; faults[$1, n] = $6 }
  # Sorted by insertion: POSIX awk (mawk, Debian'"'"'s default) has no asort.
  function sorted(a, b, m, v,   i, j, x) {
    for (i = 1; i <= m; i++) { x = a[b, i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
  }
  function median(a, b, m,   v) { sorted(a, b, m, v); return v[int((m + 1) / 2)] }
  function least(a, b, m,   v) { sorted(a, b, m, v); return v[1] }
  function quartile(a, b, m, q,   v) { sorted(a, b, m, v); return v[int((m - 1) * q + 1.5)] }
  END {
    nb = split(names, bin, " ")
    if (control) bin[nb] = "control (a copy of " bin[1] ")"
    for (b = 0; b < nb; b++) {
      m = runs[b]
      printf "%s: wall median %.1f ms (fastest %.1f) | CPU median %.1f ms | minor faults median %d | %d runs\n",
        bin[b + 1], median(wall, b, m), least(wall, b, m), median(cpu, b, m), median(faults, b, m), m
    }
    # Round by round against the first build (rounds where both ran).
    for (b = 1; b < nb; b++) {
      m = runs[b] < runs[0] ? runs[b] : runs[0]
      for (r = 1; r <= m; r++) { dw[b, r] = wall[b, r] - wall[0, r]; dc[b, r] = cpu[b, r] - cpu[0, r] }
      printf "%s - %s, per round: wall median %+.1f ms (middle half %+.1f .. %+.1f) | CPU median %+.1f ms (%+.1f .. %+.1f)\n",
        bin[b + 1], bin[1], median(dw, b, m), quartile(dw, b, m, 0.25), quartile(dw, b, m, 0.75),
        median(dc, b, m), quartile(dc, b, m, 0.25), quartile(dc, b, m, 0.75)
    }
  }'
