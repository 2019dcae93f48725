"""A history run's checkouts are kept and brought to each next tree: what a reader then finds is exactly what a
fresh checkout of that tree holds, whatever an import did to the folder before (`gates.history.reused_checkouts`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from gates.history.git_repo import checked_out_tree
from gates.history.reused_checkouts import reused_checkouts
from gates.model.errors import GitContextError
from gitrepo_builder import GitRepo


def _contents(folder: Path) -> dict[str, tuple]:
    """Every path below `folder`: a folder's mode, a file's mode, link count and SHA-256, a link's target."""
    found = {}
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(parent, name)
            status = os.lstat(path)
            relative = os.path.relpath(path, folder)
            if os.path.islink(path):
                found[relative] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[relative] = ("folder", status.st_mode)
            else:
                found[relative] = ("file", status.st_mode, status.st_nlink,
                                   hashlib.sha256(Path(path).read_bytes()).hexdigest())
    return found


def _fresh(repo: GitRepo, sha: str, whole=None) -> dict[str, tuple]:
    with checked_out_tree(repo.root, sha, whole) as folder:
        return _contents(folder)


def _history(tmp_path) -> tuple[GitRepo, list[str]]:
    """Commits that add, change, delete, make executable, turn a file into a link and back, a file into a folder."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/__init__.py", "from .impl import run\n")
    repo.write("pkg/impl.py", "def run(x):\n    return x\n")
    repo.write("pkg/gone.py", "A = 1\n")
    repo.write("pkg/tool.py", "B = 2\n")
    repo.write("pkg/sub/deep.py", "C = 3\n")
    repo.write("README.md", "readme\n")
    repo.write("docs/guide.md", "guide\n")
    shas = [repo.commit("first")]
    repo.write("pkg/impl.py", "def run(x, y=0):\n    return x + y\n")
    repo.delete("pkg/gone.py")
    (repo.root / "pkg/tool.py").chmod(0o755)
    (repo.root / "pkg/alias.py").symlink_to("impl.py")
    (repo.root / "pkg/outside.py").symlink_to("/etc/passwd")
    shas.append(repo.commit("change, delete, make executable, link"))
    (repo.root / "pkg/alias.py").unlink()
    repo.write("pkg/alias.py", "D = 4\n")
    repo.delete("pkg/sub/deep.py")
    repo.write("pkg/sub", "now a file\n")
    (repo.root / "pkg/tool.py").chmod(0o644)
    repo.write("pkg/gone/__init__.py", "E = 5\n")
    shas.append(repo.commit("link to file, folder to file, file to folder"))
    return repo, shas


@pytest.mark.parametrize("whole", [None, ["pkg"]])
def test_each_checkout_holds_what_a_fresh_one_holds(tmp_path, whole):
    repo, shas = _history(tmp_path)
    fresh = {sha: _fresh(repo, sha, whole) for sha in shas}
    with reused_checkouts():
        for sha in shas + shas[::-1]:
            with checked_out_tree(repo.root, sha, whole) as folder:
                assert _contents(folder) == fresh[sha]
                assert folder.name.startswith(f"tree-{sha[:12]}-")


def test_a_file_deleted_in_the_next_commit_is_gone(tmp_path):
    repo, shas = _history(tmp_path)
    with reused_checkouts():
        with checked_out_tree(repo.root, shas[0], ["pkg"]) as folder:
            assert (folder / "pkg/gone.py").is_file()
        with checked_out_tree(repo.root, shas[1], ["pkg"]) as reused:
            assert reused.parent == folder.parent
            assert not (reused / "pkg/gone.py").exists()
            assert not folder.exists()  # the same folder, renamed for the commit it now holds


def test_what_an_import_changed_is_undone_before_the_next_checkout(tmp_path):
    repo, shas = _history(tmp_path)
    with reused_checkouts():
        with checked_out_tree(repo.root, shas[1], ["pkg"]) as folder:
            impl = folder / "pkg/impl.py"
            stamp = impl.stat()
            impl.write_bytes(impl.read_bytes().replace(b"x + y", b"y + x"))  # the same size
            os.utime(impl, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and the same time
            (folder / "pkg/tool.py").chmod(0o644)
            (folder / "pkg/__init__.py").unlink()
            (folder / "pkg/__init__.py").symlink_to("impl.py")
            (folder / "pkg/planted.py").write_text("import os\n")
            (folder / "pkg/__pycache__").mkdir()
            (folder / "pkg/__pycache__/impl.cpython-311.pyc").write_bytes(b"\0")
            os.link(folder / "README.md", tmp_path / "outside-name")
            (folder / "pkg/sub").chmod(0o500)
        with checked_out_tree(repo.root, shas[1], ["pkg"]) as again:
            assert again == folder
            assert _contents(again) == _fresh(repo, shas[1], ["pkg"])
            assert (tmp_path / "outside-name").read_text() == "readme\n"  # a new file, not the linked one


def test_a_folder_that_cannot_be_read_back_is_written_afresh(tmp_path, monkeypatch):
    repo, shas = _history(tmp_path)
    with reused_checkouts():
        with checked_out_tree(repo.root, shas[0]) as folder:
            (folder / "docs").rename(folder / "docs-moved")
        real_scandir, failed = os.scandir, []

        def scandir_failing_once(path):
            if not failed:
                failed.append(path)
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir_failing_once)
        with checked_out_tree(repo.root, shas[2]) as again:
            assert failed
            assert _contents(again) == _fresh(repo, shas[2])


def test_links_are_made_again_in_the_order_a_fresh_checkout_makes_them(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/sub/deep.py", "")
    (repo.root / "a").symlink_to("b/../../x")  # made before `b`: leads out of the tree, so it is not made
    (repo.root / "b").symlink_to("pkg/sub")  # had `b` been there, `a` would lead to `x` inside the tree
    sha = repo.commit("a link that leads inside only through a link made after it")
    fresh = _fresh(repo, sha)
    assert "b" in fresh and "a" not in fresh
    with reused_checkouts():
        for _ in range(2):
            with checked_out_tree(repo.root, sha) as folder:
                assert _contents(folder) == fresh


def test_every_folder_is_removed_when_the_run_ends(tmp_path):
    repo, shas = _history(tmp_path)
    with reused_checkouts():
        with checked_out_tree(repo.root, shas[0], ["pkg"]) as base, checked_out_tree(repo.root, shas[1], ["pkg"]) as head:
            assert base != head and base.is_dir() and head.is_dir()
        with checked_out_tree(repo.root, shas[2]) as whole:
            assert whole.is_dir()
        parent = whole.parent
        assert parent.is_dir()
    assert not parent.exists()


def test_two_checkouts_in_use_at_once_never_share_a_folder(tmp_path):
    repo, shas = _history(tmp_path)
    with reused_checkouts():
        for _ in range(2):
            with checked_out_tree(repo.root, shas[0], ["pkg"]) as base, \
                    checked_out_tree(repo.root, shas[0]) as whole:
                assert base != whole
                assert _contents(base) == _fresh(repo, shas[0], ["pkg"])
                assert _contents(whole) == _fresh(repo, shas[0])


def test_a_file_the_clone_lacks_stops_the_checkout(tmp_path):
    repo, shas = _history(tmp_path)
    blob = repo.git("rev-parse", f"{shas[1]}:pkg/impl.py")
    objects = repo.root / ".git/objects"
    (objects / blob[:2] / blob[2:]).unlink()
    with reused_checkouts(), pytest.raises(GitContextError, match=blob[:12]):
        with checked_out_tree(repo.root, shas[1], ["pkg"]):
            pass
