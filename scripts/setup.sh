#!/usr/bin/env bash
# Create .venv and install design-gates into it.
#
#   bash scripts/setup.sh        what gate-check needs: the package and its dependencies, no torch (seconds)
#   bash scripts/setup.sh test   also what the tests and the site need: torch's CPU build, then the [test] extra
#
# torch 2.13.0 comes from the CPU wheel index (https://download.pytorch.org/whl/cpu) when that index
# is reachable, so that nothing pulls the multi-GB CUDA build; otherwise from the default index. The
# run says which. Each mode keeps a stamp of what it installed (pyproject.toml and this script) and
# skips its installs when nothing changed since its last run.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-checker}
case "$MODE" in
  checker|test) ;;
  *) echo "usage: bash scripts/setup.sh [test]" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
TORCH="torch==2.13.0"
CPU_INDEX=https://download.pytorch.org/whl/cpu

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.design-gates-installed-$MODE
wanted=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
installed="import importlib.metadata as m; m.version('design-gates')"
[ "$MODE" = test ] && installed="$installed; m.version('torch'); m.version('pytest')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && python -c "$installed" 2>/dev/null; then
  exit 0
fi

if [ "$MODE" = test ]; then
  # --no-compile: pip would byte-compile every module of torch's wheel (about 18 of its 26 s here);
  # the import at the end of this mode compiles only the modules a run imports, once.
  reachable="import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=5)"
  if python -c "$reachable" "$CPU_INDEX" 2>/dev/null \
      && python -m pip install --quiet --no-compile --index-url "$CPU_INDEX" "$TORCH"; then
    echo "setup: $TORCH, the CPU build, from the CPU wheel index $CPU_INDEX"
  else
    python -m pip install --quiet --no-compile "$TORCH"
    echo "setup: $TORCH from the default index (the CPU wheel index $CPU_INDEX is not reachable)"
  fi
  PYTHONWARNINGS=ignore python -m pip install --quiet -e ".[test]"
  # Write the byte-code of what every test process imports (torch is installed without it), even where
  # PYTHONDONTWRITEBYTECODE is set: without it each process compiles torch's modules again (about 1.5 s).
  env -u PYTHONDONTWRITEBYTECODE python -c "import torch, triton.language, mkdocs, material"
else
  PYTHONWARNINGS=ignore python -m pip install --quiet -e .
fi
echo "$wanted" > "$stamp"
