#!/usr/bin/env bash
# Main job: set up, then run gate-check on this repository's own design records and
# its merged history (each first-parent commit after the policy's
# history.enforce_from, judged as its own change; without enforce_from the history
# part says it is not configured and passes). With --base the run checks that change
# instead of the history.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
if ! command -v nvidia-smi >/dev/null 2>&1; then
  export TRITON_INTERPRET=1
fi
history=(--history)
for arg in "$@"; do
  case "$arg" in
    --base|--base=*|--head|--head=*) history=() ;;
  esac
done
exec gate-check ${history[@]+"${history[@]}"} "$@"
