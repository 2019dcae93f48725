"""G8 Independence: someone other than the authors approves.

A reviewer is independent when neither their name nor their email matches an
author's, compared in normal form (`gates.model.identity`: NFKC, zero-width characters
removed, case folded, `+tag` dropped from emails, the policy's `approvals.mailmap`
applied). An approved record, or one whose series has moved past stage A, needs
at least one independent reviewer whose decision is `approved`; a record in
review needs at least one independent reviewer assigned. An author's own approval
is not a review and is reported. A record that declares its own independence
defect (`independence.defect: true`) cannot be approved.

When the policy trusts approval sources (`approvals.sources`), a `decision:
approved` in the YAML is only a claim: `gate-check --base` verifies it against the
forge's review export or signed approval commits (`gates.history.approvals`). A
plain run cannot, and says so with a warning for each claim that is not a legacy
approval (held at the policy's `history.enforce_from` commit, contract unchanged).
"""

from __future__ import annotations

from gates.checks.context import GateContext, stage_at_least
from gates.model.errors import InputError
from gates.model.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.model.identity import Mailmap, identity_of, parse_mailmap
from gates.model.record import Record, parse_record

GATE = "G8"
CLOSED = {"rejected", "withdrawn"}


def is_author(person: dict, authors: list[dict], mailmap: Mailmap | None = None) -> bool:
    who = identity_of(person.get("name"), person.get("email"), mailmap, person.get("login"))
    return any(isinstance(a, dict) and who.same_as(identity_of(a.get("name"), a.get("email"), mailmap, a.get("login")))
               for a in authors)


def working_tree_mailmap(ctx: GateContext) -> Mailmap | None:
    """The policy's `approvals.mailmap`, read from the working tree; `InputError` when it is missing."""
    path = ctx.policy.section("approvals").get("mailmap") if ctx.policy else None
    if not path:
        return None
    file = ctx.repo_root / path
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, 1, f"the mailmap the policy names (approvals.mailmap) cannot be read: {exc}") from None
    return parse_mailmap(text, path)


def _legacy_approvers(record: Record, ctx: GateContext, mailmap: Mailmap | None) -> list[dict]:
    """Reviewers approved at the policy's `history.enforce_from`, when the record's contract is unchanged since."""
    from gates.history.contract import contract_changes
    from gates.history.git_repo import read_bytes_at

    rev = ctx.policy.section("history").get("enforce_from")
    data = read_bytes_at(ctx.repo_root, rev, record.rel_path) if rev else None
    if data is None:
        return []
    try:
        then = parse_record(data.decode("utf-8"), record.rel_path, ctx.repo_root).front_matter
    except (InputError, UnicodeDecodeError):
        return []
    if not isinstance(then, dict) or contract_changes(then, record.front_matter):
        return []
    reviewers = then.get("reviewers") if isinstance(then.get("reviewers"), list) else []
    return [r for r in reviewers if isinstance(r, dict) and r.get("decision") == "approved"]


def _unverified_claims(record: Record, ctx: GateContext, approvals: list[tuple[int, dict]],
                       mailmap: Mailmap | None, add_warning) -> None:
    sources = ctx.policy.section("approvals").get("sources") if ctx.policy else None
    if not sources or ctx.change is not None or not approvals:
        return
    if ctx.approvals_judged_except is not None and record.rel_path not in ctx.approvals_judged_except:
        return  # the history checks judged the approvals of every commit that could have declared these
    legacy = _legacy_approvers(record, ctx, mailmap)
    for index, reviewer in approvals:
        if any(is_author(reviewer, [old], mailmap) for old in legacy):
            continue
        add_warning(("reviewers", index, "decision"),
                    f"{reviewer.get('name')}'s approval is declared, not verified: the policy counts only approvals "
                    f"from {', '.join(sources)}, which `gate-check --base <target> [--reviews FILE]` verifies")


def check(record: Record, ctx: GateContext) -> GateResult:
    status = record.record_status
    if status in CLOSED:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)

    def add_warning(keys, message):
        findings.append(Finding(GATE, record.rel_path, record.line_of(*keys), 1, message, "warning"))

    mailmap = working_tree_mailmap(ctx)
    authors = [a for a in (record.get("authors", default=[]) or []) if isinstance(a, dict)]
    reviewers = record.get("reviewers", default=[]) or []
    independent_approvals = []
    independent = []
    for index, reviewer in enumerate(reviewers):
        if is_author(reviewer, authors, mailmap):
            if reviewer.get("decision") == "approved":
                add(("reviewers", index), f"{reviewer.get('name')} is an author of this record; an author's approval "
                    "does not count as a review")
            continue
        independent.append(reviewer)
        if reviewer.get("decision") == "approved":
            independent_approvals.append((index, reviewer))
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
    _unverified_claims(record, ctx, independent_approvals, mailmap, add_warning)
    return result_from_findings(GATE, findings)
