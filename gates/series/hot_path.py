"""G8: a change to an L3/L4 path needs an approved record that covers it, approved independently.

Levels come from `.design-gates/policy.yaml` at the base commit (`gates.policy`), and
so do the records: the covering record must be approved on base, with a `covers`
glob matching the path and an approving reviewer who is neither its author nor an
author or co-author of any commit in the change. The policy file itself is L4; a
change that lowers a level in it is reported as loosening the policy.
"""

from __future__ import annotations

from gates.errors import InputError
from gates.policy import POLICY_PATH, any_glob_matches, parse_policy
from gates.series.context import SeriesContext, field_of
from gates.series.identity import approvers, people_of
from gates.series.independence import independent_approvers


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
        independent = [
            rid for rid, snap in approved
            if independent_approvers(ctx, snap.front_matter, people_of(field_of(snap.front_matter, "authors")))
        ]
        if not independent:
            detail = []
            for rid, snap in approved:
                for _, person in approvers(field_of(snap.front_matter, "reviewers")):
                    sha = ctx.wrote_commit(person)
                    role = f"wrote commit {sha[:12]}" if sha else "is an author of the record"
                    detail.append(f"{person} ({rid}) {role}")
            ctx.report("G8", path, 1, f"self-approved hot-path change: {why}; every approval of "
                       f"{', '.join(r for r, _ in approved)} comes from someone who wrote the change or the record: "
                       f"{'; '.join(detail) or 'no approving reviewer'}")
