"""The policy's `contracts`: which of a numeric contract, bitwise anchors and a capture requirement a record must
declare, by the level of the paths it covers, so that G3, G4 and G6 cannot be left not applicable on a hot path."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from gates.model.findings import Status
from gates.model.policy import parse_policy

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "docs/design/base-record.md"
POLICY = """\
schema_version: 1
default_level: L1
rules:
  - paths: ["examplepkg/**"]
    level: {level}
{contracts}"""
CONTRACTS = "contracts:\n  L3: [numeric]\n  L4: [bitwise, capture]\n"


@pytest.fixture
def repo(tmp_path):
    """The examples, with the base record's numeric contract, bitwise anchors and capture requirement taken out."""
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    record = target / RECORD
    text = record.read_text(encoding="utf-8")
    text = re.sub(r"^numeric_contract:\n(?:  .*\n)+", "", text, flags=re.M)
    text = re.sub(r"^bitwise:\n(?:  .*\n)+", "", text, flags=re.M)
    text = text.replace("capture: {required: true, due: C, evidence: null}", "capture: {required: false}")
    record.write_text(text, encoding="utf-8")
    return target


def gates_of(repo: Path, level: str, contracts: str = CONTRACTS) -> dict:
    (repo / ".design-gates" / "policy.yaml").write_text(POLICY.format(level=level, contracts=contracts),
                                                        encoding="utf-8")
    report = check_records([repo / RECORD], repo, gates=["G3", "G4", "G6"])
    assert not report.input_errors, report.input_errors
    return report.records[0].gates


def test_a_record_covering_l4_paths_must_declare_every_contract_the_policy_lists_up_to_l4(repo):
    gates = gates_of(repo, "L4")
    assert {gate: result.status for gate, result in gates.items()} == \
        {"G3": Status.FAIL, "G4": Status.FAIL, "G6": Status.FAIL}
    finding = gates["G3"].findings[0]  # then the record's self-check, which claims n/a, is refused too
    assert finding.message == ("the policy requires a numeric contract of a record that covers L4 paths "
                               "(.design-gates/policy.yaml, contracts); declare numeric_contract (oracle, suite, "
                               "tolerances)")
    assert finding.line == 14  # the record's covers
    assert "declare capture: {required: true, due: C}" in gates["G6"].findings[0].message


def test_a_kind_listed_at_a_lower_level_holds_above_it_and_not_below(repo):
    assert {gate: result.status for gate, result in gates_of(repo, "L3").items()} == \
        {"G3": Status.FAIL, "G4": Status.NOT_APPLICABLE, "G6": Status.NOT_APPLICABLE}
    assert all(result.status is Status.NOT_APPLICABLE for result in gates_of(repo, "L2").values())


def test_without_contracts_in_the_policy_an_undeclared_contract_leaves_its_gate_not_applicable(repo):
    assert all(result.status is Status.NOT_APPLICABLE for result in gates_of(repo, "L4", contracts="").values())


def test_a_declared_contract_is_judged_as_before(repo):
    record = repo / RECORD
    original = (EXAMPLES / RECORD).read_text(encoding="utf-8")
    record.write_text(original, encoding="utf-8")
    assert gates_of(repo, "L4")["G3"].findings == gates_of(repo, "L4", contracts="")["G3"].findings


def test_dropping_a_required_contract_is_a_loosening():
    before = parse_policy(POLICY.format(level="L4", contracts=CONTRACTS))
    after = parse_policy(POLICY.format(level="L4", contracts="contracts:\n  L3: [numeric]\n  L4: [bitwise]\n"))
    assert before.loosenings(after) == ["contracts at L4 no longer require capture"]
    assert after.loosenings(before) == []
