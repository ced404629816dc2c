#!/usr/bin/env bash
# Set up everything jupyter-tree-chat needs on a fresh machine, idempotently:
# a virtualenv in .venv with the package (editable, front end built) and its test tools,
# the python3 kernelspec pointing at that virtualenv, Debian's Chromium for browser tests, and
# the reference MCP servers from npm that the tests run (tests/mcp_servers, by its lock file).
# Usage: bash scripts/setup.sh [--no-browser]
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=1
[ "${1:-}" = "--no-browser" ] && want_browser=0

# a CJK font too, or the Chinese UI's screenshots show boxes where the characters are
if [ "$want_browser" = 1 ] && { ! command -v chromium >/dev/null 2>&1 || [ ! -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; }; then
  echo "==> installing Debian's chromium and a Chinese font (browser tests)"
  packages="chromium chromium-driver fonts-wqy-microhei"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PY" -m venv .venv
fi
echo "==> installing jupyter-tree-chat and its test tools into .venv"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev]"
.venv/bin/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (jupyter-tree-chat)" >/dev/null

# the MCP servers the tests run, exactly as locked; again only when the lock file changed
if [ ! -f tests/mcp_servers/node_modules/.package-lock.json ] \
  || [ tests/mcp_servers/package-lock.json -nt tests/mcp_servers/node_modules/.package-lock.json ]; then
  echo "==> installing the reference MCP servers (npm ci in tests/mcp_servers)"
  (cd tests/mcp_servers && npm ci --no-audit --no-fund --loglevel=error)
fi
