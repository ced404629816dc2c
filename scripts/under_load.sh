#!/usr/bin/env bash
# Run the browser suite (every test marked `browser`) with CPU-heavy work beside it,
# several times in a row; every run must pass. The browser tests wait on what the page
# shows, never for a fixed time, and this is how that is checked (TESTING.md).
#
# Usage: bash scripts/under_load.sh [RUNS] [BUSY] [-- extra pytest arguments]
#   RUNS  runs in a row (default 3); the script stops at the first that fails
#   BUSY  CPU-bound processes beside the suite (default 2: one per core on a 2-core box);
#         `stress-ng --cpu BUSY` when installed (apt-get install stress-ng), else that many
#         `python3 -c 'while True: pass'`
# Each run's result and duration go to stdout and test-artifacts/under-load.log.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
busy=${2:-2}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift

mkdir -p test-artifacts
log=test-artifacts/under-load.log
load_pids=()
stop_load() {
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_load EXIT

if command -v stress-ng >/dev/null 2>&1; then
  load="stress-ng --cpu $busy"
  stress-ng --cpu "$busy" --quiet &
  load_pids+=($!)
else
  load="$busy x python3 -c 'while True: pass'"
  for _ in $(seq "$busy"); do
    python3 -c 'while True: pass' &
    load_pids+=($!)
  done
fi

say() { echo "$*" | tee -a "$log"; }
say "== $(date -u +%FT%TZ) browser suite x$runs beside: $load ($(nproc) cores)"
for run in $(seq "$runs"); do
  started=$(date +%s)
  set +e
  .venv/bin/pytest -p no:cacheprovider -q -m browser tests/ "$@" 2>&1 | tee "test-artifacts/under-load-$run.txt"
  status=${PIPESTATUS[0]}
  set -e
  summary=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "test-artifacts/under-load-$run.txt" | tail -1)
  say "run $run/$runs: exit $status in $(($(date +%s) - started)) s: $summary"
  [ "$status" = 0 ] || exit "$status"
done
say "all $runs runs passed"
