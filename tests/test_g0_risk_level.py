"""G0: a record's `risk` is at least the policy's level of every file its `covers` matches.

Reviewers read the level in the record's header and pull-request description, so a record that
declares itself below the level of the code it governs is reported (a warning: records approved
under an understated level keep passing until they are next changed), and one at or above the
level gets nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G0/positive/form-complete-en.md"

POLICY = """\
schema_version: 1
default_level: L1
rules:
  - paths: ["examplepkg/**"]
    level: L4
    reason: shared decode-attention hot path
"""


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".design-gates").mkdir(exist_ok=True)
    (root / ".design-gates" / "policy.yaml").write_text(POLICY, encoding="utf-8")
    return root


def g0(root: Path, risk: str) -> list[str]:
    record = root / RECORD
    record.write_text(record.read_text(encoding="utf-8").replace("risk: L3", f"risk: {risk}", 1), encoding="utf-8")
    report = check_records([record], root, gates=["G0"])
    return [f"{f.severity}: {f.message}" for f in report.records[0].gates["G0"].findings]


def test_a_risk_below_the_policy_level_of_a_covered_file_is_refused(repo):
    (message,) = g0(repo, "L3")
    assert message.startswith("warning: risk L3 is below L4, the policy's level of examplepkg/")
    assert message.endswith("(shared decode-attention hot path), which covers 'examplepkg/**' matches: raise risk "
                            "to L4")


def test_a_risk_at_the_policy_level_passes(repo):
    assert g0(repo, "L4") == []


def test_without_a_policy_any_risk_passes(repo):
    (repo / ".design-gates" / "policy.yaml").unlink()
    assert g0(repo, "L1") == []
