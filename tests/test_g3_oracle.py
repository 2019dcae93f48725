"""G3: the numeric contract's oracle names a function that exists.

A contract judged against `no.such.module:nothing` judges against nothing. The oracle is
found in the repository (and must be bound there) or installed where the check runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G3/positive/numeric-within-tolerance.md"


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def g3(root: Path, oracle: str) -> list[str]:
    record = root / RECORD
    text = record.read_text(encoding="utf-8")
    start = text.index("  oracle: ")
    end = text.index("\n", start)
    record.write_text(text[:start] + f"  oracle: {oracle}" + text[end:], encoding="utf-8")
    report = check_records([record], root, gates=["G3"])
    return [f.message for f in report.records[0].gates["G3"].findings if "oracle" in f.message]


@pytest.mark.parametrize("oracle", ["math:fsum", "examplepkg.ops:split_sum", "examplepkg.ops.single_pass_sum"])
def test_an_oracle_that_exists_passes(repo, oracle):
    assert g3(repo, oracle) == []


def test_an_oracle_in_no_module_anywhere_is_refused(repo):
    assert g3(repo, '"no.such.module:nothing"') == [
        "numeric_contract.oracle 'no.such.module:nothing': no module 'no.such.module' in the repository (looked for "
        "no/such/module/__init__.py, no/such/module.py, src/no/such/module/__init__.py, src/no/such/module.py), and "
        "no installed module 'no' either"]


def test_an_oracle_the_repository_module_does_not_bind_is_refused(repo):
    assert g3(repo, "examplepkg.ops:fp64_sum") == [
        "numeric_contract.oracle 'examplepkg.ops:fp64_sum': examplepkg/ops.py binds no 'fp64_sum' at its top level"]


def test_an_oracle_that_is_no_function_reference_is_refused(repo):
    assert g3(repo, '"the fp64 sum"') == [
        "numeric_contract.oracle 'the fp64 sum' does not name a function as 'module:function'"]
