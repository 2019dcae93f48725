"""Keep every path a record or an artifact names inside the repository."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path, PurePosixPath


def path_problem(rel_path: str) -> str | None:
    """Why a repository-relative path written in a record is refused, or None."""
    if not isinstance(rel_path, str) or not rel_path.strip():
        return "empty path"
    if "\x00" in rel_path:
        return "path contains a NUL byte"
    if "\\" in rel_path:
        return f"path {rel_path!r} uses backslashes; write POSIX paths"
    pure = PurePosixPath(rel_path)
    if pure.is_absolute() or (len(rel_path) > 1 and rel_path[1] == ":"):
        return f"absolute path {rel_path!r}; write it relative to the repository root"
    if ".." in pure.parts:
        return f"path {rel_path!r} climbs out with '..'; write it relative to the repository root"
    return None


def file_name_problem(path: str, shown: str | None = None) -> str | None:
    """Why a file name cannot be read as a repository path: it is not UTF-8 (as the file
    system gives it, undecodable bytes are surrogate escapes). None for a UTF-8 name."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return not_utf8_name(shown or printable_path(path))
    return None


def not_utf8_name(shown: str) -> str:
    """The error for a file name that is not UTF-8, shown with `\\xNN` for its other bytes."""
    return (f"the file name {shown} is not UTF-8; design-gates reads repository paths as UTF-8 "
            "(as records name them): rename the file")


def printable_path(path: str) -> str:
    """`path` with each byte that is not UTF-8 written as `\\xNN`, as git's paths are shown."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@lru_cache(maxsize=65536)
def _real(path: str) -> str:
    return os.path.realpath(path)


def clear_cache() -> None:
    """Forget cached resolutions (the runner calls this at the start of each run)."""
    _real.cache_clear()


def resolve_inside(repo_root: Path, rel_path: str, base: Path | None = None) -> Path | None:
    """`rel_path` resolved (symlinks followed) against `base` or the repository root.

    Returns None when the result lies outside the repository. Resolutions are
    cached for the life of the process (a run sees one tree).
    """
    root = _real(os.fspath(repo_root))
    start = _real(os.fspath(base)) if base is not None else root
    try:
        target = _real(os.path.join(start, os.fspath(rel_path)))
    except (OSError, ValueError):
        return None
    if target != root and not target.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return Path(target)


def to_rel(repo_root: Path, path: Path) -> str:
    """POSIX path of `path` relative to the repository root (the path itself if outside)."""
    root = _real(os.fspath(repo_root))
    target = _real(os.fspath(path))
    if target == root:
        return "."
    if target.startswith(root.rstrip(os.sep) + os.sep):
        return Path(os.path.relpath(target, root)).as_posix()
    return Path(path).as_posix()
