#!/usr/bin/env bash
# Main job: set up, then run gate-check on this repository's own design records.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
if ! command -v nvidia-smi >/dev/null 2>&1; then
  export TRITON_INTERPRET=1
fi
exec gate-check "$@"
