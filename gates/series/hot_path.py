"""G8: a change to an L3/L4 path needs an approved record that covers it, approved independently.

Levels come from `.design-gates/policy.yaml` at the base commit (`gates.policy`), and
so do the records: the covering record must be approved on base, with a `covers`
glob matching the path, and have an approval that counts (`gates.series.approvals`:
from a source the base policy trusts, by someone who wrote neither the record nor
any commit of the change, given for the contract the record still has at head). A
record that this change withdraws, rejects, supersedes or deletes covers nothing in
it. The policy file itself is L4; a change that lowers a level in it is reported as
loosening the policy.
"""

from __future__ import annotations

from gates.errors import InputError
from gates.policy import POLICY_PATH, any_glob_matches, parse_policy
from gates.series.context import SeriesContext, field_of
from gates.series.approvals import describe

CLOSING = ("withdrawn", "rejected", "superseded")


def _policy_note(ctx: SeriesContext) -> str:
    try:
        text = ctx.change.read_at(ctx.change.head, POLICY_PATH)
        if text is None:
            return " (this change deletes the policy file)"
        loosened = ctx.policy.loosenings(parse_policy(text, POLICY_PATH))
    except InputError as exc:
        ctx.report("G0", POLICY_PATH, exc.line, f"policy invalid at head: {exc.message}")
        return ""
    return f" (this change loosens the policy: {'; '.join(loosened)})" if loosened else ""


def _head_front_matter(ctx: SeriesContext, snapshot) -> tuple[dict | None, bool]:
    """The record at head, and whether the change deleted it."""
    for rc in ctx.change.records:
        if snapshot.rel_path in (rc.rel_path, getattr(rc.base, "rel_path", None)):
            return rc.head_front_matter, rc.head is None
    return snapshot.front_matter, False


def _judge_covering(ctx: SeriesContext, path: str, why: str, approved: list) -> None:
    book = ctx.approvals
    verdicts, closing = [], []
    for rid, snap in approved:
        head_fm, deleted = _head_front_matter(ctx, snap)
        status = field_of(head_fm, "record_status")
        if deleted or status in CLOSING:
            closing.append(f"{rid} ({'deleted' if deleted else status})")
            continue
        verdicts.extend(book.judge(rid, snap.rel_path, snap.front_matter, snap.front_matter, head_fm))
    if any(v.counts for v in verdicts):
        return
    names = ", ".join(rid for rid, _ in approved)
    if closing and not verdicts:
        ctx.report("G8", path, 1, f"hot-path change without approval: {why}; this change withdraws the records "
                   f"covering it ({', '.join(closing)}), so none covers the change")
        return
    detail = describe(verdicts) or (f"no approval from {book.describe_sources()}" if book.verified_mode
                                    else "no approving reviewer")
    if verdicts and all(v.independence for v in verdicts):
        ctx.report("G8", path, 1, f"self-approved hot-path change: {why}; every approval of {names} comes from "
                   f"someone who wrote the change or the record: {detail}")
    else:
        ctx.report("G8", path, 1, f"hot-path change without an approval that counts: {why}; {names}: {detail}")


def check(ctx: SeriesContext) -> None:
    policy = ctx.policy
    for path in ctx.change.changed_paths():
        level, rule = policy.level_of(path)
        if level not in ("L3", "L4"):
            continue
        why = f"{path} is {level}" + (f" ({rule.reason})" if rule and rule.reason else "")
        if path == POLICY_PATH:
            if ctx.change.read_bytes_at(ctx.change.base, POLICY_PATH) is None:
                continue  # the first policy of a repository only adds rules
            why += _policy_note(ctx)
        covering = [
            (rid, snap) for rid, snap in sorted(ctx.base_records.items())
            if snap.front_matter and any_glob_matches(field_of(snap.front_matter, "covers", default=[]), path)
        ]
        approved = [(rid, snap) for rid, snap in covering if field_of(snap.front_matter, "record_status") == "approved"]
        if not covering:
            ctx.report("G8", path, 1, f"hot-path change without a design record: {why}, and no record on base "
                       f"{ctx.change.base_ref} covers it")
            continue
        if not approved:
            states = ", ".join(f"{rid} ({field_of(s.front_matter, 'record_status')})" for rid, s in covering)
            ctx.report("G8", path, 1, f"hot-path change before approval: {why}; the records covering it are not "
                       f"approved on base {ctx.change.base_ref}: {states}")
            continue
        _judge_covering(ctx, path, why, approved)
