"""`gate-check --base` end to end: exit codes, and findings that name the gate, path and commit."""

from __future__ import annotations

import json
import subprocess

import pytest

from gitrepo_builder import BEN, seeded_repo

cli = pytest.importorskip("gates.frontends.cli")


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def run(repo, capsys, *args):
    code = cli.main([*args, "--repo-root", str(repo.root)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_clean_change_exits_0(repo, capsys):
    repo.branch("docs")
    repo.write("docs/notes.md", "notes\n")
    repo.commit("docs: notes", who=BEN)
    code, out, err = run(repo, capsys, "--base", "main")
    assert code == 0, out + err


def test_a_broken_api_exits_1_with_gate_path_and_commit(repo, capsys):
    repo.branch("drop-scale")
    api = repo.read("kernels/decode_attention/api.py").replace(", *, scale=None, out=None", ", *, out=None")
    repo.write("kernels/decode_attention/api.py", api)
    bad = repo.commit("Drop scale", who=BEN)
    code, out, _ = run(repo, capsys, "--base", "main", "--format", "json")
    assert code == 1
    entries = {entry["path"]: entry for entry in json.loads(out)["records"]}
    findings = entries["kernels/decode_attention/api.py"]["gates"]["G5"]["findings"]
    assert any("parameter 'scale' removed" in f["message"] and f["commit"] == bad for f in findings)
    code, out, _ = run(repo, capsys, "--base", "main")
    assert "kernels/decode_attention/api.py:6:1: G5 error: public API break" in out
    assert f"[commit {bad[:12]}]" in out


def test_head_may_name_another_ref(repo, capsys):
    repo.branch("drop-scale")
    api = repo.read("kernels/decode_attention/api.py").replace(", *, scale=None, out=None", ", *, out=None")
    repo.write("kernels/decode_attention/api.py", api)
    repo.commit("Drop scale", who=BEN)
    repo.checkout("main")
    assert run(repo, capsys, "--base", "main")[0] == 0
    assert run(repo, capsys, "--base", "main", "--head", "drop-scale")[0] == 1


def test_a_shallow_clone_exits_2_and_says_what_to_fetch(repo, tmp_path, capsys):
    repo.write("docs/a.md", "a\n")
    repo.commit("second")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)], check=True)
    code = cli.main(["--base", "origin/main", "--repo-root", str(clone)])
    err = capsys.readouterr().err
    assert code == 2 and "fetch-depth: 0" in err and "Traceback" not in err


def test_an_unknown_base_exits_2(repo, capsys):
    code, _, err = run(repo, capsys, "--base", "origin/nope")
    assert code == 2 and "git fetch origin nope" in err


def test_with_head_the_record_gates_read_the_head_commit_not_the_working_tree(repo, capsys):
    from gitrepo_builder import record_text

    repo.write("docs/design/splitkv.md", record_text("splitkv"))
    repo.commit("docs(design): split-KV record", who=BEN)
    repo.branch("pr")
    repo.write("docs/design/splitkv.md", record_text("splitkv").replace("risk: L4", "risk: L9"))
    repo.commit("docs(design): an unknown risk level", who=BEN)
    repo.checkout("main")  # the working tree is the base: CI checked out something else
    code, out, _ = run(repo, capsys, "--base", "main", "--head", "pr", "--gate", "G0")
    assert code == 1
    assert "docs/design/splitkv.md:" in out and "'L9' is not one of" in out
    assert not (repo.root / ".git" / "design-gates").exists()
    code, out, _ = run(repo, capsys, "--base", "main", "--head", "pr", "--gate", "G0",
                       str(repo.root / "docs/design/splitkv.md"))
    assert "docs/design/splitkv.md:" in out and "'L9' is not one of" in out
    code, out, _ = run(repo, capsys, "--base", "main", "--gate", "G0")
    assert "'L9'" not in out  # without --head, the working tree


def test_with_head_a_record_only_in_the_working_tree_is_not_judged(repo, capsys):
    repo.branch("pr")
    repo.write("docs/notes.md", "notes\n")
    repo.commit("docs: notes", who=BEN)
    repo.write("docs/design/untracked.md", "---\nid: [broken\n---\n")
    assert run(repo, capsys, "--base", "main", "--head", "pr", "--gate", "G0")[0] == 0
    assert run(repo, capsys, "--base", "main", "--gate", "G0")[0] == 2  # the working tree still is judged without --head


def test_history_without_enforce_from_says_it_is_not_configured_and_passes(repo, capsys):
    code, out, err = run(repo, capsys, "--history")
    assert code == 0, out + err
    assert "history checks not configured" in err


def _enforce_from(repo, sha: str) -> str:
    from gitrepo_builder import POLICY

    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {sha}\n")
    return repo.commit("policy: judge the history from here on", who=BEN)


def test_history_judges_each_merged_commit_after_enforce_from(repo, capsys):
    from gitrepo_builder import ADA

    before = repo.sha("main")
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\nTWEAKED = 1\n")
    repo.commit("an unreviewed kernel tweak before the ratchet", who=ADA)
    start = _enforce_from(repo, before)  # the tweak is after enforce_from: it is judged
    code, out, err = run(repo, capsys, "--history")
    assert code == 1
    assert "kernels/decode_attention/api.py:1:1: G8 error: hot-path change without a design record" in out
    assert "2 commit(s) after" in err
    repo.write(".design-gates/policy.yaml", repo.read(".design-gates/policy.yaml").replace(before, start))
    repo.commit("policy: the ratchet from the policy commit", who=BEN)
    code, out, _ = run(repo, capsys, "--history")
    assert code == 1
    assert f"history.enforce_from moved from {before} to {start}" in out


def test_history_judges_a_merge_as_one_change_with_its_first_parent_as_base(repo, capsys):
    from gitrepo_builder import ADA, MAX

    seed = repo.sha("main")
    _enforce_from(repo, seed)  # the ratchet set for the first time: judged, and it needs no record
    repo.branch("feature")
    repo.write("docs/a.md", "a\n")
    repo.commit("docs: a", who=ADA)
    repo.write("docs/b.md", "b\n")
    repo.commit("docs: b", who=ADA)
    repo.merge("feature", who=MAX)
    code, out, err = run(repo, capsys, "--history")
    assert code == 0, out + err
    assert f"2 commit(s) after {seed[:12]}" in err  # the policy commit and the merge; not the merged branch's two


def test_history_setting_the_first_ratchet_together_with_a_looser_policy_is_judged(repo, capsys):
    from gitrepo_builder import POLICY

    seed = repo.sha("main")
    repo.write(".design-gates/policy.yaml", POLICY.replace("level: L4", "level: L1") + f"history:\n  enforce_from: {seed}\n")
    loosen = repo.commit("policy: the ratchet, and the kernels cooled down", who=BEN)
    code, out, _ = run(repo, capsys, "--history")
    assert code == 1
    assert "loosens the policy: kernels/decode_attention/** L4 -> L1" in out and f"[commit {loosen[:12]}]" in out


def test_the_pull_request_that_sets_the_first_ratchet_passes_its_base_check(repo, capsys):
    """`--base` judges the ratchet's own pull request as the history does: setting it loosens nothing."""
    from gitrepo_builder import POLICY

    seed = repo.sha("main")
    repo.branch("ratchet")
    _enforce_from(repo, seed)
    code, out, err = run(repo, capsys, "--base", "main")
    assert code == 0, out + err
    repo.write(".design-gates/policy.yaml", POLICY.replace("level: L4", "level: L1") + f"history:\n  enforce_from: {seed}\n")
    repo.commit("policy: and the kernels cooled down", who=BEN)
    code, out, _ = run(repo, capsys, "--base", "main")
    assert code == 1
    assert "hot-path change without a design record: .design-gates/policy.yaml is L4" in out
    assert "loosens the policy: kernels/decode_attention/** L4 -> L1" in out


def test_with_approval_sources_setting_the_first_ratchet_needs_a_record(repo, capsys):
    """Under approvals.sources the ratchet names the commit whose YAML approvals count as legacy ones: a decision."""
    from gitrepo_builder import POLICY

    signed = POLICY + "approvals:\n  sources: [signed-commit]\n  allowed_signers: .design-gates/allowed_signers\n"
    repo.write(".design-gates/allowed_signers", "rita@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB\n")
    repo.write(".design-gates/policy.yaml", signed)
    seed = repo.commit("policy: signed approvals", who=BEN)
    assert_the_ratchet_needs_a_record(repo, capsys, signed + f"history:\n  enforce_from: {seed}\n")


def assert_the_ratchet_needs_a_record(repo, capsys, policy: str) -> None:
    repo.branch("ratchet")
    repo.write(".design-gates/policy.yaml", policy)
    repo.commit("policy: judge the history from here on", who=BEN)
    code, out, _ = run(repo, capsys, "--base", "main")
    assert code == 1
    assert "hot-path change without a design record: .design-gates/policy.yaml is L4" in out


@pytest.mark.parametrize("named", ["cafe123", "HEAD"], ids=["a-tag-that-looks-like-a-commit", "a-symbolic-name"])
def test_a_first_ratchet_named_by_a_movable_ref_needs_a_record(repo, capsys, named):
    """A branch or tag named like an object id can move, and the ratchet with it."""
    from gitrepo_builder import POLICY

    repo.git("tag", "cafe123", "main")
    assert_the_ratchet_needs_a_record(repo, capsys, POLICY + f"history:\n  enforce_from: {named}\n")


def test_history_reads_the_ratchet_as_an_object_id_never_a_tag(repo, capsys):
    repo.git("tag", "cafe123", "main")
    _enforce_from(repo, "cafe123")
    code, _, err = run(repo, capsys, "--history")
    assert code == 2
    assert "history.enforce_from cafe123 is not a commit in the history" in err and "a branch or tag can move" in err


def test_history_removing_the_ratchet_is_a_finding(repo, capsys):
    from gitrepo_builder import POLICY

    _enforce_from(repo, repo.sha("main"))
    repo.write(".design-gates/policy.yaml", POLICY)
    gone = repo.commit("policy: no more ratchet", who=BEN)
    code, out, err = run(repo, capsys, "--history")
    assert code == 1 and "history checks not configured" in err
    assert ".design-gates/policy.yaml:1:1: G8 error: history.enforce_from" in out and "removed" in out
    assert f"[commit {gone[:12]}]" in out


def test_history_with_an_enforce_from_outside_the_history_exits_2(repo, capsys):
    repo.branch("side")
    side = repo.commit("a commit on a side branch", who=BEN)
    repo.checkout("main")
    _enforce_from(repo, side)
    code, _, err = run(repo, capsys, "--history")
    assert code == 2 and ".design-gates/policy.yaml:" in err and "not a commit in the history" in err


def test_history_and_base_together_are_bad_usage(repo, capsys):
    code, _, err = run(repo, capsys, "--history", "--base", "main")
    assert code == 2 and "--history" in err


def test_history_moving_the_ratchet_back_is_allowed(repo, capsys):
    from gitrepo_builder import POLICY

    root = repo.sha("main")
    repo.write("docs/a.md", "a\n")
    later = repo.commit("docs: a", who=BEN)
    _enforce_from(repo, later)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {root}\n")
    repo.commit("policy: judge from the first commit on", who=BEN)
    code, out, err = run(repo, capsys, "--history")
    assert "moved from" not in out
    assert "3 commit(s) after" in err
    assert code == 1 and "hot-path change without a design record: .design-gates/policy.yaml" in out
