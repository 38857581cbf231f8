#!/usr/bin/env bash
# Conversion benchmark: prvsight (native release, profile-guided: scripts/build-cli.sh) against
# the physical floor (SQLite alone) and against nsys2prv 0.5.8, on inflated copies of a real
# export; the plain `cargo build --release` beside it. See docs/PERFORMANCE.md.
#
#   scripts/bench/run.sh [SIZE_MB ...]          # default: 10 100 1024
#
# Environment:
#   BENCH_DIR    work folder for inputs, outputs and results (default /tmp/prvsight-bench)
#   SOURCE       export to inflate (default ../shared/traces/nsightful_power_iteration.sqlite)
#   N2P_SIZES    sizes (MB) on which nsys2prv also runs (default "10 100"; it loads every table
#                into pandas, so 1 GB takes very long: add 1024 explicitly to try it)
#   N2P_TIMEOUT  seconds before nsys2prv is stopped (default 3600)
#   RUNS         prvsight runs per input, fastest kept (default 3: shared VMs are noisy)
#
# nsys2prv is run with `-t cuda_api_trace,nvtx_pushpop_trace`: it then converts kernels, memcpy,
# memset, CUDA API calls, NVTX push/pop and the API-to-GPU links. The ratio compares it with
# prvsight doing that job (`-t kernel,memcpy,memset,cuda-api,nvtx`); prvsight's time for every
# family it reads (OS runtime and CPU scheduling too, which nsys2prv does not convert) is shown
# beside it.
# The last two columns time `prvsight metrics` on the same input: the same records read, the
# efficiency report computed, no trace written (the reading thread gets helpers then: the sinks
# leave cores free).
# Results: a Markdown table on stdout and in $BENCH_DIR/results.md; raw logs beside it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BENCH=${BENCH_DIR:-/tmp/prvsight-bench}
SOURCE=${SOURCE:-$ROOT/../shared/traces/nsightful_power_iteration.sqlite}
SIZES=${*:-10 100 1024}
N2P_SIZES=${N2P_SIZES:-10 100}
N2P_TIMEOUT=${N2P_TIMEOUT:-3600}
RUNS=${RUNS:-3}
N2P_JOB=kernel,memcpy,memset,cuda-api,nvtx
mkdir -p "$BENCH/in" "$BENCH/out" "$BENCH/logs"

# --- tools -------------------------------------------------------------------------------------
need_apt() { command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }; }
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
need_apt sqlite3 sqlite3
if [ ! -x "$BENCH/venv/bin/nsys2prv" ]; then
  python3 -m venv "$BENCH/venv"
  "$BENCH/venv/bin/pip" install -q nsys2prv==0.5.8
fi
cargo build --release --quiet --bin prvsight --bin prvsight-inflate
# The CLI as scripts/build-cli.sh builds it (its profile from the repository's own inputs, not
# from these), and the plain release build, timed beside it.
PRVSIGHT=$(scripts/build-cli.sh)
PLAIN=$ROOT/target/release/prvsight
INFLATE=$ROOT/target/release/prvsight-inflate
SHIM=$ROOT/scripts/bench/shim

# The tables prvsight converts (Family::tables in src/options.rs).
TABLES="CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET CUPTI_ACTIVITY_KIND_RUNTIME NVTX_EVENTS MPI_P2P_EVENTS MPI_COLLECTIVES_EVENTS MPI_START_WAIT_EVENTS MPI_OTHER_EVENTS OSRT_API GPU_METRICS SCHED_EVENTS"
present() { # FILE -> tables of $TABLES with rows
  for t in $TABLES; do
    n=$(sqlite3 "$1" "SELECT count(*) FROM $t" 2>/dev/null || echo 0)
    [ "${n:-0}" -gt 0 ] && echo "$t"
  done
  return 0
}
# secs and peak RSS (KiB) of a command: "S KB"; its output goes to $LOG.
# Each conversion writes new files, as a first conversion does: the outputs of a run before are
# removed first (untimed): replacing a file costs its removal too, which a first conversion
# does not pay.
fresh() { rm -f "${1%.prv}".{prv,pcf,row}; }
# The seconds are the shell's clock around /usr/bin/time (which takes the peak RSS), to the
# millisecond: time's own `%e` has hundredths, 14 % of a 10 MB conversion (0.07 s read 2.49 M
# records/s whether it took 65 or 74 ms). They include starting /usr/bin/time (~1 ms here).
timed() {
  local t0 t1 rc=0
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$BENCH/logs/time.tmp" "$@" >"$LOG" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  awk -v a="${t0/,/.}" -v b="${t1/,/.}" -v kb="$(tail -1 "$BENCH/logs/time.tmp")" 'BEGIN{printf "%.3f %d\n", b - a, kb}'
  return $rc
}

{
  echo "## Run of $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  # A tree exported with `git archive` (to benchmark a commit while others edit) names it in .bench-commit.
  if git rev-parse --short HEAD >/dev/null 2>&1; then
    echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml 2>/dev/null || echo ' + uncommitted changes in src/')"
  else
    echo "- commit: $(cat .bench-commit 2>/dev/null || echo unknown) (exported tree)"
  fi
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB RAM, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $(rustc --version); SQLite CLI $(sqlite3 --version | cut -d' ' -f1); nsys2prv $("$BENCH/venv/bin/pip" show nsys2prv | awk '/^Version/{print $2}')"
  echo "- source export: $(basename "$SOURCE"); inputs inflated with prvsight-inflate --target-mb; warm page cache (each input read once before timing)"
  echo
  echo "| input | rows read | records out | prvsight s | records/s | MB/s read | peak RSS MB | plain release build s | plain records/s | one thread s | SQL-sorted path s | SQLite scan s | SQLite sorted scan s | SQLite every column s | prvsight, nsys2prv's job s | nsys2prv s | nsys2prv peak RSS MB | of which shim s | nsys2prv / prvsight (same job) | prvsight metrics s | metrics records/s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$BENCH/results.md.new"

for MB in $SIZES; do
  IN=$BENCH/in/inflated_${MB}mb.sqlite
  [ -f "$IN" ] || "$INFLATE" "$SOURCE" -o "$IN" --target-mb "$MB" 2>"$BENCH/logs/inflate_${MB}.log"
  cat "$IN" >/dev/null
  BYTES=$(stat -c %s "$IN")
  TABS=$(present "$IN")
  ROWS=0
  for t in $TABS; do ROWS=$((ROWS + $(sqlite3 "$IN" "SELECT count(*) FROM $t"))); done

  # Physical floor: SQLite alone reading the same rows, without and with the sort by start that
  # the converter's cursors need (exports have no index).
  SCAN=""; SORT=""; EVERY=""
  for t in $TABS; do
    SCAN+="SELECT count(*), total(start) FROM $t;"
    SORT+="SELECT count(*), total(s) FROM (SELECT start AS s FROM $t ORDER BY start LIMIT -1);"
    # Every column of the row taken out of its record (a test per column that is never true): a
    # floor for any reader that decodes whole rows, as the converter does once per row at least.
    COLS=$(sqlite3 "$IN" "SELECT group_concat('(\"' || name || '\" IS NULL)', '+') FROM pragma_table_info('$t')")
    EVERY+="SELECT count(*) FROM $t WHERE $COLS < 0;"
  done
  LOG=$BENCH/logs/scan_${MB}.log; read -r SCAN_S _ <<<"$(timed sqlite3 -bail "$IN" "PRAGMA temp_store=FILE; $SCAN")"
  LOG=$BENCH/logs/sort_${MB}.log; read -r SORT_S _ <<<"$(timed sqlite3 -bail "$IN" "PRAGMA temp_store=FILE; $SORT")"
  LOG=$BENCH/logs/every_${MB}.log; read -r EVERY_S _ <<<"$(timed sqlite3 -bail "$IN" "$EVERY")"

  # prvsight: fastest of $RUNS runs (largest peak RSS); then the SQL-sorted reference path
  # (--read-order sql: what every conversion did before the sort-free readers), same output.
  P_S=""; P_KB=0
  for _ in $(seq "$RUNS"); do
    LOG=$BENCH/logs/prvsight_${MB}.log
    fresh "$BENCH/out/prvsight_${MB}mb.prv"
    read -r S KB <<<"$(timed "$PRVSIGHT" convert "$IN" -o "$BENCH/out/prvsight_${MB}mb.prv")"
    P_S=$(awk -v a="$P_S" -v b="$S" 'BEGIN{print (a == "" || b < a) ? b : a}'); P_KB=$((KB > P_KB ? KB : P_KB))
  done
  RECORDS=$(sed -n 's/.*(\([0-9]*\) records,.*/\1/p' "$LOG")
  # The plain release build, the same way, same output.
  PLAIN_S=""
  for _ in $(seq "$RUNS"); do
    LOG=$BENCH/logs/prvsight_plain_${MB}.log
    fresh "$BENCH/out/prvsight_plain_${MB}mb.prv"
    read -r S _ <<<"$(timed "$PLAIN" convert "$IN" -o "$BENCH/out/prvsight_plain_${MB}mb.prv")"
    PLAIN_S=$(awk -v a="$PLAIN_S" -v b="$S" 'BEGIN{print (a == "" || b < a) ? b : a}')
  done
  cmp -s "$BENCH/out/prvsight_${MB}mb.prv" "$BENCH/out/prvsight_plain_${MB}mb.prv" || { echo "the profile-guided and plain builds gave different .prv files" >&2; exit 1; }
  rm -f "$BENCH/out/prvsight_plain_${MB}mb".{prv,pcf,row}
  # The same on one thread (--read-ahead off: no second thread, as in the browser), same output.
  LOG=$BENCH/logs/prvsight_one_${MB}.log
  fresh "$BENCH/out/prvsight_one_${MB}mb.prv"
  read -r ONE_S _ <<<"$(timed "$PRVSIGHT" convert "$IN" -o "$BENCH/out/prvsight_one_${MB}mb.prv" --read-ahead off)"
  cmp -s "$BENCH/out/prvsight_${MB}mb.prv" "$BENCH/out/prvsight_one_${MB}mb.prv" || { echo "read-ahead on and off gave different .prv files" >&2; exit 1; }
  LOG=$BENCH/logs/prvsight_sql_${MB}.log
  fresh "$BENCH/out/prvsight_sql_${MB}mb.prv"
  read -r SQL_S _ <<<"$(timed "$PRVSIGHT" convert "$IN" -o "$BENCH/out/prvsight_sql_${MB}mb.prv" --read-order sql)"
  cmp -s "$BENCH/out/prvsight_${MB}mb.prv" "$BENCH/out/prvsight_sql_${MB}mb.prv" || { echo "the two read orders gave different .prv files" >&2; exit 1; }
  rm -f "$BENCH/out/prvsight_${MB}mb".{prv,pcf,row} "$BENCH/out/prvsight_sql_${MB}mb".{prv,pcf,row} "$BENCH/out/prvsight_one_${MB}mb".{prv,pcf,row}
  # The metrics alone (`prvsight metrics`: the same records, no trace written), fastest of $RUNS.
  M_S=""
  for _ in $(seq "$RUNS"); do
    LOG=$BENCH/logs/prvsight_metrics_${MB}.log
    read -r S _ <<<"$(timed "$PRVSIGHT" metrics "$IN")"
    M_S=$(awk -v a="$M_S" -v b="$S" 'BEGIN{print (a == "" || b < a) ? b : a}')
  done

  N_S="-"; N_MB="-"; SHIM_S="-"; RATIO="-"; J_S="-"
  if [[ " $N2P_SIZES " == *" $MB "* ]]; then
    # prvsight doing what nsys2prv does (its families), fastest of $RUNS.
    J_S=""
    for _ in $(seq "$RUNS"); do
      LOG=$BENCH/logs/prvsight_job_${MB}.log
      fresh "$BENCH/out/prvsight_job_${MB}mb.prv"
      read -r S _ <<<"$(timed "$PRVSIGHT" convert -t "$N2P_JOB" "$IN" -o "$BENCH/out/prvsight_job_${MB}mb.prv")"
      J_S=$(awk -v a="$J_S" -v b="$S" 'BEGIN{print (a == "" || b < a) ? b : a}')
    done
    rm -f "$BENCH/out/prvsight_job_${MB}mb".{prv,pcf,row}
    D=$BENCH/n2p_${MB}; rm -rf "$D"; mkdir -p "$D"
    ln -s "$IN" "$D/inflated_${MB}mb.sqlite"
    # The shim alone (what `nsys stats` costs inside the nsys2prv time).
    LOG=$BENCH/logs/shim_${MB}.log
    read -r SHIM_S _ <<<"$(cd "$D" && timed "$SHIM/nsys" stats -r cuda_api_trace --timeunit nsec -f csv -o "$D/shimonly" "$D/inflated_${MB}mb.sqlite")"
    LOG=$BENCH/logs/nsys2prv_${MB}.log
    set +e
    R=$(cd "$D" && PATH=$SHIM:$PATH timed timeout "$N2P_TIMEOUT" "$BENCH/venv/bin/nsys2prv" -t cuda_api_trace,nvtx_pushpop_trace "inflated_${MB}mb.sqlite" out)
    RC=$?
    set -e
    read -r N_S N_KB <<<"$R"
    if [ $RC -eq 0 ] && grep -q "correctly translated" "$LOG"; then
      N_MB=$((N_KB / 1024)); RATIO=$(awk -v a="$N_S" -v b="$J_S" 'BEGIN{printf "%.0f×", a/b}')
    else
      N_S="failed (rc $RC after $N_S s)"; N_MB=$((N_KB / 1024))
    fi
    rm -f "$D"/out.* "$D"/*.csv
  fi
  awk -v mb="$MB" -v bytes="$BYTES" -v rows="$ROWS" -v rec="$RECORDS" -v ps="$P_S" -v pkb="$P_KB" \
      -v plain="$PLAIN_S" -v one="$ONE_S" -v sqls="$SQL_S" -v scan="$SCAN_S" -v sort="$SORT_S" -v every="$EVERY_S" -v js="$J_S" -v ns="$N_S" -v nmb="$N_MB" -v shim="$SHIM_S" -v ratio="$RATIO" -v ms="$M_S" \
    'BEGIN{printf "| %d MB (%.0f MiB) | %d | %d | %.3f | %.2f M | %.1f | %d | %.3f | %.2f M | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s | %.3f | %.2f M |\n",
           mb, bytes/1048576, rows, rec, ps, rec/ps/1e6, bytes/1048576/ps, pkb/1024, plain, rec/plain/1e6, one, sqls, scan, sort, every, js, ns, nmb, shim, ratio, ms, rec/ms/1e6}' \
    >> "$BENCH/results.md.new"
  tail -1 "$BENCH/results.md.new"
done
echo >> "$BENCH/results.md.new"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$BENCH/results.md.new"
cat "$BENCH/results.md.new" >> "$BENCH/results.md"
rm "$BENCH/results.md.new"
echo; echo "results appended to $BENCH/results.md"
