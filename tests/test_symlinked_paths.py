"""Path rules see a file under every name a symbolic link gives it.

A kernel edited through a symbolic link that already existed in the tree passed the
hot-path policy: the diff names the file where its bytes live, and the policy matched
that name only, not the kernel path that leads to it.
"""

from __future__ import annotations

import os
import shutil

import pytest

from gitrepo_builder import ADA, MAX, seeded_repo
from gates.model.paths import link_target_path, path_names, resolved_path

LINKS = {
    "kernels/decode_attention/fast.py": "../../impl/fast.py",  # a kernel that lives elsewhere
    "kernels/current": "decode_attention",                     # a folder alias
    "vendor/etc": "../../../etc",                              # out of the repository: ignored
}


@pytest.mark.parametrize("link, target, expected", [
    ("kernels/decode_attention/fast.py", "../../impl/fast.py", "impl/fast.py"),
    ("kernels/current", "decode_attention", "kernels/decode_attention"),
    ("docs/latest", "./results/", "docs/results"),
    ("vendor/etc", "../../../etc", None),
    ("abs", "/usr/lib", None),
])
def test_a_link_target_is_read_as_a_repository_path(link, target, expected):
    assert link_target_path(link, target) == expected


def test_a_file_is_named_by_every_link_that_leads_to_it():
    assert path_names("impl/fast.py", LINKS) == (
        "impl/fast.py", "kernels/decode_attention/fast.py", "kernels/current/fast.py")
    assert path_names("kernels/current/api.py", LINKS) == ("kernels/current/api.py", "kernels/decode_attention/api.py")
    assert path_names("docs/notes.md", LINKS) == ("docs/notes.md",)


def test_a_path_resolves_to_where_its_file_lives():
    assert resolved_path("kernels/current/fast.py", LINKS) == "impl/fast.py"
    assert resolved_path("docs/notes.md", LINKS) == "docs/notes.md"
    assert resolved_path("loop/x", {"loop": "loop"}) == "loop/x"


@pytest.fixture
def linked(tmp_path):
    """main with a kernel whose bytes live in impl/, reached through a link under kernels/decode_attention/."""
    repo = seeded_repo(tmp_path / "repo")
    repo.write("impl/fast.py", "def fast():\n    return 1\n")
    (repo.root / "kernels" / "decode_attention" / "fast.py").symlink_to("../../impl/fast.py")
    repo.commit("Kernel alias", who=MAX)
    return repo


def test_a_kernel_edited_under_the_name_its_bytes_live_at_is_a_hot_path_change(linked):
    linked.branch("tweak")
    (linked.root / "kernels" / "decode_attention" / "fast.py").write_text("def fast():\n    return 2\n")
    linked.commit("Tweak the fast kernel", who=ADA)
    findings = [f for f in linked.check() if f.gate == "G8"]
    assert [f.path for f in findings] == ["impl/fast.py"]
    assert "hot-path change without a design record: impl/fast.py is L4 (through a symbolic link it is " \
           "kernels/decode_attention/fast.py: shared decode-attention hot path)" in findings[0].message


def test_a_link_that_points_elsewhere_leaves_other_files_at_their_own_level(linked):
    linked.branch("notes")
    linked.write("impl/notes.md", "notes\n")
    linked.write("docs/notes.md", "notes\n")
    linked.commit("Notes", who=ADA)
    assert [f for f in linked.check() if f.gate == "G8"] == []


def test_adding_a_link_to_the_kernels_is_a_hot_path_change(linked):
    linked.branch("retarget")
    (linked.root / "shortcut.py").symlink_to("kernels/decode_attention/api.py")
    linked.commit("A shortcut to the kernel API", who=ADA)
    findings = [f for f in linked.check() if f.gate == "G8"]
    assert [f.path for f in findings] == ["shortcut.py"]
    assert "through a symbolic link it is kernels/decode_attention/api.py" in findings[0].message


def test_a_record_covering_the_kernel_path_covers_its_file_under_every_name(linked):
    from test_series_scenarios import APPROVED, REC, split_record, walk

    shas = walk(linked, "A")
    linked.branch("b-splitkv")
    (linked.root / "kernels" / "decode_attention" / "fast.py").write_text("def fast():\n    return 2\n")
    linked.write(REC, split_record(stage="B", closed={"A": shas["A"]}, **APPROVED))
    linked.commit("feat(kernels): faster fast kernel", who=ADA)
    findings = linked.check()
    assert [f for f in findings if f.gate == "G8"] == []
    # the stage scope judges the file where it lives: impl/ is not kernels/** (configure it to allow it)
    [scope] = [f for f in findings if f.gate == "G0"]
    assert scope.path == "impl/fast.py" and "outside the scope of the stage" in scope.message


def test_a_link_whose_file_lies_outside_the_stage_scope_is_outside_it(linked):
    from test_series_scenarios import APPROVED, REC, split_record, walk

    shas = walk(linked, "A")
    linked.branch("b-splitkv")
    (linked.root / "kernels" / "decode_attention" / "readme_link.py").symlink_to("../../docs/notes.py")
    linked.write("docs/notes.py", "x = 1\n")
    linked.write(REC, split_record(stage="B", closed={"A": shas["A"]}, **APPROVED))
    linked.commit("feat(kernels): a kernel that is a docs file", who=ADA)
    messages = [f.message for f in linked.check() if f.gate == "G0"]
    assert any(m.startswith("kernels/decode_attention/readme_link.py (a symbolic link to docs/notes.py) is outside "
                            "the scope") for m in messages), messages


def test_a_suite_edited_where_its_link_leads_judges_the_change(tmp_path):
    from test_suite_integrity_judges import EXAMPLES, git, judge_change, messages

    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES, repo, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "shared").mkdir()
    os.replace(repo / "suites" / "suite_numeric.py", repo / "shared" / "suite_numeric.py")
    (repo / "suites" / "suite_numeric.py").symlink_to("../shared/suite_numeric.py")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: the suite lives in shared/, linked from suites/")
    with open(repo / "shared" / "suite_numeric.py", "a", encoding="utf-8") as handle:
        handle.write("\nLOOSER = True\n")
    assert ("shared/suite_numeric.py is edited by this change and judges it (suite suites/suite_numeric.py)"
            in messages(judge_change(repo)))


def test_a_module_imported_through_a_link_is_bound_under_the_name_its_bytes_live(tmp_path):
    """Evidence binds the module a run imported where its bytes live, whether a folder or the file is a link,
    and leaves out one whose link leads out of the repository."""
    import types

    from gates.evidence.source_binding import imported_repo_files

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "impl").mkdir(parents=True)
    outside.mkdir()
    (repo / "impl" / "fast.py").write_text("x = 1\n")
    (outside / "vendored.py").write_text("y = 2\n")
    os.symlink("impl", repo / "current")
    os.symlink("fast.py", repo / "impl" / "alias.py")
    os.symlink(outside / "vendored.py", repo / "impl" / "vendored.py")
    modules = {name: types.SimpleNamespace(__file__=str(repo / path)) for name, path in [
        ("through_folder", "current/fast.py"), ("through_file", "impl/alias.py"),
        ("through_both", "current/alias.py"), ("leaves", "impl/vendored.py"), ("up_and_back", "current/../impl/fast.py")]}
    assert imported_repo_files(repo, modules) == ["impl/fast.py"]
