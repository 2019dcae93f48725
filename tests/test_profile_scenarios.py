"""Processes and configuration walked through real git repositories.

The single-pr process: a record, its kernel change and its evidence in one pull
request, approved before it merges. And the rule that a change is judged by the
configuration on its base: loosening a scope in the same change opens nothing.
"""

from __future__ import annotations

import pytest

from gitrepo_builder import ADA, MAX, RITA, evidence_json, record_text, seeded_repo
from test_series_scenarios import APPROVED, PARTIAL, find, walk

CONFIG = ".design-gates/config.yaml"
BOTH = "profiles:\n  stacked: {}\n  single-pr: {}\n"
REC = "docs/design/fused-merge.md"
NCU = "docs/evidence/ncu-fused-merge.json"
KERNEL = "kernels/decode_attention/kernel_merge.py"


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def single(**kw) -> str:
    kw.setdefault("stage", "D")
    kw.setdefault("evidence", [NCU])
    extra = {"process": "single-pr", **kw.pop("extra", {})}
    return record_text("fused-merge", extra=extra, **kw)


def allow_single_pr(repo) -> None:
    repo.write(CONFIG, BOTH)
    repo.commit("config: records may follow the single-pr process", who=MAX)


def single_pr(repo, *, record=single, approve=True, also=None) -> str:
    """One pull request: record, kernel, test and evidence (and the files `also` maps);
    Rita's approval recorded by Max."""
    repo.branch("fused-merge")
    for path, text in (also or {}).items():
        repo.write(path, text)
    repo.write(NCU, evidence_json("ncu-fused-merge"))
    repo.write(KERNEL, PARTIAL)
    repo.write("tests/test_merge.py", "def test_merge():\n    assert True\n")
    repo.write(REC, record())
    sha = repo.commit("feat(kernels): fused merge, with its record and evidence", who=ADA)
    if approve:
        repo.write(REC, record(**APPROVED))
        sha = repo.commit("Record the review: approved, every question decided", who=MAX,
                          trailers=[RITA.trailer("Approved-by")])
    return sha


def test_a_single_pr_change_with_an_independent_approval_passes(repo):
    allow_single_pr(repo)
    single_pr(repo)
    assert repo.check() == []


def test_a_single_pr_change_must_be_approved_before_it_merges(repo):
    allow_single_pr(repo)
    single_pr(repo, approve=False)
    findings = repo.check()
    find(findings, "G2", REC, text="a single-pr change merges its record approved: record_status is in-review")
    find(findings, "G8", KERNEL, text="hot-path change without a design record")
    find(findings, "G8", KERNEL, text="covers it once it is approved in this change")  # what would cover it


def g2_record_findings(repo, *, change):
    """What G2's record check says of the single-pr record, with or without the change."""
    from gates.checks import g2_unknowns
    from gates.checks.context import GateContext
    from gates.history.git_repo import load_change_set
    from gates.model.record import load_record

    record = load_record(repo.root / REC, repo.root)
    loaded = load_change_set(repo.root, "main") if change else None
    try:
        return [f.message for f in g2_unknowns.check(record, GateContext(repo.root, change=loaded)).findings]
    finally:
        if loaded is not None:
            loaded.close()


def test_an_unapproved_single_pr_record_is_reported_once_on_a_base_run(repo):
    allow_single_pr(repo)
    single_pr(repo, approve=False)
    alone = g2_record_findings(repo, change=False)
    assert any("a single-pr change merges with its record approved" in m for m in alone)
    assert any("question Q1 has no decision" in m for m in alone)
    # With the change, the history checks say both (the test above); the record check stays quiet.
    assert g2_record_findings(repo, change=True) == []


def test_a_working_tree_that_differs_from_the_head_is_still_judged_by_the_record_check(repo):
    allow_single_pr(repo)
    single_pr(repo)  # approved at head
    repo.write(REC, single())  # back to in-review, not committed
    assert any("a single-pr change merges with its record approved" in m
               for m in g2_record_findings(repo, change=True))


def test_a_single_pr_record_approved_by_its_author_covers_nothing(repo):
    allow_single_pr(repo)
    single_pr(repo, record=lambda **kw: single(**{**kw, "reviewers": ((ADA, "approved"),)} if kw else kw))
    find(repo.check(), "G8", KERNEL, text="the single-pr record fused-merge covering it is approved in this change")


def test_single_pr_is_refused_where_the_configuration_does_not_allow_it(repo):
    single_pr(repo)
    findings = repo.check()
    find(findings, "G0", REC, text="process 'single-pr' is not allowed by the configuration on base main "
                                   "(allowed: stacked)")
    find(findings, "G0", KERNEL, text="outside the scope of the stage")


def test_allowing_single_pr_in_the_same_change_does_not_count(repo):
    single_pr(repo, also={CONFIG: BOTH})
    find(repo.check(), "G0", REC, text="process 'single-pr' is not allowed by the configuration on base main")


def test_a_single_pr_record_starts_at_its_only_stage(repo):
    allow_single_pr(repo)
    single_pr(repo, record=lambda **kw: single(**{**kw, "stage": "A"}))
    find(repo.check(), "G0", REC, text="stage A is not a stage of the single-pr process (its stages: D)")


def test_a_scope_loosened_in_the_head_s_configuration_is_ignored(repo):
    shas = walk(repo, "A")
    repo.branch("b-with-tool")
    repo.write(CONFIG, "profiles:\n  stacked:\n    scopes:\n      B: ['kernels/**', 'tests/**', 'tools/**']\n")
    repo.write("tools/profile.sh", "#!/bin/sh\n")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write("docs/design/splitkv.md", record_text(
        "splitkv", stage="B", closed={"A": shas["A"]}, covers=("kernels/decode_attention/**", "kernels/decode_layer.py"),
        evidence=["docs/evidence/ncu-single-pass.json"], **APPROVED))
    bad = repo.commit("feat(kernels): partial kernel, and a wider stage B for the profiling script", who=ADA)
    findings = repo.check()
    find(findings, "G0", "tools/profile.sh", bad, "outside the scope of the stage")
    find(findings, "G8", CONFIG, text="the design-gates configuration")


def test_the_base_s_configured_scope_admits_what_it_names(repo):
    shas = walk(repo, "A")
    repo.write(CONFIG, "profiles:\n  stacked:\n    scopes:\n      B: ['kernels/**', 'tests/**', 'tools/**']\n")
    repo.commit("config: stage B may add profiling scripts", who=MAX)
    repo.branch("b-with-tool")
    repo.write("tools/profile.sh", "#!/bin/sh\n")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write("docs/design/splitkv.md", record_text(
        "splitkv", stage="B", closed={"A": shas["A"]}, covers=("kernels/decode_attention/**", "kernels/decode_layer.py"),
        evidence=["docs/evidence/ncu-single-pass.json"], **APPROVED))
    repo.commit("feat(kernels): partial kernel with its profiling script", who=ADA)
    assert repo.check() == []


def test_records_in_a_configured_folder_are_found_in_the_history(repo):
    repo.write(CONFIG, "records: [rfcs]\n")
    repo.commit("config: records live in rfcs/", who=MAX)
    repo.branch("a-rfc")
    repo.write("rfcs/splitkv.md", record_text("splitkv", stage="B"))
    repo.commit("docs(design): split-KV record", who=ADA)
    find(repo.check(), "G0", "rfcs/splitkv.md", text="a new record starts at stage A, this one claims B")


def test_the_record_gates_also_judge_a_change_by_the_base_configuration(repo):
    from gates.checks.runner import check_records
    from gates.history.git_repo import load_change_set

    def schema_valid(**kw):
        extra = {"unknowns": [], "claim_level": "kernel", "independence": {"defect": False, "note": "none"},
                 "self_check": {f"G{n}": "fail" for n in range(9)}}
        return single(**{**kw, "evidence": (), "extra": extra})

    single_pr(repo, record=schema_valid, also={CONFIG: BOTH})
    change = load_change_set(repo.root, "main")
    try:
        with_base = check_records([], repo.root, gates=["G0"], change=change)
    finally:
        change.close()
    messages = [f.message for record in with_base.records if record.path == REC for f in record.findings()]
    assert any("process 'single-pr' is not allowed by the configuration (the defaults: stacked)" in m
               for m in messages), messages
    working_tree = check_records([], repo.root, gates=["G0"])  # without --base: the tree's own configuration
    assert not any("is not allowed" in f.message for record in working_tree.records for f in record.findings())
