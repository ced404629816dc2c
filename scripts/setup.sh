#!/usr/bin/env bash
# Set up everything jupyter-tree-chat needs on a fresh machine, idempotently:
# a virtualenv in .venv with the package (editable, front end built) and its test tools,
# the python3 kernelspec pointing at that virtualenv, Debian's Chromium for browser tests,
# the real local model the tests ask (llama.cpp's llama-server, built once per machine
# into ~/.cache/jupyter-tree-chat, and SmolLM2-135M: jupyter_tree_chat/cli/local_model.py),
# and the reference MCP servers from npm that the tests run (tests/mcp_servers, by its lock
# file).
# Usage: bash scripts/setup.sh [--no-browser] [--no-local-model]
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=1
want_local_model=1
for arg in "$@"; do
  case "$arg" in
    --no-browser) want_browser=0 ;;
    --no-local-model) want_local_model=0 ;;
    *) echo "setup.sh: unknown option $arg (--no-browser, --no-local-model)" >&2; exit 2 ;;
  esac
done

apt_install() {
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  fi
}

# a CJK font too, or the Chinese UI's screenshots show boxes where the characters are, and
# an emoji font for the grades' thumbs (👍/👎) in the docs' pictures
if [ "$want_browser" = 1 ] && { ! command -v chromium >/dev/null 2>&1 || [ ! -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || [ ! -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ]; }; then
  echo "==> installing Debian's chromium, a Chinese font and an emoji font (browser tests)"
  apt_install chromium chromium-driver fonts-wqy-microhei fonts-noto-color-emoji
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PY" -m venv .venv
fi
echo "==> installing jupyter-tree-chat and its test tools into .venv"
.venv/bin/python -m pip install -q --upgrade pip

# The local model: building llama-server takes 6-8 minutes on 2 cores the first time, so
# it runs in the background while the packages install. local_model.py needs only the
# standard library, so it runs as a plain script before the package is installed; with
# both parts cached it returns at once.
if [ "$want_local_model" = 1 ]; then
  if ! command -v llama-server >/dev/null 2>&1 && { ! command -v cmake >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; }; then
    echo "==> installing cmake and a C++ compiler (to build llama-server)"
    apt_install cmake build-essential
  fi
  echo "==> preparing the local model in the background (llama-server and SmolLM2-135M)"
  mkdir -p .venv/log
  local_model_log=.venv/log/local-model.log
  PYTHONPATH="$PWD" .venv/bin/python jupyter_tree_chat/cli/local_model.py >"$local_model_log" 2>&1 &
  local_model_pid=$!
fi

.venv/bin/python -m pip install -q -e ".[dev]"
.venv/bin/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (jupyter-tree-chat)" >/dev/null

# the MCP servers the tests run, exactly as locked; again only when the lock file changed
if [ ! -f tests/mcp_servers/node_modules/.package-lock.json ] \
  || [ tests/mcp_servers/package-lock.json -nt tests/mcp_servers/node_modules/.package-lock.json ]; then
  echo "==> installing the reference MCP servers (npm ci in tests/mcp_servers)"
  (cd tests/mcp_servers && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ "$want_local_model" = 1 ]; then
  echo "==> waiting for the local model (its progress: $local_model_log)"
  if ! wait "$local_model_pid"; then
    cat "$local_model_log" >&2
    echo "setup.sh: preparing the local model failed (above); the tests of the real model need it" >&2
    exit 1
  fi
  sed 's/^/    /' "$local_model_log"
fi
