"""GitPython stays behind one adapter: `gates/history/git_repo.py` is the only module that imports it."""

from __future__ import annotations

import ast
from pathlib import Path

GATES = Path(__file__).resolve().parents[1] / "gates"


def _imports_git(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "git" or a.name.startswith("git.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "git":
            return True
    return False


def test_only_the_adapter_imports_gitpython():
    importers = sorted(p.relative_to(GATES.parent).as_posix() for p in GATES.rglob("*.py") if _imports_git(p))
    assert importers == ["gates/history/git_repo.py"]
