"""G8 Independence: someone other than the authors approves.

A reviewer is independent when neither their name nor their email matches an
author's (case-insensitive, surrounding spaces ignored). An approved record, or
one whose series has moved past stage A, needs at least one independent reviewer
whose decision is `approved`; a record in review needs at least one independent
reviewer assigned. An author's own approval is not a review and is reported. A
record that declares its own independence defect (`independence.defect: true`)
cannot be approved.
"""

from __future__ import annotations

from gates.context import GateContext, stage_at_least
from gates.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.record import Record

GATE = "G8"
CLOSED = {"rejected", "withdrawn"}


def _norm(value) -> str:
    return " ".join(str(value or "").split()).casefold()


def is_author(person: dict, authors: list[dict]) -> bool:
    name, email = _norm(person.get("name")), _norm(person.get("email"))
    for author in authors:
        if (name and name == _norm(author.get("name"))) or (email and email == _norm(author.get("email"))):
            return True
    return False


def check(record: Record, ctx: GateContext) -> GateResult:
    status = record.record_status
    if status in CLOSED:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)

    authors = record.get("authors", default=[]) or []
    reviewers = record.get("reviewers", default=[]) or []
    independent_approvals = []
    independent = []
    for index, reviewer in enumerate(reviewers):
        if is_author(reviewer, authors):
            if reviewer.get("decision") == "approved":
                add(("reviewers", index), f"{reviewer.get('name')} is an author of this record; an author's approval "
                    "does not count as a review")
            continue
        independent.append(reviewer)
        if reviewer.get("decision") == "approved":
            independent_approvals.append(reviewer)
    defect = record.get("independence", "defect") is True
    stage = ctx.effective_stage(record)
    if status == "approved" and defect:
        add(("independence", "defect"), "the record declares an independence defect, so it cannot be approved: "
            "have a reviewer who is not an author review it, then clear the defect")
    approval_due = status == "approved" or stage_at_least(stage, "B")
    if approval_due and not independent_approvals:
        why = "the record is approved" if status == "approved" else f"the series is at stage {stage}"
        add(("reviewers",), f"{why}, but no reviewer who is not an author has approved it")
    elif status == "in-review" and not independent:
        add(("reviewers",), "the record is in review, but every listed reviewer is an author: assign an "
            "independent reviewer")
    return result_from_findings(GATE, findings)
