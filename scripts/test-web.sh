#!/usr/bin/env bash
# The browser side's tests (scripts/test.sh calls this):
#   1. native CLI references (target/web-ref/) that the wasm outputs must equal byte for byte;
#   2. wasm-bindgen tests in Node (tests/wasm_api/) and in headless Chromium, in a dedicated
#      worker (tests/wasm_worker.rs: the Blob VFS);
#   3. the site build (scripts/build-web.sh) and the end-to-end tests in headless Chromium
#      (e2e/*.test.mjs, node --test), screenshots in e2e/artifacts/.
# WEB_TESTS=wasm or WEB_TESTS=e2e runs one half.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
what="${WEB_TESTS:-all}"

echo "== native references for the wasm tests" >&2
cargo build --quiet --release --bin prvsight
cli="$PWD/target/release/prvsight"
ref="$PWD/target/web-ref"
rm -rf "$ref"
mkdir -p "$ref"
# Inputs are named as the page names them (file name only): run from their folder.
(cd www/samples && $cli convert -q testcuda_report1.sqlite -o "$ref/testcuda_report1.prv" &&
  $cli convert -q testcuda_report1.sqlite -t kernel -o "$ref/testcuda_report1.kernel.prv" &&
  $cli convert -q testcuda_report1.sqlite -o "$ref/testcuda_report1.json" &&
  $cli convert -q testcuda_report1.sqlite --window 1.4s..1.6s -o "$ref/testcuda_report1.window.prv" &&
  $cli timeline testcuda_report1.sqlite --view kernels --width 100 --json >"$ref/testcuda_report1.timeline.json")
shared=../shared/traces
if [ -d "$shared" ]; then
  (cd "$shared/generated/mpi4" && $cli convert -q rank0.sqlite rank1.sqlite rank2.sqlite rank3.sqlite -o "$ref/mpi4.prv")
  for f in "$shared"/*.sqlite; do
    n=$(basename "$f" .sqlite)
    # An export the CLI refuses must be refused with the same message in wasm.
    (cd "$shared" && $cli convert -q "$n.sqlite" -o "$ref/$n.prv" 2>"$ref/$n.err") || rm -f "$ref/$n.prv" "$ref/$n.pcf" "$ref/$n.row"
    echo "$n" >>"$ref/LIST"
  done
else
  echo "SKIP: $shared is not present; wasm tests compare the shipped sample only" >&2
fi

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
if [ "$what" != e2e ]; then
  echo "== wasm tests in Node" >&2
  cargo test --target wasm32-unknown-unknown --test wasm_api

  echo "== wasm tests in headless Chromium (dedicated worker)" >&2
  profile=$(mktemp -d)
  trap 'rm -rf "$profile"' EXIT
  cat >"$profile/webdriver.json" <<JSON
{ "goog:chromeOptions": { "binary": "/usr/bin/chromium",
  "args": ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--user-data-dir=$profile/chrome"] } }
JSON
  CHROMEDRIVER=/usr/bin/chromedriver WASM_BINDGEN_USE_BROWSER=1 WASM_BINDGEN_USE_DEDICATED_WORKER=1 \
    WASM_BINDGEN_TEST_WEBDRIVER_JSON="$profile/webdriver.json" \
    cargo test --target wasm32-unknown-unknown --test wasm_worker
fi

if [ "$what" != wasm ]; then
  echo "== site build and end-to-end tests in headless Chromium" >&2
  scripts/build-web.sh
  (cd e2e && node --test --test-concurrency=1 --test-reporter=spec)
fi
