#!/usr/bin/env bash
# The native CLI built with profile-guided optimisation (PGO): an instrumented build converts
# the repository's own inputs (the bundled sample and the built-in synthetic scenarios), LLVM
# merges the profile those runs wrote, and the release build is made again with it: the machine
# code laid out and inlined where those runs spent their time (docs/PERFORMANCE.md, "Today's
# numbers": faster than `cargo build --release`). Same source, same outputs (checked
# below on the training inputs); nothing from ../shared is needed.
#
#   scripts/build-cli.sh          # builds, then prints the binary's path (target/pgo/release/prvsight)
#
# Needs rustup's llvm-tools component (the profile's format is the compiler's own LLVM): added
# here when missing, as scripts/setup.sh adds what else the project needs. Two release builds
# (~2 min each on 2 cores, in target/pgo-gen and target/pgo, apart from target/release).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { echo "build-cli: $*" >&2; }

installed=$(rustup component list --installed 2>/dev/null || true)
if ! grep -q '^llvm-tools' <<<"$installed"; then
  say "adding rustup's llvm-tools component (llvm-profdata)"
  rustup component add llvm-tools-preview >/dev/null 2>&1 || rustup component add llvm-tools >/dev/null
fi
PROFDATA="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
[ -x "$PROFDATA" ] || { say "no llvm-profdata at $PROFDATA"; exit 1; }

GEN=$ROOT/target/pgo-gen
USE=$ROOT/target/pgo
PROFILES=$GEN/profiles
WORK=$GEN/training
rm -rf "$PROFILES" "$WORK"
mkdir -p "$PROFILES" "$WORK"

say "instrumented build"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$PROFILES" CARGO_TARGET_DIR=$GEN \
  cargo build --release --quiet --bin prvsight
# Build scripts run instrumented during the build and leave profiles of their own.
rm -f "$PROFILES"/*.profraw

say "training runs"
BIN=$GEN/release/prvsight
SAMPLE=$ROOT/www/samples/testcuda_report1.sqlite
# The synthetic scenarios reach what the sample does not: NCCL, several GPUs and processes,
# CUDA graphs, GPU metrics (src/synth).
SCENARIOS="ddp4 zero3 pipeline4 graphs graph_nodes gpu_metrics"
for s in $SCENARIOS; do
  "$BIN" synth "$s" -o "$WORK/$s.sqlite" >"$WORK/synth.log" 2>&1 || { cat "$WORK/synth.log" >&2; exit 1; }
done
# Each training input converted as the CLI is used: one trace (on two threads, and on one), the
# metrics, the bundle (gzip); the trace checked.
train() { # NAME INPUT...
  local name=$1; shift
  "$BIN" convert "$@" -o "$WORK/$name.prv" -q
  "$BIN" convert "$@" -o "$WORK/$name-one.prv" -q --read-ahead off
  "$BIN" metrics "$@" >/dev/null
  "$BIN" bundle -q "$@" -o "$WORK/$name.zip"
  "$BIN" check "$WORK/$name.prv" >/dev/null
}
train sample "$SAMPLE"
for s in $SCENARIOS; do train "$s" "$WORK/$s.sqlite"; done
# Several exports as the ranks of one trace.
"$BIN" convert "$WORK/zero3.sqlite" "$WORK/gpu_metrics.sqlite" -o "$WORK/ranks.prv" -q
"$BIN" info "$SAMPLE" >/dev/null
"$PROFDATA" merge -o "$GEN/prvsight.profdata" "$PROFILES"

say "optimised build"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$GEN/prvsight.profdata" CARGO_TARGET_DIR=$USE \
  cargo build --release --quiet --bin prvsight
OUT=$USE/release/prvsight

# Same outputs as the instrumented build gave (that build has no profile to follow).
for name in sample $SCENARIOS; do
  input=$SAMPLE
  [ "$name" = sample ] || input=$WORK/$name.sqlite
  "$OUT" convert "$input" -o "$WORK/$name-check.prv" -q
  for ext in prv pcf row; do
    cmp -s "$WORK/$name.$ext" "$WORK/$name-check.$ext" ||
      { say "the optimised build wrote a different $name.$ext"; exit 1; }
  done
done
echo "$OUT"
