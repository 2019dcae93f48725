#!/usr/bin/env bash
# Test job: set up (Python packages; Debian's chromium and a CJK font for the browser test), then run the tests,
# spread over the machine's cores.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi wenquanyi; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium fonts-wqy-zenhei >/dev/null
  else
    echo "chromium is missing and this user cannot install it: sudo apt-get install chromium fonts-wqy-zenhei" >&2
  fi
fi

bash scripts/setup.sh test
. .venv/bin/activate
# The run starts many Python processes (workers, suites, gate-check, mkdocs): let the first write the
# byte-code of the modules it compiles (the checkout's __pycache__ folders are ignored by git) and the others
# read it, and pytest keep its rewritten test modules, even where the machine sets PYTHONDONTWRITEBYTECODE.
unset PYTHONDONTWRITEBYTECODE
if ! command -v nvidia-smi >/dev/null 2>&1; then
  export TRITON_INTERPRET=1
fi
# -q unless the caller chose a verbosity (-q, -v, -qq, -vv ...): theirs is kept as given.
verbosity=(-q)
for arg in "$@"; do
  if [[ "$arg" =~ ^(--quiet|--verbose|--verbosity=.*|-[A-Za-z]*[qv][A-Za-z]*)$ ]]; then
    verbosity=()
  fi
done
# One worker per core (pytest-xdist), unless the caller chose (-n N, -n 0 for one process, -p no:xdist);
# the tests of one file run in one worker, so a module-scoped fixture (the adoption walk) is built once.
# --no-loadscope-reorder keeps the order of tests/conftest.py (the longest files first) instead of the most tests first.
workers=(-n "${DESIGN_GATES_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder)
for arg in "$@"; do
  if [[ "$arg" =~ ^(-n|--numprocesses(=.*)?|-n[0-9a-z]+|no:xdist)$ ]]; then
    workers=()
  fi
done
exec python -m pytest ${verbosity[@]+"${verbosity[@]}"} ${workers[@]+"${workers[@]}"} -rxX "$@"
