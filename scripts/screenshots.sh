#!/usr/bin/env bash
# Remake the pictures in docs/images/ from a real JupyterLab in headless Chromium, run
# with the offline teaching model (scripts/screenshots.py says how). Needs the setup
# with its browser part: bash scripts/setup.sh. Look at the pictures before committing.
#
# Usage: bash scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# No ANTHROPIC_* variable reaches the kernel, so the offline teaching model answers.
for var in $(env | sed -n 's/^\(ANTHROPIC_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$var"; done
exec .venv/bin/python scripts/screenshots.py "$@"
