"""`gate-check --head REV` reads a commit's files as stored, whatever the commit's own .gitattributes say."""

from __future__ import annotations

import os

from gates.history.git_repo import checked_out_tree
from gitrepo_builder import GitRepo


def _repo(tmp_path) -> tuple[GitRepo, str]:
    repo = GitRepo(tmp_path / "repo")
    repo.write("docs/design/x.md", "---\nid: x\n---\n$Format:%H$\n")
    repo.write(".gitattributes", "docs/design/*.md export-ignore export-subst\n")
    repo.write("scripts/run.sh", "#!/bin/sh\necho ok\n")
    (repo.root / "scripts/run.sh").chmod(0o755)
    (repo.root / "inside").symlink_to("docs/design/x.md")
    (repo.root / "outside").symlink_to("/etc/passwd")
    return repo, repo.commit("a record the attributes would hide")


def test_export_ignore_cannot_hide_a_file(tmp_path):
    repo, sha = _repo(tmp_path)
    with checked_out_tree(repo.root, sha) as tree:
        assert (tree / "docs/design/x.md").read_text() == "---\nid: x\n---\n$Format:%H$\n"


def test_modes_are_kept_and_only_links_inside_the_tree_are_made(tmp_path):
    repo, sha = _repo(tmp_path)
    with checked_out_tree(repo.root, sha) as tree:
        assert os.access(tree / "scripts/run.sh", os.X_OK)
        assert (tree / "inside").is_symlink() and (tree / "inside").read_text().startswith("---")
        assert not (tree / "outside").exists() and not (tree / "outside").is_symlink()


def test_the_folder_is_removed_afterwards(tmp_path):
    repo, sha = _repo(tmp_path)
    with checked_out_tree(repo.root, sha) as tree:
        assert tree.is_dir()
    assert not tree.exists()
