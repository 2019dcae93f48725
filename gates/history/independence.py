"""G8: an approval counts only from a trusted source, by someone who wrote none of the change, still current.

The people who wrote a change are the record's authors and every author,
committer, `Co-authored-by:` and `Signed-off-by:` of the commits in base..head
(verified approval commits excepted), compared in normal form
(`gates.model.identity`). In this change:

- a reviewer newly `approved` who is one of them, and an `Approved-by:` /
  `Reviewed-by:` trailer naming one of them, are reported as self-review;
- with `approvals.sources` in the base policy, a newly declared
  `decision: approved` without a verified approval behind it is a claim, not an
  approval;
- a record approved at head needs an approval that counts (see
  `gates.history.approvals`: trusted source, independent, contract unchanged since).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from gates.history.approvals import describe
from gates.history.context import SeriesContext, field_of, line_of
from gates.history.identity import approvers, people_of

ROLE_VERBS = {"author": "authored", "committer": "committed", "co-author": "co-authored", "signer-off": "signed off"}


def record_id_of(rc) -> str:
    rid = field_of(rc.head_front_matter, "id") or field_of(rc.base_front_matter, "id")
    return rid if isinstance(rid, str) else PurePosixPath(rc.rel_path).stem


def why_not_independent(ctx: SeriesContext, person, record_authors) -> tuple[str, str | None] | None:
    """Why `person` wrote the change or the record, with the commit; None when they did not."""
    book = ctx.approvals
    if book.is_among(person, record_authors):
        return "is an author of the record", None
    wrote = book.wrote(person)
    if wrote is None:
        return None
    sha, role = wrote
    return f"{ROLE_VERBS[role]} commit {sha[:12]} in this change", sha


def _check_record(ctx: SeriesContext, rc) -> None:
    book = ctx.approvals
    head_fm, base_fm = rc.head_front_matter, rc.base_front_matter
    authors = people_of(field_of(head_fm, "authors")) + people_of(field_of(base_fm, "authors"))
    before = [p for _, p in approvers(field_of(base_fm, "reviewers"))]
    for index, person in approvers(field_of(head_fm, "reviewers")):
        if book.is_among(person, before):
            continue
        why = why_not_independent(ctx, person, authors)
        if why:
            ctx.report("G8", rc.rel_path, line_of(rc.head, "reviewers", index, "decision"),
                       f"self-review: {person} approved in this change but {why[0]}; "
                       "the approval does not count", commit=why[1])
    verdicts = book.judge(record_id_of(rc), rc.rel_path, head_fm, base_fm, head_fm)
    for index, person in book.claims_without_approval(head_fm, verdicts):
        if not book.is_among(person, before):
            ctx.report("G8", rc.rel_path, line_of(rc.head, "reviewers", index, "decision"),
                       f"{person}'s 'decision: approved' is a claim, not an approval: the base policy counts only "
                       f"{book.describe_sources()}, and none from {person} was found for {record_id_of(rc)}")
    if field_of(head_fm, "record_status") == "approved" and not any(v.counts for v in verdicts):
        detail = describe(verdicts) or (f"no approval from {book.describe_sources()}" if book.verified_mode
                                         else "no reviewer approved it")
        ctx.report("G8", rc.rel_path, line_of(rc.head, "record_status"),
                   f"approved without an independent approval in this change: {detail}")


def _check_trailers(ctx: SeriesContext) -> None:
    authors_of_records = [p for rc in ctx.change.records for p in ctx.record_authors(rc.head, rc.base)]
    fallback = ctx.change.records[0].rel_path if ctx.change.records else None
    for commit in ctx.change.commits:
        for key in ("Approved-by", "Reviewed-by"):
            for person in commit.trailer_people(key):
                why = why_not_independent(ctx, person, authors_of_records)
                if why is None:
                    continue
                text = why[0].replace("is an author of the record", "is an author of a record this change edits")
                path = fallback or (commit.paths[0] if commit.paths else "(change)")
                ctx.report("G8", path, 1, f"self-review: '{key}: {person}' on commit {commit.sha[:12]}, "
                           f"but {person} {text}", commit=commit.sha)


def check(ctx: SeriesContext) -> None:
    for rc in ctx.change.records:
        if rc.head is not None and rc.head.front_matter is not None:
            _check_record(ctx, rc)
    _check_trailers(ctx)
