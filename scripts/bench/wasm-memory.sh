#!/usr/bin/env bash
# The browser core's memory over a conversion, measured in Node (docs/PERFORMANCE.md):
#   scripts/bench/wasm-memory.sh INPUT.sqlite [INPUT.sqlite ...]
# Builds the wasm core as the site does (profile wasm), generates Node glue for it with the
# pinned wasm-bindgen into $BENCH_DIR/wasm-node (never into the repository), and runs
# wasm-memory.cjs on each input: a line each time the linear memory grows, then the peak.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: scripts/bench/wasm-memory.sh INPUT.sqlite ..." >&2; exit 2; }
scripts/setup.sh --no-browser
glue=${BENCH_DIR:-/tmp/prvsight-bench}/wasm-node
cargo build --quiet --profile wasm --target wasm32-unknown-unknown --lib
rm -rf "$glue"
wasm-bindgen --target nodejs --no-typescript --out-dir "$glue" --out-name prvsight \
  target/wasm32-unknown-unknown/wasm/prvsight.wasm
# The glue keeps the instance's exports private; the memory is what this script is about.
echo 'exports.__memory = () => wasm.memory;' >>"$glue/prvsight.js"
for f in "$@"; do
  echo "== $f"
  # The input is held by Node as well: give its heap room for 1 GB files.
  node --max-old-space-size=8192 scripts/bench/wasm-memory.cjs "$glue" "$f"
done
