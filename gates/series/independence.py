"""G8: an approval counts only when its reviewer wrote none of the change.

The people who wrote a change are the record's authors and every author and
`Co-authored-by:` of the commits in base..head. An approval that one of them gives
in this commit range (a reviewer newly `approved` in a changed record, or an
`Approved-by:` / `Reviewed-by:` trailer) is reported as self-review; a record that
is approved at head needs at least one approval from someone else.
"""

from __future__ import annotations

from gates.series.changeset import Person
from gates.series.context import SeriesContext, field_of, line_of
from gates.series.identity import among, approvers, same_person


def independent_approvers(ctx: SeriesContext, front_matter: dict | None, record_authors: list[Person]) -> list[Person]:
    """Approving reviewers of `front_matter` who are neither its authors nor change authors."""
    return [
        person for _, person in approvers(field_of(front_matter, "reviewers"))
        if not among(person, record_authors) and ctx.wrote_commit(person) is None
    ]


def _why_not_independent(ctx: SeriesContext, person: Person, record_authors: list[Person]) -> tuple[str, str | None]:
    if among(person, record_authors):
        return "is an author of the record", None
    sha = ctx.wrote_commit(person)
    return f"authored or co-authored commit {sha[:12]} in this change", sha


def _check_record(ctx: SeriesContext, rc) -> None:
    head_fm = rc.head_front_matter
    authors = ctx.record_authors(rc.head)
    before = [p for _, p in approvers(field_of(rc.base_front_matter, "reviewers"))] if rc.base else []
    for index, person in approvers(field_of(head_fm, "reviewers")):
        newly = not any(same_person(person, p) for p in before)
        if not newly:
            continue
        if among(person, authors) or ctx.wrote_commit(person):
            why, sha = _why_not_independent(ctx, person, authors)
            ctx.report("G8", rc.rel_path, line_of(rc.head, "reviewers", index, "decision"),
                       f"self-review: {person} approved in this change but {why}; "
                       "the approval does not count", commit=sha)
    if field_of(head_fm, "record_status") == "approved":
        all_approvers = approvers(field_of(head_fm, "reviewers"))
        if all_approvers and not independent_approvers(ctx, head_fm, authors):
            names = "; ".join(f"{p} {_why_not_independent(ctx, p, authors)[0]}" for _, p in all_approvers)
            ctx.report("G8", rc.rel_path, line_of(rc.head, "record_status"),
                       f"approved without an independent approval in this change: {names}")


def _check_trailers(ctx: SeriesContext) -> None:
    authors_of_records = [p for rc in ctx.change.records for p in ctx.record_authors(rc.head, rc.base)]
    fallback = ctx.change.records[0].rel_path if ctx.change.records else None
    for commit in ctx.change.commits:
        for key in ("Approved-by", "Reviewed-by"):
            for person in commit.trailer_people(key):
                wrote = ctx.wrote_commit(person)
                if wrote is None and not among(person, authors_of_records):
                    continue
                why = (f"authored or co-authored commit {wrote[:12]}" if wrote
                       else "is an author of a record this change edits")
                path = fallback or (commit.paths[0] if commit.paths else "(change)")
                ctx.report("G8", path, 1, f"self-review: '{key}: {person}' on commit {commit.sha[:12]}, "
                           f"but {person} {why} in this change", commit=commit.sha)


def check(ctx: SeriesContext) -> None:
    for rc in ctx.change.records:
        if rc.head is not None and rc.head.front_matter is not None:
            _check_record(ctx, rc)
    _check_trailers(ctx)
