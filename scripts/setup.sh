#!/usr/bin/env bash
# Create .venv and install design-gates with everything its checks and tests need.
# torch is pinned first to the CPU build so that nothing pulls a multi-GB CUDA build.
# A stamp of what was installed (pyproject.toml and this script) skips the installs
# when nothing changed since the last run.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.design-gates-installed
wanted=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && python -c "import importlib.metadata as m; m.version('design-gates'); m.version('torch')" 2>/dev/null; then
  exit 0
fi
python -m pip install --quiet --upgrade pip
python -m pip install --quiet "torch==2.13.0"
PYTHONWARNINGS=ignore python -m pip install --quiet -e ".[test]"
echo "$wanted" > "$stamp"
