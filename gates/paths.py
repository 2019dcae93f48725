"""Keep every path a record or an artifact names inside the repository."""

from __future__ import annotations

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


def resolve_inside(repo_root: Path, rel_path: str, base: Path | None = None) -> Path | None:
    """`rel_path` resolved (symlinks followed) against `base` or the repository root.

    Returns None when the result lies outside the repository.
    """
    root = Path(repo_root).resolve()
    start = base if base is not None else root
    try:
        target = (start / rel_path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if target != root and root not in target.parents:
        return None
    return target


def to_rel(repo_root: Path, path: Path) -> str:
    """POSIX path of `path` relative to the repository root (the path itself if outside)."""
    root = Path(repo_root).resolve()
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()
