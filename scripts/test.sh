#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this). Installs what it needs, quietly when
# it is already there: the wasm target and toolchain pieces (scripts/setup.sh), then runs
#   1. the native tests (unit, integration, golden, real exports in ../shared when present;
#      BSC's pertalde checks every trace, and BSC's paramedir too where PARAMEDIR names one),
#   2. a wasm32 build of the library, as the page ships it (profile wasm; the site build reuses it),
#   3. the wasm and browser end-to-end tests (scripts/test-web.sh),
#   4. the CLI built with profile-guided optimisation (scripts/build-cli.sh), whose traces must
#      be the plain release build's bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x scripts/setup.sh ]; then
  scripts/setup.sh
else
  rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || true
fi

echo "== native tests"
# tests/independent.rs checks every trace with BSC's pertalde, installed by setup.sh.
PRVSIGHT_PTD="$PWD/target/ptd-venv/bin/ptd" cargo test --release --all-targets

echo "== wasm32 build of the library"
cargo build --profile wasm --target wasm32-unknown-unknown --lib

if [ -x scripts/test-web.sh ]; then
  echo "== wasm and browser tests"
  scripts/test-web.sh
fi

echo "== the profile-guided CLI (scripts/build-cli.sh) against the plain release build"
pgo=$(scripts/build-cli.sh)
cargo build --quiet --release --bin prvsight
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for input in www/samples/testcuda_report1.sqlite target/pgo-gen/training/ddp4.sqlite target/pgo-gen/training/gpu_metrics.sqlite; do
  "$pgo" convert "$input" -o "$out/pgo.prv" -q
  target/release/prvsight convert "$input" -o "$out/plain.prv" -q
  for ext in prv pcf row; do
    cmp "$out/pgo.$ext" "$out/plain.$ext" || { echo "the profile-guided CLI wrote a different .$ext for $input" >&2; exit 1; }
  done
done
echo "same traces from both builds"
