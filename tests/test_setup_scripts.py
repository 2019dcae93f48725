"""The set-up of the two README commands, run against a stand-in Python that records what it is asked.

The main job used to install torch and every test and site dependency before checking
four Markdown files; the test set-up pinned torch without a CPU wheel source; and
`bash scripts/test.sh -q` became `pytest -q -q`, which hides the pass count.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A stand-in for python3 and .venv/bin/python: `-m venv` makes the venv, `-c` answers the
# script's questions (nothing is installed yet; the CPU index is reachable when
# CPU_INDEX_REACHABLE=1; an import succeeds only where PYTHONDONTWRITEBYTECODE is unset, so
# that it writes byte-code), and every call is written to the log, pytest's with a note where
# PYTHONDONTWRITEBYTECODE is set.
FAKE_PYTHON = r"""#!/usr/bin/env bash
note=""
if [ "$1 $2" = "-m pytest" ] && [ -n "${PYTHONDONTWRITEBYTECODE+x}" ]; then note=" (PYTHONDONTWRITEBYTECODE set)"; fi
echo "python $*$note" >> "$FAKE_LOG"
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cp "$0" "$3/bin/python"
  printf 'export PATH="%s/bin:$PATH"\n' "$(cd "$3" && pwd)" > "$3/bin/activate"
  exit 0
fi
if [ "$1" = "-c" ]; then
  case "$2" in
    *urlopen*) [ "${CPU_INDEX_REACHABLE:-0}" = 1 ] ;;
    import\ *) [ -z "${PYTHONDONTWRITEBYTECODE+x}" ] ;;
    *) exit 1 ;;
  esac
  exit
fi
exit 0
"""


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    for name in ("setup.sh", "test.sh"):
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    tools = tmp_path / "tools"
    tools.mkdir()
    for name, text in {"python3": FAKE_PYTHON, "chromium": "#!/bin/sh\n", "fc-list": "#!/bin/sh\necho WenQuanYi\n",
                       "nvidia-smi": "#!/bin/sh\n"}.items():
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    return root, tools


def run(checkout, script: str, *args: str, reachable: bool = False) -> tuple[str, list[str]]:
    root, tools = checkout
    log = root / "calls.log"
    env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}", FAKE_LOG=str(log), PYTHON="python3",
               CPU_INDEX_REACHABLE="1" if reachable else "0", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(["bash", f"scripts/{script}", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr, log.read_text().splitlines()


def test_the_main_job_set_up_installs_the_package_alone(checkout):
    _, calls = run(checkout, "setup.sh")
    installs = [call for call in calls if "pip install" in call]
    assert installs == ["python -m pip install --quiet -e ."]


def test_the_test_set_up_takes_torch_from_the_cpu_index_when_it_is_reachable(checkout):
    output, calls = run(checkout, "setup.sh", "test", reachable=True)
    installs = [call for call in calls if "pip install" in call]
    assert installs == ["python -m pip install --quiet --no-compile --index-url https://download.pytorch.org/whl/cpu "
                        "torch==2.13.0",
                        "python -m pip install --quiet -e .[test]"]
    assert "torch==2.13.0, the CPU build, from the CPU wheel index https://download.pytorch.org/whl/cpu" in output


def test_the_test_set_up_falls_back_to_the_default_index_and_says_so(checkout):
    output, calls = run(checkout, "setup.sh", "test", reachable=False)
    installs = [call for call in calls if "pip install" in call]
    assert installs == ["python -m pip install --quiet --no-compile torch==2.13.0",
                        "python -m pip install --quiet -e .[test]"]
    assert "torch==2.13.0 from the default index (the CPU wheel index" in output and "is not reachable" in output


def test_the_test_set_up_writes_the_byte_code_of_what_the_tests_import_even_where_the_machine_says_not_to(checkout):
    """torch is installed without byte-code; without this import every test process would compile it again."""
    _, calls = run(checkout, "setup.sh", "test")
    imports = [call for call in calls if call.startswith("python -c import torch")]
    assert imports == ["python -c import torch, triton.language, mkdocs, material"]  # run with PYTHONDONTWRITEBYTECODE unset
    assert calls.index(imports[0]) > max(i for i, call in enumerate(calls) if "pip install" in call)


def test_the_test_command_lets_its_processes_share_byte_code(checkout):
    _, calls = run(checkout, "test.sh")
    assert calls[-1].startswith("python -m pytest ") and "PYTHONDONTWRITEBYTECODE set" not in calls[-1]


@pytest.mark.parametrize("args, pytest_args", [
    ((), "-q -n auto --dist loadfile --no-loadscope-reorder -rxX"),
    (("-q",), "-n auto --dist loadfile --no-loadscope-reorder -rxX -q"),
    (("-v", "-k", "g7"), "-n auto --dist loadfile --no-loadscope-reorder -rxX -v -k g7"),
    (("-xq",), "-n auto --dist loadfile --no-loadscope-reorder -rxX -xq"),
    (("-k", "verify"), "-q -n auto --dist loadfile --no-loadscope-reorder -rxX -k verify"),
])
def test_the_test_command_keeps_the_callers_verbosity(checkout, args, pytest_args):
    _, calls = run(checkout, "test.sh", *args)
    assert calls[-1] == f"python -m pytest {pytest_args}"


@pytest.mark.parametrize("args, pytest_args", [
    (("-n", "0"), "-q -rxX -n 0"),
    (("-n3",), "-q -rxX -n3"),
    (("--numprocesses=4",), "-q -rxX --numprocesses=4"),
    (("-p", "no:xdist"), "-q -rxX -p no:xdist"),
])
def test_the_test_command_spreads_over_the_cores_unless_the_caller_chose(checkout, args, pytest_args):
    _, calls = run(checkout, "test.sh", *args)
    assert calls[-1] == f"python -m pytest {pytest_args}"
