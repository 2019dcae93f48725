"""G1 declared not applicable: for a change that is not performance work, never for one that is."""

from __future__ import annotations

from gates.checks import g1_diagnosis
from gates.checks.context import GateContext
from gates.model.findings import Status
from gates.model.record import parse_record
from gates.model.schemas import validate
from gitrepo_builder import record_text

REASON = "a correctness fix: masked loads past visible_tokens; nothing gets faster or slower"


def _record(tmp_path, *, evidence=(), **extra):
    extra = {"unknowns": [], "claim_level": "kernel", "independence": {"defect": True, "note": "bug fix"},
             "self_check": {f"G{n}": "n/a" for n in range(9)}, **extra}
    return parse_record(record_text("mask-fix", evidence=evidence, extra=extra), "docs/design/mask-fix.md", tmp_path)


def test_a_change_that_is_not_performance_work_may_declare_g1_not_applicable(tmp_path):
    record = _record(tmp_path, diagnosis={"not_applicable": REASON})
    assert validate("record", record.front_matter) == []
    result = g1_diagnosis.check(record, GateContext(tmp_path))
    assert result.status == Status.NOT_APPLICABLE and result.findings == []


def test_the_declaration_is_refused_for_a_record_with_profile_evidence(tmp_path):
    record = _record(tmp_path, evidence=["docs/evidence/ncu-mask.json"], diagnosis={"not_applicable": REASON})
    result = g1_diagnosis.check(record, GateContext(tmp_path))
    assert result.status == Status.FAIL
    assert result.findings[0].line == record.line_of("diagnosis", "not_applicable")
    assert "declares performance evidence (ncu-mask)" in result.findings[0].message


def test_without_the_declaration_g1_asks_for_a_diagnosis(tmp_path):
    result = g1_diagnosis.check(_record(tmp_path), GateContext(tmp_path))
    assert result.status == Status.FAIL
    assert "§1 cites no profile, benchmark or numeric artifact" in result.findings[0].message


def test_a_blank_reason_does_not_match_the_schema(tmp_path):
    record = _record(tmp_path, diagnosis={"not_applicable": "   "})
    assert [e.path for e in validate("record", record.front_matter)] == [("diagnosis", "not_applicable")]
