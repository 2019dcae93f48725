"""The git adapter: what base..head changed, as plain data, and clear errors when history is missing."""

from __future__ import annotations

import dataclasses
import os
import subprocess

import pytest

from gates.history.git_repo import ChangeSet, load_change_set, parse_trailers
from gates.model.errors import GitContextError, InputError
from gitrepo_builder import ADA, BEN, MAX, RITA, GitRepo, record_text, seeded_repo

REC = "docs/design/splitkv.md"


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def test_change_set_lists_paths_commits_authors_and_trailers(repo):
    base = repo.sha("main")
    repo.branch("feature")
    repo.write("kernels/decode_attention/kernel_partial.py", "x = 1\n")
    first = repo.commit("Add the partial kernel", who=ADA, trailers=[BEN.trailer("Co-authored-by")])
    repo.write("tests/test_partial.py", "def test_it():\n    pass\n")
    second = repo.commit("Test it", who=BEN, trailers=[RITA.trailer("Reviewed-by"), "Signed-off-by: Ben <b@x>"])
    change = load_change_set(repo.root, "main")
    assert change.base == base and change.merge_base == base and change.head == second
    assert [(c.status, c.path) for c in change.changed] == [
        ("A", "kernels/decode_attention/kernel_partial.py"), ("A", "tests/test_partial.py")]
    assert [c.sha for c in change.commits] == [second, first]
    newest, oldest = change.commits
    assert oldest.author.email == ADA.email and oldest.committer.name == MAX.name
    assert [str(p) for p in oldest.trailer_people("Co-authored-by")] == [f"{BEN.name} <{BEN.email}>"]
    assert [t.key for t in newest.trailers] == ["Reviewed-by", "Signed-off-by"]
    assert newest.paths == ("tests/test_partial.py",)
    assert change.last_commit_touching("kernels/decode_attention/kernel_partial.py") == first
    assert {p.email for p, _ in change.authors()} == {ADA.email, BEN.email}


def test_change_set_is_plain_data(repo):
    repo.branch("feature")
    repo.write(REC, record_text("splitkv"))
    repo.commit("record")
    change = load_change_set(repo.root, "main")
    for item in dataclasses.fields(ChangeSet):
        value = getattr(change, item.name)
        assert "git." not in type(value).__module__, item.name
    assert change.records[0].head_front_matter["id"] == "splitkv"
    assert change.records[0].base is None


def test_renames_are_followed(repo):
    repo.branch("move")
    repo.git("mv", "kernels/decode_attention/api.py", "kernels/decode_attention/host.py")
    repo.commit("Rename the host wrappers")
    change = load_change_set(repo.root, "main")
    assert [(c.status, c.old_path, c.path) for c in change.changed] == [
        ("R", "kernels/decode_attention/api.py", "kernels/decode_attention/host.py")]
    assert change.changed_paths() == ["kernels/decode_attention/api.py", "kernels/decode_attention/host.py"]


def test_record_front_matter_before_and_after(repo):
    repo.branch("a")
    repo.write(REC, record_text("splitkv"))
    repo.commit("record")
    repo.merge("a")
    repo.branch("b")
    repo.write(REC, record_text("splitkv", status="approved", reviewers=((RITA, "approved"),)))
    repo.commit("approve")
    (record,) = load_change_set(repo.root, "main").records
    assert record.status == "M"
    assert record.base_front_matter["record_status"] == "in-review"
    assert record.head_front_matter["record_status"] == "approved"
    assert record.head.line_of("record_status") == 6


def test_read_at_and_ancestry(repo):
    seed = repo.sha("main")
    repo.branch("feature")
    repo.write("README.md", "# changed\n")
    tip = repo.commit("change the readme")
    change = load_change_set(repo.root, "main")
    assert change.read_at(seed, "README.md") == "# kernels\n"
    assert change.read_at(tip, "README.md") == "# changed\n"
    assert change.read_at(tip, "no/such/file") is None
    assert change.is_ancestor(seed, tip) and not change.is_ancestor(tip, seed)
    assert change.commit_exists(seed) and not change.commit_exists("0" * 40)
    assert not change.is_ancestor("deadbeef", "main")


def test_merge_commits_in_the_range_work(repo):
    repo.branch("feature")
    repo.write("docs/a.md", "a\n")
    repo.commit("a")
    repo.branch("side", "feature")
    repo.write("docs/b.md", "b\n")
    repo.commit("b", who=BEN)
    merged = repo.merge("side", into="feature")
    change = load_change_set(repo.root, "main", "feature")
    assert change.head == merged
    assert sorted(c.path for c in change.changed) == ["docs/a.md", "docs/b.md"]
    assert change.commits[0].is_merge and change.commits[0].paths == ()
    assert {c.author.name for c in change.commits} == {MAX.name, ADA.name, BEN.name}


def test_detached_head_is_the_default_head(repo):
    repo.branch("feature")
    repo.write("docs/a.md", "a\n")
    tip = repo.commit("a")
    repo.checkout(tip)  # detached, as CI checks out a pull request
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD") == "HEAD"
    change = load_change_set(repo.root, "main")
    assert change.head == tip and change.head_ref == "HEAD"


def test_base_may_be_ahead_of_the_merge_base(repo):
    repo.branch("feature")
    repo.write("docs/a.md", "a\n")
    repo.commit("a")
    repo.checkout("main")
    repo.write("docs/other.md", "o\n")
    main_tip = repo.commit("unrelated work on main", who=BEN)
    repo.checkout("feature")
    change = load_change_set(repo.root, "main")
    assert change.base == main_tip and change.merge_base != main_tip
    assert [c.path for c in change.changed] == ["docs/a.md"]


def test_binary_and_non_utf8_paths_do_not_crash(repo):
    repo.branch("odd")
    repo.write("docs/evidence/plot.png", bytes(range(256)) * 4)
    (repo.root / "docs").mkdir(exist_ok=True)
    with open(os.fsencode(repo.root) + b"/docs/caf\xe9.md", "wb") as handle:  # a latin-1 file name
        handle.write(b"\xff\xfe not utf-8 \x00")
    repo.write("kernels/decode_attention/api.py", b"def f(\xff):\n    pass\n")
    repo.commit("binary, a latin-1 file name and a broken module")
    change = load_change_set(repo.root, "main")
    paths = [c.path for c in change.changed]
    assert "docs/evidence/plot.png" in paths
    assert "docs/caf\\xe9.md" in paths
    assert change.read_bytes_at(change.head, "docs/evidence/plot.png")[:4] == bytes(range(4))
    with pytest.raises(InputError) as error:
        change.read_at(change.head, "kernels/decode_attention/api.py")
    assert error.value.line == 1 and "not valid UTF-8" in error.value.message
    from gates.history import check_change

    findings = check_change(change, {}, repo.root)
    assert any(f.gate == "G5" and "not valid UTF-8" in f.message for f in findings)
    for finding in findings:
        finding.format_text().encode("utf-8")


def test_a_record_that_does_not_parse_at_head_is_a_g0_finding(repo):
    repo.branch("broken")
    repo.write(REC, "---\nid: splitkv\nid: twice\n---\n")
    bad = repo.commit("broken record")
    from gates.history import check_change

    change = load_change_set(repo.root, "main")
    assert change.records[0].head.error is not None
    (finding,) = [f for f in check_change(change, {}, repo.root) if f.path == REC]
    assert finding.gate == "G0" and finding.line == 3 and "duplicate key" in finding.message
    assert finding.commit == bad


def test_unknown_base_says_what_to_fetch(repo):
    with pytest.raises(GitContextError) as error:
        load_change_set(repo.root, "origin/release-7")
    message = str(error.value)
    assert "base ref 'origin/release-7'" in message and "git fetch origin release-7" in message
    assert "fetch-depth: 0" in message


def test_unknown_head_is_a_git_context_error(repo):
    with pytest.raises(GitContextError, match="head ref 'nope'"):
        load_change_set(repo.root, "main", "nope")


def test_not_a_repository(tmp_path):
    with pytest.raises(GitContextError, match="not a git repository"):
        load_change_set(tmp_path, "main")


def test_shallow_clone_says_to_fetch_full_history(repo, tmp_path):
    repo.write("docs/a.md", "a\n")
    repo.commit("second commit on main")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)], check=True)
    with pytest.raises(GitContextError) as error:
        load_change_set(clone, "origin/main")
    assert "shallow" in str(error.value) and "fetch-depth: 0" in str(error.value)
    assert "git fetch --unshallow" in str(error.value)


def test_unrelated_histories_are_a_git_context_error(repo, tmp_path):
    other = GitRepo(tmp_path / "other")
    other.write("x.md", "x\n")
    other.commit("other root")
    repo.git("fetch", "-q", str(other.root), "main:other")
    with pytest.raises(GitContextError, match="share no history"):
        load_change_set(repo.root, "other")


@pytest.mark.parametrize(
    "block, expected",
    [
        pytest.param("Co-authored-by: Ben Sato <ben@x>\n", [("Co-authored-by", "Ben Sato", "ben@x")], id="co-author"),
        pytest.param("approved-by: rita@x\n", [("Approved-by", "rita@x", "")], id="lowercase-key-bare-email"),
        pytest.param("Acked-by: A <a@x>\nReviewed-by: R <r@x>\n", [("Reviewed-by", "R", "r@x")], id="other-keys-ignored"),
        pytest.param("Signed-off-by: A <a@x>\n", [("Signed-off-by", "A", "a@x")], id="sign-off"),
        pytest.param("", [], id="none"),
    ],
)
def test_parse_trailers(block, expected):
    assert [(t.key, t.person.name, t.person.email) for t in parse_trailers(block)] == expected
