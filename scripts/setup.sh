#!/usr/bin/env bash
# Installs what building and testing prvsight needs, on Debian 12 with rustup; quiet when it is
# all there already, so scripts can call it every time.
#   - Rust target wasm32-unknown-unknown
#   - clang + llvm (sqlite-wasm-rs compiles SQLite's C for wasm32 with clang)
#   - chromium + chromium-driver (browser tests), unzip (bundle checks), node + npm (e2e)
#   - wasm-bindgen-cli, exactly the version of the wasm-bindgen crate in Cargo.lock
#   - e2e/node_modules (playwright-core, pinned in e2e/package-lock.json)
# Options: --no-browser skips chromium/chromium-driver and the e2e packages.
set -euo pipefail
cd "$(dirname "$0")/.."

browser=1
for a in "$@"; do
  case "$a" in
    --no-browser) browser=0 ;;
    *) echo "setup.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

say() { echo "setup: $*" >&2; }

# Rust wasm target.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown >/dev/null
fi

# Debian packages, each checked by the command it provides (node may come from elsewhere, e.g.
# NodeSource, whose nodejs package brings npm itself); installed only when missing.
want=("clang:clang" "llvm:llvm-ar" "unzip:unzip" "nodejs:node" "npm:npm")
[ "$browser" = 1 ] && want+=("chromium:chromium" "chromium-driver:chromedriver")
missing=()
for pc in "${want[@]}"; do
  command -v "${pc#*:}" >/dev/null 2>&1 || missing+=("${pc%%:*}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# wasm-bindgen-cli must equal the wasm-bindgen crate version (the generated glue and the module
# must agree). Not --locked: its lockfile pins a crate missing from the index (wasm-toolchain.md).
need=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ -n "$need" ] && [ "$have" != "$need" ]; then
  say "installing wasm-bindgen-cli $need (about 9 minutes on 2 cores)"
  cargo install -q wasm-bindgen-cli --version "$need" --force
fi

# pertalde (BSC's Paraver trace checker, PyPI): tests/independent.rs runs its `ptd comprovar -e`
# on our traces. Its wheel (Python 3.11 only) carries the `ptd` program itself; where no
# 3.11 venv can take it, the program is taken from the wheel.
PERTALDE=0.1.5
ptd=target/ptd-venv/bin/ptd
if [ ! -x "$ptd" ]; then
  say "installing pertalde $PERTALDE into target/ptd-venv"
  if ! python3 -c 'import ensurepip' 2>/dev/null; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get install -y -qq --no-install-recommends python3-venv python3-pip >/dev/null
  fi
  mkdir -p target
  if ! { python3 -m venv target/ptd-venv && target/ptd-venv/bin/pip install -q "pertalde==$PERTALDE"; } >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux_2_28_x86_64 -d "$tmp" "pertalde==$PERTALDE"
    mkdir -p target/ptd-venv/bin
    unzip -q -o -j "$tmp"/pertalde-*.whl "pertalde-$PERTALDE.data/scripts/ptd" -d target/ptd-venv/bin
    chmod +x "$ptd"
    rm -rf "$tmp"
  fi
fi

# End-to-end test packages.
if [ "$browser" = 1 ] && [ ! -d e2e/node_modules/playwright-core ]; then
  say "installing the e2e packages"
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
exit 0
