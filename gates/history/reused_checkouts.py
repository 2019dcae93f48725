"""Checkouts that a history run writes once and brings up to date for each later commit.

G5's import fallback (`gates.history.api_compat._Imports`) imports a module at the base and at the head of a change,
each from a checkout of that commit's tree (`gates.history.git_repo.checked_out_tree`). A `--history` run does so
for commit after commit, and writing every checkout afresh (hundreds of new files each time) cost more than the
rest of the fallback. Inside `reused_checkouts()`, a checkout is not removed when its change is done: the next
checkout of the same kind (the same part of the tree) takes its folder and is brought to its own tree there.

Imported code runs in these folders and may have changed anything in them, so bringing a folder up to date trusts
nothing it finds there: every file the tree holds is compared byte for byte with its blob (and its mode and link
count with what was written), every folder's mode with a fresh folder's, and whatever the tree does not hold is
removed. Symbolic links are all removed and made again in the order a fresh checkout makes them, since whether a
link stays inside the folder depends on the links made before it. A folder that cannot be read back is removed
and written afresh. What an import then finds is what a fresh checkout of the tree would hold.

A tree whose paths a checkout cannot write one to one (a name repeated, a `.` or `..` part) is written afresh
every time (`reusable`).
"""

from __future__ import annotations

import os
import shutil
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator, Sequence

Item = tuple[str, str, int, str]  # (GitPython type: "blob" or "tree", path, mode, object id) of one item of a tree
ReadBlobs = Callable[[Sequence[str]], dict[str, bytes]]  # object ids -> their contents

_SYMLINK_MODE = 0o120000
_EXECUTABLE_MODE = 0o100755
_KEPT_BLOB_BYTES = 256 * 1024 * 1024  # blob contents a run keeps in memory to compare files with


@dataclass
class _Plan:
    """What a checkout of one tree holds: its folders (parents first), its files (path -> (object id, executable))
    and its symbolic links in the order a fresh checkout makes them ((path, object id))."""

    folders: dict[str, None] = field(default_factory=dict)
    files: dict[str, tuple[str, bool]] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)


def reusable(items: Sequence[Item]) -> bool:
    """Whether each item's path names one place of its own: relative, no empty, `.` or `..` part, no path twice."""
    seen = set()
    for _, path, _, _ in items:
        parts = path.split("/")
        if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts) or path in seen:
            return False
        seen.add(path)
    return True


def plan_of(items: Sequence[Item]) -> _Plan:
    """The folders, files and links a fresh checkout writes for `items` (`reusable` ones): a folder for each tree
    item and for each folder a blob lies in, including a link's that the checkout then does not make."""
    plan = _Plan()
    for kind, path, mode, sha in items:
        parents = PurePosixPath(path).parents
        for parent in reversed(parents[:-1] if len(parents) else ()):
            plan.folders.setdefault(str(parent), None)
        if kind == "tree":
            plan.folders.setdefault(path, None)
        elif mode == _SYMLINK_MODE:
            plan.links.append((path, sha))
        else:
            plan.files[path] = (sha, mode == _EXECUTABLE_MODE)
    return plan


class _BlobBytes:
    """Blob contents by object id, read in batches and kept up to `_KEPT_BLOB_BYTES` in all."""

    def __init__(self, limit: int = _KEPT_BLOB_BYTES):
        self.limit = limit
        self.kept: dict[str, bytes] = {}
        self.size = 0

    def contents(self, shas: Sequence[str], read_blobs: ReadBlobs) -> dict[str, bytes]:
        """The contents of `shas`, those not kept read with one `read_blobs` call; what is kept beyond the limit is
        dropped first, except these."""
        wanted = dict.fromkeys(shas)
        missing = [sha for sha in wanted if sha not in self.kept]
        if missing:
            fetched = read_blobs(missing)
            self.size += sum(len(data) for data in fetched.values())
            self.kept.update(fetched)
            if self.size > self.limit:
                self.kept = {sha: self.kept[sha] for sha in wanted}
                self.size = sum(len(data) for data in self.kept.values())
        return {sha: self.kept[sha] for sha in wanted}


class _Slot:
    """One reused folder: where it is, which tree it holds, and what was written there (file path -> (object id,
    whether it was made executable, the mode the file had once written))."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.key: tuple | None = None
        self.in_use = False
        self.commit: str | None = None
        self.written: dict[str, tuple[str, bool, int]] = {}


class ReusedCheckouts:
    """The checkout folders of one history run, kept from one change to the next, and the blob contents they hold."""

    def __init__(self):
        self.slots: list[_Slot] = []
        self.blobs = _BlobBytes()
        self.folder_mode: int | None = None  # the mode of a folder this process makes (its umask applied)
        self.repos: dict = {}  # whatever the git side keeps open for the run (closed by `close`)
        self.closers: list[Callable[[], None]] = []

    @contextmanager
    def checkout(self, parent: Path, commit: str, key: tuple, items: Sequence[Item],
                 read_blobs: ReadBlobs) -> Iterator[Path]:
        """A folder below `parent` holding exactly the checkout `items` describe (of `commit`; `key` names the part of
        the tree), named as a fresh one is (`tree-<commit>-<pid>`); kept for a later checkout of the same `key`."""
        slot = self._free_slot(parent, key, commit)
        slot.in_use = True
        try:
            self._name(slot, parent, commit)
            self._bring_up_to_date(slot, items, read_blobs)
            slot.commit = commit
            yield slot.folder
        finally:
            slot.in_use = False

    def close(self) -> None:
        """Remove every kept folder (and `parent` where it is left empty), and close what the git side kept open."""
        for slot in self.slots:
            shutil.rmtree(slot.folder, ignore_errors=True)
            try:
                slot.folder.parent.rmdir()
            except OSError:
                pass
        self.slots.clear()
        for closer in self.closers:
            closer()
        self.closers.clear()
        self.repos.clear()

    def _free_slot(self, parent: Path, key: tuple, commit: str) -> _Slot:
        """A slot of `key` not in use, the one that holds `commit` where there is one; a new one where none is free."""
        free = [slot for slot in self.slots if slot.key == key and not slot.in_use and slot.folder.parent == parent]
        for slot in free:
            if slot.commit == commit:
                return slot
        if free:
            return free[0]
        slot = _Slot(parent / f"unused-{len(self.slots)}-{os.getpid()}")
        slot.key = key
        self.slots.append(slot)
        return slot

    def _name(self, slot: _Slot, parent: Path, commit: str) -> None:
        """Rename the slot's folder to `tree-<commit>-<pid>`, as a fresh checkout names it (with `-<n>` added where
        another folder in use has that name); a folder of that name left by another run is removed."""
        base = f"tree-{commit[:12]}-{os.getpid()}"
        taken = {other.folder for other in self.slots if other is not slot}
        target = next(parent / name for name in [base] + [f"{base}-{n}" for n in range(1, len(self.slots) + 1)]
                      if parent / name not in taken)
        if slot.folder == target:
            return
        if os.path.lexists(target):
            _remove(target)
        if os.path.lexists(slot.folder):
            try:
                os.rename(slot.folder, target)
            except OSError:
                _remove(slot.folder)
                slot.written.clear()
        slot.folder = target

    def _bring_up_to_date(self, slot: _Slot, items: Sequence[Item], read_blobs: ReadBlobs) -> None:
        """Make the slot's folder hold exactly `items`; where reading it back fails, write it afresh."""
        plan = plan_of(items)
        contents = self.blobs.contents([sha for sha, _ in plan.files.values()] + [sha for _, sha in plan.links],
                                       read_blobs)
        try:
            self._sync(slot, plan, contents)
        except OSError:
            shutil.rmtree(slot.folder, ignore_errors=True)
            if os.path.lexists(slot.folder):  # what cannot be removed is left where it is, and unused
                slot.folder = slot.folder.with_name(slot.folder.name + "-afresh")
            slot.written.clear()
            self._sync(slot, plan, contents)

    def _sync(self, slot: _Slot, plan: _Plan, contents: dict[str, bytes]) -> None:
        root = slot.folder
        if not _is_real_folder(root):
            if os.path.lexists(root):
                _remove(root)
            root.mkdir(parents=True)
            slot.written.clear()
        if self.folder_mode is None:
            self.folder_mode = os.lstat(root).st_mode
        kept = self._keep_what_holds(slot, root, "", plan, contents)
        slot.written = {path: slot.written[path] for path in kept}
        for path in plan.folders:
            if not os.path.lexists(root / path):
                (root / path).mkdir()
        for path, (sha, executable) in plan.files.items():
            if path not in kept:
                slot.written[path] = (sha, executable, _write_file(root / path, contents[sha], executable))
        for path, sha in plan.links:
            _make_link(root, path, contents[sha])

    def _keep_what_holds(self, slot: _Slot, root: Path, folder: str, plan: _Plan,
                         contents: dict[str, bytes]) -> set[str]:
        """Walk the folder `folder` of `root` (and below): remove every link and everything the plan does not hold
        as it is found, give a planned folder a fresh folder's mode; the paths of the files kept as they are."""
        kept = set()
        where = root / folder if folder else root
        status = os.lstat(where)
        if status.st_mode != self.folder_mode:
            os.chmod(where, stat.S_IMODE(self.folder_mode))
        with os.scandir(where) as entries:
            found = list(entries)
        for entry in found:
            path = f"{folder}/{entry.name}" if folder else entry.name
            status = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode) and path in plan.folders:
                kept |= self._keep_what_holds(slot, root, path, plan, contents)
            elif stat.S_ISREG(status.st_mode) and path in plan.files and \
                    _holds(entry.path, status, plan.files[path], slot.written.get(path), contents):
                kept.add(path)
            else:
                _remove(Path(entry.path))
        return kept


def _holds(file: str, status: os.stat_result, wanted: tuple[str, bool], written: tuple[str, bool, int] | None,
           contents: dict[str, bytes]) -> bool:
    """Whether the regular file holds the blob `wanted` names (object id, executable) as it was written there: that
    blob written with that mode, the mode unchanged since, no other name for the file (a hard link), the same bytes."""
    if written is None or written[:2] != wanted or written[2] != status.st_mode or status.st_nlink != 1:
        return False
    expected = contents[wanted[0]]
    if status.st_size != len(expected):
        return False
    with open(file, "rb") as handle:
        return handle.read() == expected


def _write_file(target: Path, data: bytes, executable: bool) -> int:
    """Write a new file (a changed one is removed first, so no other name of it sees the new bytes); its mode."""
    target.write_bytes(data)
    if executable:
        target.chmod(0o755)
    return os.lstat(target).st_mode


def _make_link(root: Path, path: str, data: bytes) -> None:
    """A symbolic link of the tree, made as a fresh checkout makes it: only when it stays inside the folder, as the
    links made before it resolve."""
    target = root / path
    if not target.resolve().is_relative_to(root.resolve()):
        return
    link = os.fsdecode(data)
    if not os.path.isabs(link) and (target.parent / link).resolve().is_relative_to(root.resolve()):
        os.symlink(link, target)


def _is_real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Remove a file, link or folder (its contents too), where there is one."""
    if not os.path.islink(path) and os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


_IN_EFFECT: list[ReusedCheckouts] = []


@contextmanager
def reused_checkouts() -> Iterator[ReusedCheckouts]:
    """Checkouts made inside this block (`gates.history.git_repo.checked_out_tree`) are kept and brought up to date
    for the next one; all are removed when the block ends."""
    checkouts = ReusedCheckouts()
    _IN_EFFECT.append(checkouts)
    try:
        yield checkouts
    finally:
        _IN_EFFECT.remove(checkouts)
        checkouts.close()


def in_effect() -> ReusedCheckouts | None:
    """The innermost `reused_checkouts()` block's checkouts; None outside one."""
    return _IN_EFFECT[-1] if _IN_EFFECT else None
