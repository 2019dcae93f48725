"""The rule tables of the history checks, one case each: who is the same person, which status moves are legal."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.history import transitions
from gates.history.context import SeriesContext
from gates.history.git_repo import ChangeSet, Person, RecordChange, RecordSnapshot
from gates.history.identity import approvers, people_of, same_person
from gates.model.record import parse_record
from gitrepo_builder import ADA, RITA, record_text

REC = "docs/design/splitkv.md"
STATUSES = ["draft", "in-review", "approved", "rejected", "superseded", "withdrawn"]
LEGAL = {
    (None, "draft"), (None, "in-review"), (None, "approved"),
    ("draft", "in-review"), ("draft", "approved"), ("draft", "withdrawn"),
    ("in-review", "draft"), ("in-review", "approved"), ("in-review", "rejected"), ("in-review", "withdrawn"),
    ("approved", "in-review"), ("approved", "superseded"), ("approved", "withdrawn"),
    ("rejected", "superseded"), ("rejected", "withdrawn"),
}


@pytest.mark.parametrize(
    "a, b, same",
    [
        pytest.param(Person("Ada Lindqvist", "ada@x"), Person("ada lindqvist", "other@x"), True, id="name-case"),
        pytest.param(Person("Ada", "ADA@X"), Person("A. Lindqvist", "ada@x"), True, id="email-case"),
        pytest.param(Person("Ada  Lindqvist", ""), Person("Ada Lindqvist", ""), True, id="name-whitespace"),
        pytest.param(Person("Ada", "ada@x"), Person("Rita", "rita@x"), False, id="different"),
        pytest.param(Person("", ""), Person("", ""), False, id="empty-is-nobody"),
    ],
)
def test_same_person(a, b, same):
    assert same_person(a, b) is same


def test_people_and_approvers_from_front_matter():
    reviewers = [{"name": "Rita", "email": "r@x", "decision": "approved"}, {"name": "Ben", "decision": "pending"}, "junk"]
    assert [p.name for p in people_of(reviewers)] == ["Rita", "Ben"]
    assert [(i, p.name) for i, p in approvers(reviewers)] == [(0, "Rita")]
    assert people_of("not a list") == []


class _NoHistory:
    """A reader for rule tests that need no git objects."""

    def resolve_commit(self, rev):
        return None

    def is_ancestor(self, sha, ref):
        return False

    def read_bytes(self, ref, path):
        return None  # no configuration file: the defaults


def _snapshot(status: str, reviewers) -> RecordSnapshot:
    text = record_text("splitkv", status=status, reviewers=reviewers)
    return RecordSnapshot(REC, parse_record(text, REC, Path.cwd()))


def _status_findings(before, after, reviewers=((RITA, "approved"),)):
    base = _snapshot(before, reviewers) if before else None
    change = ChangeSet(Path.cwd(), "main", "HEAD", "b" * 40, "h" * 40, "b" * 40, [], [],
                       [RecordChange(REC, "M" if before else "A", base, _snapshot(after, reviewers))],
                       _reader=_NoHistory())
    ctx = SeriesContext(change)
    transitions.check(ctx)
    return [f for f in ctx.findings if "status" in f.message]


@pytest.mark.parametrize("before", [None] + STATUSES, ids=lambda s: s or "new")
@pytest.mark.parametrize("after", STATUSES)
def test_status_move_table(before, after):
    findings = _status_findings(before, after)
    legal = before == after or (before, after) in LEGAL
    assert (findings == []) is legal, [f.message for f in findings]
    if findings:
        assert findings[0].gate == "G0" and findings[0].line == 6 and findings[0].commit == "h" * 40


@pytest.mark.parametrize("before", [None, "draft", "in-review"], ids=lambda s: s or "new")
def test_approved_needs_an_approving_reviewer(before):
    findings = _status_findings(before, "approved", reviewers=((RITA, "pending"), (ADA, "changes-requested")))
    assert [f.message for f in findings] == [
        f"illegal status move: {before or '(new)'} -> approved without a reviewer whose decision is approved"]


MISTYPED = [
    pytest.param({"stage": 3}, id="stage-number"),
    pytest.param({"stacked_on": [{"id": "x"}, None]}, id="stacked-on-objects"),
    pytest.param({"series": {"closed": {"A": 12, 7: "abc"}, "scopes": {"A": "docs/**"}}}, id="series-mistyped"),
    pytest.param({"reviewers": "Rita", "authors": [None, 3]}, id="people-mistyped"),
    pytest.param({"covers": "kernels/**", "questions": ["Q1", None]}, id="covers-string-questions-strings"),
    pytest.param({"api": ["kernels"]}, id="api-list"),
    pytest.param({"record_status": ["approved"]}, id="status-list"),
    pytest.param({"id": ["splitkv"]}, id="id-list"),
]


@pytest.mark.parametrize("override", MISTYPED)
def test_mistyped_front_matter_gives_findings_not_crashes(tmp_path, override):
    from gitrepo_builder import seeded_repo

    repo = seeded_repo(tmp_path / "repo")
    repo.branch("odd")
    repo.write(REC, record_text("splitkv", stage="B", extra=override))
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\nTUNED = 1\n")
    repo.commit("an odd record")
    findings = repo.check()
    assert findings, "a record at B on a fresh repository must fail"
    assert all(f.gate in ("G0", "G2", "G5", "G8") for f in findings)
