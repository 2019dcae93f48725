"""G8: a change to an L3/L4 path needs an approved record that covers it, approved independently.

Levels come from the policy (`.design-gates/policy.yaml` by default) at the base
commit (`gates.model.policy`), and so do the records: the covering record must be approved
on base, with a `covers` glob matching the path, and have an approval that counts
(`gates.history.approvals`: from a source the base policy trusts, by someone who wrote
neither the record nor any commit of the change, given for the contract the record
still has at head, and, from a verified source, given for this change: a forge review of
its pull request or a signed approval commit in it). A record following the single-pr process, which brings its change
in the same pull request, may cover it instead when it is approved at head with an
approval that counts. A record that this change withdraws, rejects, supersedes or
deletes covers nothing in it. The policy file itself is L4; a change that lowers a
level in it is reported as loosening the policy. A repository's first policy, and a change that only sets
`history.enforce_from` where the policy had none and trusts no approval sources (`gates.history.ratchet`), need
no record: they loosen nothing.
Nor does an edit of a Python file's comments and blank lines only (`gates.history.comment_edits`): the file does
what it did. So is the configuration
(`gates.model.config`): `.design-gates/config.yaml`, or pyproject.toml when its
`[tool.design-gates]` table changes, is L4 once the base has a policy.
"""

from __future__ import annotations

from gates.history import api_compat
from gates.history.approvals import describe
from gates.history.comment_edits import comment_only_paths
from gates.history.context import SeriesContext, field_of
from gates.history.ratchet import enforce_from_of, only_sets_the_first_ratchet
from gates.model.config import CONFIG_FILE, PYPROJECT, tool_table
from gates.model.errors import InputError
from gates.model.policy import LEVELS, any_glob_matches

CLOSING = ("withdrawn", "rejected", "superseded")


def _policy_note(ctx: SeriesContext) -> str:
    path = ctx.policy_path
    try:
        head_policy = ctx.head_policy
        if head_policy is None:
            return " (this change deletes the policy file)"
        # a package found nowhere at base checked nothing: taking it out (a misspelt name corrected) loosens nothing
        loosened = [what for what in ctx.policy.loosenings(head_policy)
                    if not (what.startswith("api package ") and what.endswith(" no longer checked")
                            and api_compat.resolves_nowhere_at_base(ctx, what[len("api package "):-len(" no longer checked")]))]
    except InputError as exc:
        ctx.report("G0", path, exc.line, f"policy invalid at head: {exc.message}")
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
        verdicts.extend(book.judge(rid, snap.rel_path, snap.front_matter, snap.front_matter, head_fm,
                                   of_this_change=True))
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


def _only_sets_the_first_ratchet(ctx: SeriesContext) -> bool:
    """The change sets the ratchet for the first time and nothing else (`ratchet.only_sets_the_first_ratchet`), to a
    commit of head's history named by its object id."""
    change, path = ctx.change, ctx.policy_path
    try:
        after = change.read_at(change.head, path)
        if not only_sets_the_first_ratchet(change.read_at(change.base, path), after, path):
            return False
    except InputError:
        return False
    start = change.resolve_object_id(enforce_from_of(after, path)[0] or "")
    return start is not None and change.is_ancestor(start, change.head)


def _configuration_changed(ctx: SeriesContext, path: str) -> bool:
    """True when `path` carries the design-gates configuration and this change alters it."""
    change = ctx.change
    if path == CONFIG_FILE:
        return change.read_bytes_at(change.base, path) != change.read_bytes_at(change.head, path)
    if path == PYPROJECT:
        try:
            before, after = change.read_at(change.base, path), change.read_at(change.head, path)
        except InputError:
            return True
        return tool_table(before) != tool_table(after)
    return False


def _level(ctx: SeriesContext, path: str):
    """The level of `path` and why, with the configuration counted as L4 once the base has a policy.

    A file has the highest level of all the paths that name it through symbolic links
    (`ChangeSet.path_names`): a kernel edited under another name is still the kernel."""
    names = ctx.change.path_names(path)
    level, rule, name = max(((*ctx.policy.level_of(name), name) for name in names),
                            key=lambda found: LEVELS.index(found[0]))
    if (level != "L4" and path in (CONFIG_FILE, PYPROJECT)
            and ctx.change.read_bytes_at(ctx.change.base, ctx.policy_path) is not None
            and _configuration_changed(ctx, path)):
        return "L4", "the design-gates configuration: profiles, scopes, gates and the policy path"
    reason = rule.reason if rule else ""
    if name != path:
        reason = f"through a symbolic link it is {name}" + (f": {reason}" if reason else "")
    return level, reason


def _covers(ctx: SeriesContext, front_matter, path: str) -> bool:
    """Whether a record's `covers` globs match `path` under any of its names (`_level`)."""
    covers = field_of(front_matter, "covers", default=[])
    return any(any_glob_matches(covers, name) for name in ctx.change.path_names(path))


def _covering_at_head(ctx: SeriesContext, path: str, approved: bool = True) -> list:
    """Single-pr records this change brings that cover `path`, judged as they are at head: those it approves
    (`approved`), else those it leaves unapproved."""
    found = []
    for rc in ctx.change.records:
        head_fm = rc.head_front_matter
        profile = ctx.profile_of(head_fm)
        if (rc.head is None or profile is None or profile.name != "single-pr"
                or (field_of(head_fm, "record_status") == "approved") != approved
                or not _covers(ctx, head_fm, path)):
            continue
        rid = field_of(head_fm, "id")
        found.append((rid if isinstance(rid, str) else rc.rel_path, rc))
    return found


def _verdicts_at_head(ctx: SeriesContext, single: list) -> list:
    book = ctx.approvals
    return [v for rid, rc in single
            for v in book.judge(rid, rc.rel_path, rc.head_front_matter, rc.base_front_matter, rc.head_front_matter,
                                of_this_change=True)]


def _approved_at_head(ctx: SeriesContext, single: list) -> bool:
    return any(v.counts for v in _verdicts_at_head(ctx, single))


def _report_single(ctx: SeriesContext, path: str, why: str, single: list) -> None:
    book = ctx.approvals
    verdicts = _verdicts_at_head(ctx, single)
    names = ", ".join(rid for rid, _ in single)
    detail = describe(verdicts) or (f"no approval from {book.describe_sources()}" if book.verified_mode
                                    else "no approving reviewer")
    ctx.report("G8", path, 1, f"hot-path change without an approval that counts: {why}; the single-pr record "
               f"{names} covering it is approved in this change without one: {detail}")


def check(ctx: SeriesContext) -> None:
    policy_path = ctx.policy_path
    comments_only = None
    for path in ctx.change.changed_paths():
        level, reason = _level(ctx, path)
        if level not in ("L3", "L4"):
            continue
        if comments_only is None:
            comments_only = comment_only_paths(ctx.change)
        if path in comments_only:
            continue  # its comments and blank lines only: the file does what it did
        why = f"{path} is {level}" + (f" ({reason})" if reason else "")
        if path == policy_path:
            if ctx.change.read_bytes_at(ctx.change.base, policy_path) is None:
                continue  # the first policy of a repository only adds rules
            if _only_sets_the_first_ratchet(ctx):
                continue
            why += _policy_note(ctx)
        single = _covering_at_head(ctx, path)
        if single and _approved_at_head(ctx, single):
            continue
        covering = [
            (rid, snap) for rid, snap in sorted(ctx.base_records.items())
            if snap.front_matter and _covers(ctx, snap.front_matter, path)
        ]
        approved = [(rid, snap) for rid, snap in covering if field_of(snap.front_matter, "record_status") == "approved"]
        if single and not approved:
            _report_single(ctx, path, why, single)
            continue
        if not covering:
            pending = ", ".join(f"{rid} ({field_of(rc.head_front_matter, 'record_status')})"
                                for rid, rc in _covering_at_head(ctx, path, approved=False))
            later = (f"; the single-pr record of this change that covers it, {pending}, covers it once it is "
                     "approved in this change with an approval that counts") if pending else ""
            ctx.report("G8", path, 1, f"hot-path change without a design record: {why}, and no record on base "
                       f"{ctx.change.base_ref} covers it{later}")
            continue
        if not approved:
            states = ", ".join(f"{rid} ({field_of(s.front_matter, 'record_status')})" for rid, s in covering)
            ctx.report("G8", path, 1, f"hot-path change before approval: {why}; the records covering it are not "
                       f"approved on base {ctx.change.base_ref}: {states}")
            continue
        _judge_covering(ctx, path, why, approved)
