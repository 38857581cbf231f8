#!/usr/bin/env bash
# A conversion spread over a Slurm cluster: a job array converts the N parts of the inputs
# (`prvsight convert IN… --part K/N`, one array task each), and a job that depends on the whole
# array merges them (`prvsight merge`) into the trace one `prvsight convert IN…` writes.
#
#   scripts/slurm/convert-array.sh -n N -o OUT.prv[.gz] [-m OUT.json] [-d PARTS_DIR]
#       [-s "SBATCH OPTIONS"] [-c "CONVERT OPTIONS"] IN.sqlite...
#
# -n N: parts (array tasks; each part reads every input's header, and only its share's records).
# -o OUT: the merged trace (.prv or .prv.gz, with .pcf and .row beside it); -m OUT.json: the
# metrics report too (`prvsight metrics IN… --json`). -d: where the parts go, on a file system
# every node sees (default: OUT's folder, `OUT.parts/`). -s: options for both sbatch calls
# (e.g. "-p short -t 30"); -c: options for every part's `convert` (e.g. "-t mpi,kernel").
# The inputs are given to every part in the same order. PRVSIGHT names the binary (default:
# `prvsight` on the PATH); SBATCH the submitting command (default `sbatch`; the tests give a
# stand-in). Prints the two job ids.
set -euo pipefail
usage() { sed -n '2,17p' "$0" >&2; exit 2; }
PARTS='' OUT='' METRICS='' DIR='' SBATCH_OPTS='' CONVERT_OPTS=''
while [ $# -gt 0 ]; do
  case $1 in
    -n) PARTS=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -m) METRICS=$2; shift 2 ;;
    -d) DIR=$2; shift 2 ;;
    -s) SBATCH_OPTS=$2; shift 2 ;;
    -c) CONVERT_OPTS=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "convert-array.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ -n "$PARTS" ] && [ -n "$OUT" ] && [ $# -gt 0 ] || usage
[[ $PARTS =~ ^[1-9][0-9]*$ ]] || { echo "convert-array.sh: -n takes a number of parts, not '$PARTS'" >&2; exit 2; }
PRVSIGHT=${PRVSIGHT:-prvsight}
SBATCH=${SBATCH:-sbatch}
DIR=${DIR:-$OUT.parts}
mkdir -p "$DIR"

# Every path absolute: the jobs may start elsewhere.
abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
INPUTS=(); for f in "$@"; do INPUTS+=("$(abs "$f")"); done
DIR=$(abs "$DIR"); OUT=$(abs "$OUT"); [ -z "$METRICS" ] || METRICS=$(abs "$METRICS")

# The commands, quoted for the shell that runs them (`--wrap`).
q() { printf '%q ' "$@"; }
# shellcheck disable=SC2086 # CONVERT_OPTS: several options, split on purpose
CONVERT="$(q "$PRVSIGHT" convert "${INPUTS[@]}" $CONVERT_OPTS) --part \${SLURM_ARRAY_TASK_ID}/$PARTS -o $(printf %q "$DIR")/part-\${SLURM_ARRAY_TASK_ID}.prvpart -q"
PART_FILES=(); for ((k = 1; k <= PARTS; k++)); do PART_FILES+=("$DIR/part-$k.prvpart"); done
MERGE="$(q "$PRVSIGHT" merge "${PART_FILES[@]}" -o "$OUT")"
[ -z "$METRICS" ] || MERGE+=" $(q --metrics "$METRICS")"

# shellcheck disable=SC2086 # SBATCH_OPTS: several options, split on purpose
ARRAY=$($SBATCH --parsable $SBATCH_OPTS --job-name=prvsight-parts --array=1-"$PARTS" \
  --output="$DIR/part-%a.log" --wrap="$CONVERT")
ARRAY=${ARRAY%%;*}
# shellcheck disable=SC2086
MERGE_JOB=$($SBATCH --parsable $SBATCH_OPTS --job-name=prvsight-merge \
  --dependency=afterok:"$ARRAY" --output="$DIR/merge.log" --wrap="$MERGE")
MERGE_JOB=${MERGE_JOB%%;*}
echo "parts: job $ARRAY (array 1-$PARTS, logs in $DIR); merge: job $MERGE_JOB -> $OUT"
