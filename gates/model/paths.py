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
    if rel_path.startswith("/") or (len(rel_path) > 1 and rel_path[1] == ":"):
        return f"absolute path {rel_path!r}; write it relative to the repository root"
    if ".." in rel_path.split("/"):  # the parts of the POSIX path: empty and "." parts drop, ".." stays
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


MAX_LINK_HOPS = 40  # as the operating system's own limit on following symbolic links


def link_target_path(link: str, target: str) -> str | None:
    """The repository path a symbolic link at `link` with content `target` points to; None
    when it points outside the repository (absolute, or climbing above the root)."""
    if not target or target.startswith("/") or "\x00" in target:
        return None
    parts: list[str] = []
    for part in PurePosixPath(link).parent.parts + PurePosixPath(target).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or None


def path_names(path: str, links: dict[str, str]) -> tuple[str, ...]:
    """Every repository path that names the same file as `path`, through the symbolic links
    `links` (link path -> link content, as the tree holds them): `path` itself, what it
    resolves to when it or a folder above it is a link, and each path through a link that
    points at it or at a folder above it. The first is `path`."""
    targets = {link: link_target_path(link, target) for link, target in links.items()}
    names = [path]
    index = 0
    while index < len(names) and len(names) <= MAX_LINK_HOPS:
        name = names[index]
        index += 1
        for link, target in targets.items():
            if target is None:
                continue
            for found in (_through(name, link, target), _through(name, target, link)):
                if found is not None and found not in names:
                    names.append(found)
    return tuple(names)


def _through(name: str, prefix: str, replacement: str) -> str | None:
    """`name` with the leading folder (or whole path) `prefix` replaced by `replacement`."""
    if name == prefix:
        return replacement
    if name.startswith(prefix + "/"):
        return replacement + name[len(prefix):]
    return None


_TARGETS: dict[int, tuple[dict[str, str], dict[str, str | None]]] = {}


def _targets(links: dict[str, str]) -> dict[str, str | None]:
    """link path -> the repository path it names (None: out of the repository), worked out once per `links` dict (a
    reader keeps one per tree)."""
    kept = _TARGETS.get(id(links))
    if kept is None or kept[0] is not links:
        if len(_TARGETS) >= 64:
            _TARGETS.clear()
        kept = _TARGETS[id(links)] = (links, {link: link_target_path(link, target) for link, target in links.items()})
    return kept[1]


def resolved_path(path: str, links: dict[str, str]) -> str:
    """Where the file at `path` lives: `path` with every symbolic link among it and its
    folders followed (`links` as in `path_names`); a link out of the repository, or a loop,
    stops the resolution where it is."""
    if not links:
        return path
    targets = _targets(links)
    for _ in range(MAX_LINK_HOPS):
        for link, target in targets.items():
            found = _through(path, link, target) if target is not None else None
            if found is not None:
                path = found
                break
        else:
            return path
    return path
