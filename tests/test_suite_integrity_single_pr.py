"""A single-pr change may edit its own tests when a verified approval given in the change covers it.

Most kernel pull requests change tests with the kernel. A record that follows the single-pr process
is not on the base branch while its change is open, so no approved record at base can cover the tests it edits; what shows
that an independent reviewer saw those tests is a forge review of the pull request (or a signed
approval commit in it) that counts for the record and was given after the last edit. Each test
builds a repository under the forge policy with the single-pr process allowed and asks the suite
integrity rule which edited judging files remain unreviewed.
"""

from __future__ import annotations

import json

from gates.checks.context import GateContext
from gates.checks.suite_integrity import edited_suite_files
from gates.history.forge_reviews import parse_reviews
from gates.history.git_repo import load_change_set
from gates.model.record import load_record
from gitrepo_builder import ADA, POLICY, RITA, record_text, seeded_repo

REC = "docs/design/tune.md"
SUITE = "tests/test_api.py"
FORGE_POLICY = POLICY + "approvals:\n  sources: [forge]\n  forge_reviewers: {rita-o: rita@kernels.example}\n"
CONFIG = "profile: stacked\nprofiles:\n  stacked: {}\n  single-pr: {}\n"


def single_pr_change(tmp_path, process: str = "single-pr"):
    """main under the forge policy; branch `a` adds a record, edits the kernel and the suite: (repo, head)."""
    repo = seeded_repo(tmp_path / "repo", policy=FORGE_POLICY, files={".design-gates/config.yaml": CONFIG})
    repo.branch("a")
    reviewers = [dict(RITA.as_dict(), decision="approved", login="rita-o")]
    extra = {"process": process, "reviewers": reviewers, "numeric_contract": {
        "oracle": "math:fsum", "suite": SUITE, "tolerances": [{"metric": "rel_l2", "dtype": "bf16", "max": 0.01}]}}
    repo.write(REC, record_text("tune", stage="D", status="approved", questions_decided=True, extra=extra))
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\n# tuned\n")
    repo.write(SUITE, repo.read(SUITE) + "\n\ndef test_tuned_case():\n    assert True\n")
    return repo, repo.commit("Tune the kernel and test the new case", who=ADA)


def unreviewed(repo, reviews, record: str = REC) -> list[str]:
    change = load_change_set(repo.root, "main", "HEAD")
    try:
        if reviews is not None:
            change.forge_reviews = parse_reviews(json.dumps(reviews), "reviews.json")
        ctx = GateContext(repo.root, change=change)
        return edited_suite_files(ctx, SUITE, (), load_record(repo.root / record, repo.root))
    finally:
        change.close()


def approval(commit: str) -> list[dict]:
    return [{"user": {"login": "rita-o"}, "state": "APPROVED", "commit_id": commit,
             "submitted_at": "2026-12-01T10:00:00Z"}]


def test_a_reviewed_single_pr_change_may_edit_its_own_tests(tmp_path):
    repo, head = single_pr_change(tmp_path)
    assert unreviewed(repo, approval(head)) == []


def test_without_a_review_of_the_change_its_test_edits_judge_it(tmp_path):
    repo, _ = single_pr_change(tmp_path)
    assert unreviewed(repo, None) == [SUITE]


def test_a_test_edited_after_the_review_judges_the_change_again(tmp_path):
    repo, reviewed = single_pr_change(tmp_path)
    repo.write(SUITE, repo.read(SUITE).replace("assert True\n\n\ndef", "assert True\n\n\ndef"))
    repo.write(SUITE, repo.read(SUITE) + "\n\ndef test_one_more():\n    assert True\n")
    repo.commit("One more case after the review", who=ADA)
    assert unreviewed(repo, approval(reviewed)) == [SUITE]


def test_a_stacked_record_still_needs_an_approved_record_at_base_for_its_tests(tmp_path):
    repo, head = single_pr_change(tmp_path, process="stacked")
    assert unreviewed(repo, approval(head)) == [SUITE]


def test_once_the_record_has_merged_a_reviewed_change_may_not_rewrite_the_tests_that_judge_it(tmp_path):
    # the review of a later change ("refresh the evidence") is no approval of the record's tests: the record is on
    # the base now, and its covers do not include them
    repo = _merged_then_tests_rewritten(tmp_path, "refresh")
    repo.write(REC, repo.read(REC).replace("Record tune", "Record tune, refreshed", 1))
    later = repo.commit("Refresh the evidence", who=ADA)
    assert unreviewed(repo, approval(later)) == [SUITE]


def test_a_record_moved_to_another_path_is_still_the_merged_record(tmp_path):
    repo = _merged_then_tests_rewritten(tmp_path, "move")
    repo.write("docs/design/tune-moved.md", repo.read(REC))
    repo.delete(REC)
    later = repo.commit("Move the record and rewrite its tests", who=ADA)
    assert unreviewed(repo, approval(later), "docs/design/tune-moved.md") == [SUITE]


def _merged_then_tests_rewritten(tmp_path, branch: str):
    """The single-PR change merged, and a later branch that rewrites the tests judging its record."""
    repo, _ = single_pr_change(tmp_path)
    repo.merge("a")
    repo.branch(branch)
    repo.write(SUITE, repo.read(SUITE).replace("assert True", "assert 1"))
    return repo
