#!/usr/bin/env bash
# The README's demo: on a fresh machine, set up, run the quickstart notebook headless
# with the offline model (no API key, no network), leave the executed notebook and its
# session file in demo/, and print the session tree.
#
# Usage: bash scripts/demo.sh [--no-setup] [OUTDIR]
#   --no-setup  skip scripts/setup.sh (use an environment that is already set up)
#   OUTDIR      where the executed notebook goes (default: demo/, ignored by git)
# DEMO_PYTHON picks the Python whose Jupyter runs it (default: .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

setup=1
if [ "${1:-}" = "--no-setup" ]; then
  setup=0
  shift
fi
out=${1:-demo}

if [ "$setup" = 1 ]; then
  bash scripts/setup.sh --no-browser --no-local-model
fi

PY=${DEMO_PYTHON:-.venv/bin/python}
BIN=$(dirname "$PY")
# The python3 kernel of that environment, not one from ~/.local/share/jupyter.
JUPYTER_PATH="$("$PY" -c 'import sys; print(sys.prefix)')/share/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
export JUPYTER_PATH
mkdir -p "$out"
out=$(cd "$out" && pwd)
notebook="$out/quickstart.ipynb"
cp notebooks/quickstart.ipynb "$notebook"

echo "==> running $notebook headless with the offline model"
# No ANTHROPIC_* variable reaches the kernel, so the offline teaching model answers.
# JPY_SESSION_NAME tells the kernel which notebook it runs, as JupyterLab does, so the
# session is saved beside it as quickstart.chat.jsonl.
for var in $(env | sed -n 's/^\(ANTHROPIC_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$var"; done
JPY_SESSION_NAME="$notebook" "$PY" -m jupyter nbconvert --to notebook --execute --inplace \
  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=120 \
  --ExecutePreprocessor.store_widget_state=False "$notebook"

echo "==> the session tree in $out/quickstart.chat.jsonl"
"$BIN/jupyter-tree-chat" show "$out/quickstart.chat.jsonl"

rel=${out#"$PWD"/}
echo
echo "The executed notebook: $rel/quickstart.ipynb (its session: $rel/quickstart.chat.jsonl)."
echo "Open it in JupyterLab:  $BIN/jupyter lab $rel/quickstart.ipynb"
