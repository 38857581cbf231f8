#!/usr/bin/env bash
# Builds the page (scripts/build-web.sh) and serves dist/ on http://127.0.0.1:PORT (default
# 8000) for this machine only. "Try with a sample" is on the page.
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-8000}"
scripts/build-web.sh
echo "serve: open http://127.0.0.1:$port/ (Ctrl-C stops)" >&2
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
