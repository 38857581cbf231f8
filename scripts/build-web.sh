#!/usr/bin/env bash
# Builds the browser converter into dist/, a static site that any static host can serve as is:
#   dist/index.html + modules + worker.js + pkg/ (wasm core, wasm-bindgen glue) + samples/
#   dist/sw.js          offline cache of exactly these files, versioned by their content
#   dist/prvsight.html  the same page as ONE self-contained file (wasm, sample inlined) that
#                       works opened from disk (file://): for USB sticks and air-gapped laptops
# Uses the pinned wasm-bindgen-cli (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --no-browser

echo "build-web: compiling the wasm core" >&2
cargo build --quiet --profile wasm --target wasm32-unknown-unknown --lib
wasm=target/wasm32-unknown-unknown/wasm/prvsight.wasm

rm -rf dist
mkdir -p dist/pkg dist/samples
# no-modules glue: a classic script, because the single-file build must start the worker from a
# blob: URL and Chromium refuses module workers there for file:// pages.
wasm-bindgen --target no-modules --no-typescript --out-dir dist/pkg --out-name prvsight "$wasm"

for f in index.html style.css icon.svg app.js bridge.js ui.js svg.js charts.js analysis.js timeline.js timeline-layout.js worker.js embed.js sw.js EMBED.md; do
  cp "www/$f" "dist/$f"
done
cp www/samples/*.sqlite dist/samples/

node scripts/web-assemble.mjs dist
echo "build-web: dist/ ready ($(du -sh dist | cut -f1)); single file: dist/prvsight.html ($(du -h dist/prvsight.html | cut -f1))" >&2
