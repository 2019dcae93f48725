"""G2 Unknowns and decisions: open questions have an owner stage and get closed.

Each unknown names the stage that closes it (`closes_at`); once the record has
reached that stage it must be `closed` with at least one declared, pinned, fresh
evidence artifact. A closed unknown always names its evidence. Each reviewer
question carries a recommendation; from stage B on (or once the record is
approved) every question carries a decision, and the record itself is approved
(a draft or in-review record cannot be past stage A).
"""

from __future__ import annotations

from gates.checks.context import GateContext, stage_at_least
from gates.checks.evidence_refs import checked_artifact, evidence_by_id
from gates.model.findings import Finding, GateResult, adder_at_keys, result_from_findings
from gates.model.record import Record

GATE = "G2"


def check(record: Record, ctx: GateContext) -> GateResult:
    findings: list[Finding] = []
    stage = ctx.effective_stage(record)
    declared = evidence_by_id(record)
    add = adder_at_keys(GATE, record, findings)

    checked: set[str] = set()
    for index, unknown in enumerate(record.get("unknowns", default=[]) or []):
        uid, closes_at, status = unknown.get("id"), unknown.get("closes_at"), unknown.get("status")
        refs = unknown.get("evidence") or []
        if status == "open" and stage_at_least(stage, closes_at):
            add(("unknowns", index, "status"), f"unknown {uid} closes at stage {closes_at}; the record is at stage "
                f"{stage}, so it must be closed with evidence")
            continue
        if status == "closed":
            if not refs:
                add(("unknowns", index, "status"), f"unknown {uid} is closed but names no evidence")
            for position, ref in enumerate(refs):
                entry = declared.get(ref)
                if entry is None:
                    add(("unknowns", index, "evidence", position), f"unknown {uid}: evidence {ref!r} is not declared")
                elif ref not in checked:
                    checked.add(ref)
                    _, problems = checked_artifact(record, ctx, entry, GATE)
                    findings.extend(problems)
    if stage_at_least(stage, "B") and record.record_status in ("draft", "in-review"):
        profile = ctx.profile_of(record)
        if profile is not None and profile.name == "single-pr":
            add(("record_status",), f"the record is {record.record_status}: a single-pr change merges with its "
                "record approved, so get the design reviewed and approved in its pull request before it merges")
        else:
            add(("record_status",), f"the series is at stage {stage}, but the record is {record.record_status}: "
                "code stages start only after the design record is approved")
    decisions_due = stage_at_least(stage, "B") or record.record_status == "approved"
    for index, question in enumerate(record.get("questions", default=[]) or []):
        qid = question.get("id")
        recommendation = question.get("recommendation")
        if not isinstance(recommendation, str) or not recommendation.strip():
            add(("questions", index, "recommendation"), f"question {qid} has no recommendation")
        if decisions_due and question.get("decision") is None:
            why = f"the record is at stage {stage}" if stage_at_least(stage, "B") else "the record is approved"
            add(("questions", index, "decision"), f"question {qid} has no decision, and {why}")
    return result_from_findings(GATE, findings)
