"""G2: a stage may start only when what it builds on is settled on the base ref.

- B (and later) needs the record approved on base, with a decision on every reviewer question.
- C needs `series.closed.B`, D needs `series.closed.C`: a commit in the history of base.
  A change within a stage the record already has on base does not enter it again: a
  record that reached it before the history ratchet and never recorded the closing
  commit can still have its evidence refreshed; a closing commit recorded on base must
  stay recorded.
- Every record in `stacked_on` must be on base at least at the stage this record claims.

A record following the single-pr process brings its design, change and evidence in
one pull request: there is no earlier stage to build on, so it must be approved at
head, with a decision on every question, before it merges (G8 judges whether the
approval counts).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from gates.history.changeset import RecordChange
from gates.history.context import SeriesContext, claims, field_of, line_of, stage_index
from gates.model.record import STAGES

DECISIONS = ("accepted", "rejected", "deferred")


def _check_base_approval(ctx: SeriesContext, rc: RecordChange, stage: str) -> None:
    record_id = field_of(rc.head_front_matter, "id")
    if not isinstance(record_id, str):
        record_id = PurePosixPath(rc.rel_path).stem
    base = ctx.base_records.get(record_id)
    where = f"base {ctx.change.base_ref}"
    if base is None or base.record is None:
        state = "is not on" if base is None else "does not parse on"
        ctx.report("G2", rc.rel_path, line_of(rc.head, "stage"),
                   f"stage {stage} needs the record approved on {where}, but it {state} {where}; "
                   "merge the stage-A record and its approval first")
        return
    status = field_of(base.front_matter, "record_status")
    if status != "approved":
        ctx.report("G2", rc.rel_path, line_of(rc.head, "stage"),
                   f"stage {stage} needs the record approved on {where}; there it is {status}")
    undecided = undecided_questions(base.front_matter)
    if undecided:
        ctx.report("G2", rc.rel_path, line_of(rc.head, "questions"),
                   f"stage {stage} needs a decision on every reviewer question on {where}; "
                   f"undecided there: {', '.join(undecided)}")


def _check_previous_closed(ctx: SeriesContext, rc: RecordChange, stage: str) -> None:
    previous = STAGES[stage_index(stage) - 1]
    sha = field_of(rc.head_front_matter, "series", "closed", previous)
    if not isinstance(sha, str):
        recorded = field_of(rc.base_front_matter, "series", "closed", previous) if _base_stage(rc) else None
        if isinstance(recorded, str):
            ctx.report("G2", rc.rel_path, line_of(rc.head, "stage"),
                       f"series.closed.{previous} is {recorded} on base and this change removes it; "
                       "a stage's closing commit stays recorded")
        elif _base_stage(rc) != stage:
            ctx.report("G2", rc.rel_path, line_of(rc.head, "stage"),
                       f"stage {stage} needs stage {previous} closed: record the commit that closed it "
                       f"in series.closed.{previous}")
        # else: the record is at this stage on base already, entered by an earlier change
        # (judged then, or before the history ratchet): a change within the stage (evidence
        # re-pinned, numbers re-quoted) does not enter it again.
    elif not ctx.change.is_ancestor(sha, ctx.change.base):
        ctx.report("G2", rc.rel_path, line_of(rc.head, "series", "closed", previous),
                   f"stage {stage} needs stage {previous}'s closing commit {sha} to be an ancestor of "
                   f"base {ctx.change.base_ref}, and it is not")


def _base_stage(rc: RecordChange) -> str | None:
    """The record's stage on base, or None when it is new there or unreadable."""
    if rc.base is None or rc.base.record is None:
        return None
    stage = field_of(rc.base_front_matter, "stage")
    return stage if isinstance(stage, str) else None


def _check_stacked(ctx: SeriesContext, rc: RecordChange, stage: str) -> None:
    stacked = field_of(rc.head_front_matter, "stacked_on", default=[])
    for index, other_id in enumerate(stacked if isinstance(stacked, list) else []):
        line = line_of(rc.head, "stacked_on", index)
        other = ctx.base_records.get(other_id) if isinstance(other_id, str) else None
        if other is None or other.record is None:
            ctx.report("G2", rc.rel_path, line,
                       f"stacked on {other_id}, which is not a readable record on base {ctx.change.base_ref}")
            continue
        other_stage = field_of(other.front_matter, "stage")
        if stage_index(other_stage) < stage_index(stage):
            ctx.report("G2", rc.rel_path, line,
                       f"stacked record overtakes its base: this record claims stage {stage}, but {other_id} "
                       f"is at stage {other_stage} on base {ctx.change.base_ref}")


def _check_head_approval(ctx: SeriesContext, rc: RecordChange, stage: str) -> None:
    status = field_of(rc.head_front_matter, "record_status")
    if status != "approved":
        ctx.report("G2", rc.rel_path, line_of(rc.head, "record_status"),
                   f"a single-pr change merges its record approved: record_status is {status}; "
                   "get the design reviewed and approved in this pull request first")
    undecided = undecided_questions(rc.head_front_matter)
    if undecided:
        ctx.report("G2", rc.rel_path, line_of(rc.head, "questions"),
                   f"a single-pr change needs a decision on every reviewer question before it merges; "
                   f"undecided: {', '.join(undecided)}")


def check(ctx: SeriesContext) -> None:
    for rc, stage in claims(ctx.change):
        if rc.head is None or rc.head.record is None:
            continue
        profile = ctx.profile_of(rc.head_front_matter)
        if profile is None or stage not in profile.stages:
            continue  # reported under G0 (gates.history.transitions); its scope is the record alone
        if profile.name == "single-pr":
            _check_head_approval(ctx, rc, stage)
            _check_stacked(ctx, rc, stage)
            continue
        if stage_index(stage) >= 1:
            _check_base_approval(ctx, rc, stage)
        if stage_index(stage) >= 2:
            _check_previous_closed(ctx, rc, stage)
        _check_stacked(ctx, rc, stage)


def undecided_questions(front_matter) -> list[str]:
    """Ids of the reviewer questions in `front_matter` that carry no decision."""
    questions = field_of(front_matter, "questions", default=[])
    return [str(q.get("id", f"#{i + 1}")) for i, q in enumerate(questions if isinstance(questions, list) else [])
            if isinstance(q, dict) and q.get("decision") not in DECISIONS]
