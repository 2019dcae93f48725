"""What a G5 import reading must leave as it found it: the files the checks read from after it.

An import reading runs the code of the change it reads (`gates.python_api.imported_surface`), with the checker's
own rights. Whatever it writes inside its checkout is undone before the next reading (`gates.history.reused_
checkouts`), and whatever it starts ends with it (`gates.python_api.reaper`, `gates.python_api.import_server`).
What it could write elsewhere and what the checks read after it is taken here, as file states (path, size, inode,
modification and change times: a write changes the change time, which no process can set back), before and after
each reading:

- the repository's git data (`gates.history.git_repo`): a replacement ref or a rewritten object would change what
  every later commit of a history run is judged on;
- the checker's own package (`gates/`) and the files of the distributions it depends on (PyYAML, jsonschema,
  GitPython and the rest, as their installed file lists name them), which later imports of their modules would
  load. Their compiled bytecode is no longer read from `__pycache__` once the first import reading runs: the
  process then reads bytecode only under a folder of a name no other process knows (`sys.pycache_prefix`, with
  `sys.dont_write_bytecode`), which must stay absent;
- the global and system git configuration (`~/.gitconfig`, `~/.config/git/config`, `/etc/gitconfig`), which every
  later git command reads;
- what every later Python process runs at its start: the files directly in the site-packages folders (`.pth`
  files, `sitecustomize.py`) and in the user's site-packages folder.

A difference stops the check (`GitContextError`, exit 2) naming the first changed file.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Callable

import gates
from gates.python_api.import_server import site_folders

_CHECKER = Path(gates.__file__).resolve().parent


def checker_state() -> tuple:
    """The states of the checker's package files and its dependencies' files, of the folder its bytecode is read
    from, of the global and system git configuration and of the files directly in the site-packages folders."""
    found = []
    for top in (_CHECKER, _bytecode_folder()):
        for root, folders, files in os.walk(top):
            folders[:] = [name for name in folders if name != "__pycache__" or top != _CHECKER]
            found.extend(file_state(os.path.join(root, name)) for name in files if not name.endswith(".pyc")
                         or top != _CHECKER)
    found.extend(file_state(path) for path in _dependency_files())
    found.extend(file_state(path) for path in _git_config_files())
    for folder in _site_folders():
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        found.extend(file_state(os.path.join(folder, name)) for name in names
                     if os.path.isfile(os.path.join(folder, name)))
    return tuple(found)


def left_as_found(read_git: Callable[[], tuple]) -> Callable[[], str | None]:
    """Take the state now (`read_git()` and `checker_state()`); the returned function says the first file whose state
    differs from it then, or None."""
    before = (read_git(), checker_state())

    def first_change() -> str | None:
        return first_difference(before[0], read_git()) or first_difference(before[1], checker_state())
    return first_change


def first_difference(before: tuple, after: tuple) -> str | None:
    """The first file (by path) whose state differs between two lists of `(folder, name, ...)` states; None if none."""
    if before == after:
        return None
    old, new = {item[:2]: item for item in before}, {item[:2]: item for item in after}
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return os.path.join(*key)
    return "?"


@lru_cache(maxsize=None)
def _bytecode_folder() -> str:
    """A folder of a name no other process knows, which does not exist: from now on the only place this process
    reads or writes compiled bytecode (it writes none), so a `.pyc` an import reading writes beside a module the
    checker has not imported yet is never read. Nothing is left to remove when the process is killed."""
    folder = os.path.join(tempfile.gettempdir(), f"design-gates-bytecode-{secrets.token_hex(16)}")
    sys.dont_write_bytecode = True
    sys.pycache_prefix = folder
    return folder


@lru_cache(maxsize=None)
def _dependency_files() -> tuple[str, ...]:
    """The installed files of the distributions the checker depends on (its requirements, without extras, and
    theirs), `__pycache__` left out."""
    seen, pending, files = set(), ["design-gates"], []
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for requirement in distribution.requires or []:
            named = re.match(r"[A-Za-z0-9._-]+", requirement)
            if named and "extra ==" not in requirement.replace('"', "").replace("'", ""):
                pending.append(named.group(0))
        files.extend(str(distribution.locate_file(file)) for file in distribution.files or []
                     if "__pycache__" not in file.parts)
    return tuple(files)


def _git_config_files() -> list[str]:
    """The configuration files every git command reads besides the repository's own (global and system)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    named = [os.environ.get("GIT_CONFIG_GLOBAL"), os.environ.get("GIT_CONFIG_SYSTEM")]
    return sorted({path for path in [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"),
                                     "/etc/gitconfig", *named] if path})


def _site_folders() -> list[str]:
    return site_folders(user=True)


def file_state(path: str) -> tuple:
    """(folder, name, size, inode, modification and change times) of the file at `path`; (folder, name, None) where
    there is none."""
    folder, name = os.path.split(path)
    try:
        status = os.lstat(path)
    except OSError:
        return (folder, name, None)
    return (folder, name, status.st_size, status.st_ino, status.st_mtime_ns, status.st_ctime_ns)
