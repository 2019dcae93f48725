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
