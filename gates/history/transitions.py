"""G0: legal moves of `record_status` and `stage`, and stage-closing commits that exist.

Status moves allowed between base and head:

| from | to |
|---|---|
| (new) | draft, in-review, approved* |
| draft | in-review, approved*, withdrawn |
| in-review | draft, approved*, rejected, withdrawn |
| approved | in-review (re-review), superseded, withdrawn |
| rejected | superseded, withdrawn |
| superseded, withdrawn | (final) |

*approved only with at least one reviewer whose decision is `approved`.

A record follows one process (`process`, default the configuration's `profile`),
which the configuration on base must allow, and which never changes. Its stage is
one of that process's stages: it moves forward one step at a time (a new record
starts at the first: A for stacked, D for single-pr's only stage) and never back.
Every commit in `series.closed` must be in the history of the base ref and must
have closed that stage of this record: it changes the record's file (against its
first parent: a merge commit counts by what it merged) and the record is at that
very stage in it. The root commit or any commit that left the record alone does not
qualify. No stage later than the record's own may be closed, and a recorded closing
commit never changes.
"""

from __future__ import annotations

from gates.history.changeset import RecordChange, decode_text
from gates.history.context import SeriesContext, field_of, line_of, stage_index
from gates.history.identity import approvers
from gates.model.errors import InputError
from gates.model.record import STAGES, parse_record

STATUS_MOVES = {
    None: {"draft", "in-review", "approved"},
    "draft": {"in-review", "approved", "withdrawn"},
    "in-review": {"draft", "approved", "rejected", "withdrawn"},
    "approved": {"in-review", "superseded", "withdrawn"},
    "rejected": {"superseded", "withdrawn"},
    "superseded": set(),
    "withdrawn": set(),
}


def _check_status(ctx: SeriesContext, rc: RecordChange, base_fm: dict | None, head_fm: dict) -> None:
    before = field_of(base_fm, "record_status") if base_fm is not None else None
    after = field_of(head_fm, "record_status")
    line = line_of(rc.head, "record_status")
    if before == after or not isinstance(after, str) or (before is not None and not isinstance(before, str)):
        return  # unchanged, or a mistyped status that the schema check (G0) reports
    allowed = STATUS_MOVES.get(before, set())
    if after not in allowed:
        start = "a new record" if before is None else f"record_status {before}"
        options = ", ".join(sorted(allowed)) or "nothing (it is final)"
        ctx.report("G0", rc.rel_path, line,
                   f"illegal status move: {start} -> {after}; from {before or '(new)'} it may move to {options}")
        return
    if after == "approved" and not approvers(field_of(head_fm, "reviewers")):
        ctx.report("G0", rc.rel_path, line,
                   f"illegal status move: {before or '(new)'} -> approved without a reviewer whose decision is approved")


def _check_process(ctx: SeriesContext, rc: RecordChange, base_fm: dict | None, head_fm: dict):
    """The record's process under the base configuration (None, reported, when not allowed or changed)."""
    after = field_of(head_fm, "process")
    profile = ctx.profile_of(head_fm)
    if profile is None:
        ctx.report("G0", rc.rel_path, line_of(rc.head, "process"),
                   f"process {after!r} is not allowed by the configuration on base {ctx.change.base_ref} "
                   f"(allowed: {', '.join(ctx.settings.profiles)})")
        return None
    if base_fm is not None:
        before = ctx.profile_of(base_fm)
        if before is not None and before.name != profile.name:
            ctx.report("G0", rc.rel_path, line_of(rc.head, "process"),
                       f"process changed from {before.name} to {profile.name}; a record keeps the process it "
                       "started with (supersede it with a new record instead)")
            return None
    return profile


def _check_stage(ctx: SeriesContext, rc: RecordChange, base_fm: dict | None, head_fm: dict) -> None:
    after = field_of(head_fm, "stage")
    if after not in STAGES:
        return
    profile = _check_process(ctx, rc, base_fm, head_fm)
    if profile is None:
        return
    stages = profile.stages
    line = line_of(rc.head, "stage")
    if after not in stages:
        ctx.report("G0", rc.rel_path, line,
                   f"stage {after} is not a stage of the {profile.name} process (its stages: {', '.join(stages)})")
        return
    if base_fm is None:
        if after != stages[0]:
            skipped = ", ".join(stages[: stages.index(after)])
            ctx.report("G0", rc.rel_path, line,
                       f"stage skipped: a new record starts at stage {stages[0]}, this one claims {after} "
                       f"(skips {skipped})")
        return
    before = field_of(base_fm, "stage")
    if before not in stages or before == after:
        return
    step = stages.index(after) - stages.index(before)
    if step < 0:
        ctx.report("G0", rc.rel_path, line, f"stage moved back from {before} to {after}; stages only move forward")
    elif step > 1:
        skipped = ", ".join(stages[stages.index(before) + 1: stages.index(after)])
        ctx.report("G0", rc.rel_path, line, f"stage skipped: {before} -> {after} (skips {skipped}); move one stage per change")


def _check_closed(ctx: SeriesContext, rc: RecordChange, base_fm: dict | None, head_fm: dict) -> None:
    closed = field_of(head_fm, "series", "closed")
    if not isinstance(closed, dict):
        return
    head_stage = field_of(head_fm, "stage")
    base_closed = field_of(base_fm, "series", "closed", default={}) or {}
    for stage, sha in closed.items():
        line = line_of(rc.head, "series", "closed", stage)
        if not isinstance(sha, str) or stage not in STAGES:
            continue
        if head_stage in STAGES and stage_index(stage) > stage_index(head_stage):
            ctx.report("G0", rc.rel_path, line,
                       f"series.closed.{stage} records a closing commit for stage {stage}, "
                       f"but the record is only at stage {head_stage}")
            continue
        before = base_closed.get(stage) if isinstance(base_closed, dict) else None
        if isinstance(before, str) and before != sha:
            ctx.report("G0", rc.rel_path, line,
                       f"series.closed.{stage} changed from {before} to {sha}; a stage's closing commit never changes")
        if not ctx.change.commit_exists(sha):
            ctx.report("G0", rc.rel_path, line,
                       f"series.closed.{stage} names commit {sha}, which does not exist in this repository")
        elif not ctx.change.is_ancestor(sha, ctx.change.base):
            ctx.report("G0", rc.rel_path, line,
                       f"series.closed.{stage} names commit {sha}, which is not in the history of base "
                       f"{ctx.change.base_ref}; a stage is closed by a commit already merged")
        else:
            problem = _not_a_closing_commit(ctx, rc, stage, sha)
            if problem:
                ctx.report("G0", rc.rel_path, line,
                           f"series.closed.{stage} names commit {sha}, which did not close stage {stage} of this "
                           f"record: {problem}; name the commit that merged the record at stage {stage}")


def _not_a_closing_commit(ctx: SeriesContext, rc: RecordChange, stage: str, sha: str) -> str | None:
    """Why commit `sha` did not close `stage` of the record, or None when it did.

    A closing commit changes the record's file (against its first parent, so a merge
    commit counts by what it brought in) and leaves the record at that very stage.
    """
    change = ctx.change
    parent = change.resolve_commit(f"{sha}^1")
    paths = dict.fromkeys([rc.rel_path] + ([rc.base.rel_path] if rc.base is not None else []))
    problems = []
    for path in paths:
        data = change.read_bytes_at(sha, path)
        if data is None:
            problems.append(f"{path} is not in it")
            continue
        if parent is not None and change.read_bytes_at(parent, path) == data:
            problems.append(f"it does not change {path}")
            continue
        try:
            stage_there = parse_record(decode_text(data, path), path, change.repo_root).stage
        except InputError as exc:
            problems.append(f"{path} does not parse there ({exc.message})")
            continue
        if stage_there == stage:
            return None
        problems.append(f"{path} is at stage {stage_there} there")
    return "; ".join(problems)


def check(ctx: SeriesContext) -> None:
    for rc in ctx.change.records:
        if rc.head is None:
            status = field_of(rc.base_front_matter, "record_status")
            ctx.report("G0", rc.rel_path, 1,
                       f"record deleted (it was {status or 'unreadable'} on base); records stay in the history: "
                       "set record_status to withdrawn or superseded instead",
                       commit=ctx.change.last_commit_touching(rc.rel_path))
            continue
        if rc.head.record is None:
            error = rc.head.error
            ctx.report("G0", rc.rel_path, error.line if error else 1,
                       f"record does not parse at head: {error.message if error else 'unreadable'}")
            continue
        head_fm = rc.head_front_matter
        base_fm = rc.base_front_matter if rc.base is not None else None
        if rc.base is not None and rc.base.record is None:
            base_fm = None  # an unreadable base version: judge the head as a new record
        _check_status(ctx, rc, base_fm, head_fm)
        _check_stage(ctx, rc, base_fm, head_fm)
        _check_closed(ctx, rc, base_fm, head_fm)
