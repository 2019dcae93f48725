"""Which files are design records: the plugin's ``records`` option resolved against the site.

Each entry is a directory (its ``*.md`` files other than ``index.md``, not its
subdirectories) or a glob (``docs/design/**/*.md``), relative to the directory of
``mkdocs.yml``.  Fails closed: a directory that does not exist, a glob that matches
no record and a record outside the docs directory are build errors, never an empty site.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mkdocs.exceptions import PluginError

GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class RecordSource:
    """One record file: where it is in the repository and in the docs directory."""

    repo_path: str  # relative to the repository root (the directory of mkdocs.yml)
    src_uri: str  # relative to docs_dir, as MkDocs names pages


def find_records(entries: list[str], repo_root: Path, docs_dir: Path) -> list[RecordSource]:
    """Every record the ``records`` entries name, in path order, each once."""
    if not entries:
        raise PluginError("design-gates: `records` is empty; name the directories or globs of your design records")
    found: dict[str, RecordSource] = {}
    for entry in entries:
        for path in _expand(entry, repo_root):
            source = _source(entry, path, repo_root, docs_dir)
            found.setdefault(source.repo_path, source)
    return sorted(found.values(), key=lambda s: s.repo_path)


def index_uri(entries: list[str], repo_root: Path, docs_dir: Path) -> str | None:
    """Where the records index goes: ``index.md`` in the first entry's directory (its part before any glob)."""
    if not entries:
        return None
    base = repo_root.joinpath(*_literal_prefix(entries[0]).parts).resolve()
    try:
        rel = base.relative_to(docs_dir.resolve()).as_posix()
    except ValueError:
        return None
    return "index.md" if rel == "." else f"{rel}/index.md"


def _expand(entry: str, repo_root: Path) -> list[Path]:
    pattern = PurePosixPath(entry.replace("\\", "/"))
    if pattern.is_absolute() or ".." in pattern.parts:
        raise PluginError(f"design-gates: records entry {entry!r}: use a path relative to the directory of mkdocs.yml")
    if GLOB_CHARS & set(entry):
        matches = [p for p in sorted(repo_root.glob(pattern.as_posix())) if _is_record_file(p)]
        if not matches:
            raise PluginError(f"design-gates: records glob {entry!r} matches no design record (*.md other than index.md)")
        return matches
    directory = repo_root.joinpath(*pattern.parts)
    if not directory.is_dir():
        raise PluginError(f"design-gates: records directory {entry!r} does not exist "
                          f"(relative to {repo_root}); create it or set the plugin's `records` option")
    return [p for p in sorted(directory.iterdir()) if _is_record_file(p)]


def _source(entry: str, path: Path, repo_root: Path, docs_dir: Path) -> RecordSource:
    resolved = path.resolve()
    try:
        repo_path = resolved.relative_to(repo_root.resolve()).as_posix()
    except ValueError:
        raise PluginError(f"design-gates: records entry {entry!r}: {path} is outside the repository {repo_root}") from None
    try:
        src_uri = resolved.relative_to(docs_dir.resolve()).as_posix()
    except ValueError:
        raise PluginError(f"design-gates: the record {repo_path} is outside the docs directory {docs_dir}; "
                          "MkDocs renders only pages inside it") from None
    return RecordSource(repo_path=repo_path, src_uri=src_uri)


def _is_record_file(path: Path) -> bool:
    return path.is_file() and path.suffix == ".md" and path.name != "index.md"


def _literal_prefix(entry: str) -> PurePosixPath:
    parts = []
    for part in PurePosixPath(entry.replace("\\", "/")).parts:
        if GLOB_CHARS & set(part):
            break
        parts.append(part)
    return PurePosixPath(*parts) if parts else PurePosixPath(".")
