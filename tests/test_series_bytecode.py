"""A change that commits compiled Python bytecode is refused: it runs instead of the source the evidence binds."""

from __future__ import annotations

import pytest

from gates.history.compiled_code import is_bytecode
from gitrepo_builder import ADA, seeded_repo


@pytest.fixture()
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def bytecode_findings(findings):
    return [f for f in findings if f.gate == "G0" and "compiled Python bytecode" in f.message]


def test_bytecode_beside_a_kernel_is_a_finding(repo):
    repo.branch("speedup")
    repo.write("kernels/decode_attention/__pycache__/api.cpython-311.pyc", b"\x00\x01unchecked-hash bytecode")
    repo.git("add", "-f", "kernels/decode_attention/__pycache__/api.cpython-311.pyc")
    repo.commit("Speed up imports", who=ADA)
    found = bytecode_findings(repo.check())
    assert [f.path for f in found] == ["kernels/decode_attention/__pycache__/api.cpython-311.pyc"]


def test_removing_committed_bytecode_is_not_a_finding(repo):
    repo.write("tools/legacy.pyc", b"\x00old")
    repo.commit("legacy", who=ADA)
    repo.branch("cleanup")
    repo.delete("tools/legacy.pyc")
    repo.commit("Remove bytecode", who=ADA)
    assert bytecode_findings(repo.check()) == []


@pytest.mark.parametrize("path, compiled", [
    ("pkg/__pycache__/ops.cpython-311.pyc", True),
    ("pkg/__pycache__/notes.txt", True),
    ("pkg/ops.pyc", True),
    ("pkg/ops.PYO", True),
    ("pkg/ops.py", False),
    ("pkg/pycache_notes.md", False),
])
def test_what_counts_as_bytecode(path, compiled):
    assert is_bytecode(path) is compiled
