"""G2 Unknowns and decisions: open questions have an owner stage and get closed.

Each unknown names the stage that closes it (`closes_at`); once the record has
reached that stage it must be `closed` with at least one declared, pinned, fresh
evidence artifact. A closed unknown always names its evidence. Each reviewer
question carries a recommendation; from stage B on (or once the record is
approved) every question carries a decision, and the record itself is approved
(a draft or in-review record cannot be past stage A).

On a `--base` run the history checks judge a single-pr record that the change brings
(`gates.history.prerequisites`): approved at head, every question decided. This gate
leaves those two findings to them when the record it reads is the head's, so each
problem is reported once.
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
    single_pr_judged_by_change = _single_pr_judged_by_change(record, ctx)
    not_approved = record.record_status in ("draft", "in-review")
    if stage_at_least(stage, "B") and not_approved and not single_pr_judged_by_change:
        profile = ctx.profile_of(record)
        if profile is not None and profile.name == "single-pr":
            add(("record_status",), f"the record is {record.record_status}: a single-pr change merges with its "
                "record approved, so get the design reviewed and approved in its pull request before it merges")
        else:
            add(("record_status",), f"the series is at stage {stage}, but the record is {record.record_status}: "
                "code stages start only after the design record is approved")
    decisions_due = (stage_at_least(stage, "B") or record.record_status == "approved") and not single_pr_judged_by_change
    for index, question in enumerate(record.get("questions", default=[]) or []):
        qid = question.get("id")
        recommendation = question.get("recommendation")
        if not isinstance(recommendation, str) or not recommendation.strip():
            add(("questions", index, "recommendation"), f"question {qid} has no recommendation")
        if decisions_due and question.get("decision") is None:
            why = f"the record is at stage {stage}" if stage_at_least(stage, "B") else "the record is approved"
            add(("questions", index, "decision"), f"question {qid} has no decision, and {why}")
    return result_from_findings(GATE, findings)


def _single_pr_judged_by_change(record: Record, ctx: GateContext) -> bool:
    """Whether the history checks of this `--base` run judge `record`'s approval and decisions.

    They do for a single-pr record the change brings to a stage, when the record read
    here (the working tree) is the head's front matter unchanged.
    """
    profile = ctx.profile_of(record)
    if ctx.change is None or profile is None or profile.name != "single-pr":
        return False
    from gates.history.context import claims

    return any(change.rel_path == record.rel_path and change.head_front_matter == record.front_matter
               for change, _ in claims(ctx.change))
