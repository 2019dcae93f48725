"""The layers of the `gates` package hold: imports go one way, from front ends down to the model.

The contract is `[tool.importlinter]` in pyproject.toml (ARCHITECTURE.md, "Layers"),
checked with import-linter, which reads every import statement (those inside functions
too) without importing anything. The second test runs the same contract on a copy of
the package with one violating module added, so a contract that cannot fail shows up.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parents[1]
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    """import-linter on the `gates` package under `root`, with root's pyproject.toml."""
    return subprocess.run([sys.executable, "-c", LINT], cwd=root, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "PYTHONNOUSERSITE": "1"})


def test_gates_layers_are_kept():
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 kept, 0 broken" in run.stdout, run.stdout


VIOLATIONS = {
    "model-imports-frontends": ("gates/model/violation.py", "from gates.frontends.cli import main\n"),
    "history-imports-checks-lazily": ("gates/history/violation.py",
                                      "def late():\n    from gates.checks.registry import GATES\n    return GATES\n"),
    "site-imports-frontends": ("gates/site/violation.py", "import gates.frontends.report_formats\n"),
    "evidence-history-cycle": ("gates/history/violation.py", "from gates.evidence import artifacts\n"),
}


@pytest.mark.parametrize("path,source", VIOLATIONS.values(), ids=VIOLATIONS.keys())
def test_contract_fails_on_an_upward_import(tmp_path, path, source):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "gates", tmp_path / "gates", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / path).write_text(source, encoding="utf-8")
    run = _lint_imports(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "0 kept, 1 broken" in run.stdout, run.stdout
    assert path[:-3].replace("/", ".") in run.stdout, run.stdout
