"""Design records: Markdown files with YAML front matter and a §-numbered body.

`load_record` reads a file from the working tree; `parse_record` parses text from
anywhere (the history checks use it for a record's text at the base commit). Both
treat the input as untrusted: size limit, UTF-8 with or without BOM, safe YAML
only (see `gates.model.safe_yaml`), and every path the front matter names must stay
inside the repository. Any problem raises `InputError` with the file and line.
Schema validation is not done here: it is gate G0's first check, so that a record
with a wrong field fails G0 at that field's line instead of being unreadable.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote

from gates.model.errors import InputError
from gates.model.markdown_body import Link, Section, iter_links, prose_lines, split_sections
from gates.model.paths import file_name_problem, path_problem, printable_path, resolve_inside, to_rel
from gates.model.safe_yaml import load_yaml

DEFAULT_MAX_RECORD_BYTES = 1024 * 1024
STAGES = ("A", "B", "C", "D")
__all__ = ["Link", "Record", "Section", "STAGES", "iter_links", "load_record", "parse_record", "prose_lines"]


def max_record_bytes() -> int:
    """The size limit for one record: 1 MiB, or `DESIGN_GATES_MAX_RECORD_BYTES`."""
    value = os.environ.get("DESIGN_GATES_MAX_RECORD_BYTES")
    if value:
        try:
            return max(int(value), 1)
        except ValueError:
            pass
    return DEFAULT_MAX_RECORD_BYTES


@dataclass
class Record:
    path: Path
    rel_path: str
    repo_root: Path
    front_matter: dict
    body: str
    body_start_line: int
    key_lines: dict = field(default_factory=dict, repr=False)

    @property
    def id(self) -> str | None:
        value = self.front_matter.get("id")
        return value if isinstance(value, str) else None

    @property
    def stage(self) -> str | None:
        value = self.front_matter.get("stage")
        return value if value in STAGES else None

    @property
    def record_status(self) -> str | None:
        value = self.front_matter.get("record_status")
        return value if isinstance(value, str) else None

    def line_of(self, *keys) -> int:
        """Line of a front-matter key path, falling back to the nearest parent (or line 1)."""
        path = tuple(keys)
        while path:
            line = self.key_lines.get(path)
            if line is not None:
                return line
            path = path[:-1]
        return 1

    def get(self, *keys, default=None):
        """Front-matter value at a key path, or `default` when any step is missing."""
        value = self.front_matter
        for key in keys:
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
                value = value[key]
            else:
                return default
        return value

    @cached_property
    def sections(self) -> list[Section]:
        return split_sections(self.body, self.body_start_line)

    def section(self, number: int) -> Section | None:
        for section in self.sections:
            if section.number == number:
                return section
        return None

    @cached_property
    def links(self) -> list[Link]:
        """Every Markdown link in the body outside code, with its line."""
        found = []
        for line_no, line in prose_lines(self.body, self.body_start_line):
            for start, _, text, target in iter_links(line):
                found.append(Link(text, target, line_no, start + 1))
        return found

    def link_target_rel(self, target: str) -> str | None:
        """Repository-relative path a body link points at, or None (external, anchor, outside)."""
        cache = self.__dict__.setdefault("_link_targets", {})
        if target not in cache:
            cache[target] = self._link_target_rel(target)
        return cache[target]

    def _link_target_rel(self, target: str) -> str | None:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return None
        bare = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not bare:
            return None
        resolved = resolve_inside(self.repo_root, bare, base=self.path.parent)
        if resolved is None:
            return None
        return to_rel(self.repo_root, resolved)

    @cached_property
    def cited_paths(self) -> set[str]:
        """Repository-relative paths of every file the body links to."""
        return {rel for link in self.links if (rel := self.link_target_rel(link.target))}


def question_decisions(questions) -> dict:
    """Question id -> its decision (None when not made), from a record's `questions` list as written."""
    return {q.get("id"): q.get("decision") for q in questions if isinstance(q, dict)} if isinstance(questions, list) else {}


def decode_record_bytes(raw: bytes, rel_path: str) -> str:
    """UTF-8 text of a record (a BOM is dropped); invalid bytes name their line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(rel_path, line, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", col=col) from None
    return text[1:] if text.startswith("\ufeff") else text


def load_record(path, repo_root, *, max_bytes: int | None = None) -> Record:
    """Read and parse the record at `path` (inside `repo_root`). Raises `InputError`."""
    repo_root = Path(repo_root).resolve()
    path = Path(path)
    if not path.is_absolute():
        path = Path.cwd() / path
    shown = to_rel(repo_root, path)
    name_problem = file_name_problem(shown)
    if name_problem:
        raise InputError(printable_path(shown), 1, name_problem)
    resolved = resolve_inside(repo_root, str(path))
    if resolved is None:
        raise InputError(shown, 1, "record lies outside the repository (after following symlinks)")
    limit = max_bytes or max_record_bytes()
    try:
        size = resolved.stat().st_size
        if not resolved.is_file():
            raise InputError(shown, 1, "not a regular file")
        if size > limit:
            raise InputError(shown, 1, f"record is {size} bytes, over the {limit}-byte limit")
        with open(resolved, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(shown, 1, f"cannot read record: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise InputError(shown, 1, f"record is over the {limit}-byte limit")
    text = decode_record_bytes(raw, shown)
    return _parse(text, shown, repo_root, path.parent / path.name)


def parse_record(text: str, rel_path: str, repo_root, *, max_bytes: int | None = None) -> Record:
    """Parse record text (for example a record as it was at the base commit)."""
    repo_root = Path(repo_root).resolve()
    limit = max_bytes or max_record_bytes()
    if len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit:
        raise InputError(rel_path, 1, f"record is over the {limit}-byte limit")
    if text.startswith("\ufeff"):
        text = text[1:]
    problem = path_problem(rel_path)
    if problem:
        raise InputError(rel_path, 1, problem)
    return _parse(text, rel_path, repo_root, repo_root / rel_path)


def _parse(text: str, rel_path: str, repo_root: Path, path: Path) -> Record:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise InputError(rel_path, 1, "a design record starts with a '---' line that opens its YAML front matter")
    closing = None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            closing = index
            break
    if closing is None:
        raise InputError(rel_path, 1, "front matter is not closed by a '---' line")
    document = load_yaml("\n".join(lines[1:closing]), rel_path, line_offset=1)
    if not isinstance(document.data, dict):
        raise InputError(rel_path, 2, "front matter must be a YAML mapping of keys to values")
    record = Record(
        path=path,
        rel_path=rel_path,
        repo_root=repo_root,
        front_matter=document.data,
        body="\n".join(lines[closing + 1:]),
        body_start_line=closing + 2,
        key_lines=document.lines,
    )
    _check_declared_paths(record)
    return record


def declared_paths(record: Record):
    """(key path, value) of every front-matter field that names a repository path."""
    fm = record.front_matter
    covers = fm.get("covers")
    if isinstance(covers, list):
        for index, value in enumerate(covers):
            yield ("covers", index), value
    evidence = fm.get("evidence")
    if isinstance(evidence, list):
        for index, item in enumerate(evidence):
            if isinstance(item, dict) and "path" in item:
                yield ("evidence", index, "path"), item["path"]
    for keys in (("numeric_contract", "suite"), ("bitwise", "suite"), ("bitwise", "fingerprints", "path")):
        value = record.get(*keys)
        if value is not None:
            yield keys, value


def _check_declared_paths(record: Record) -> None:
    for keys, value in declared_paths(record):
        if not isinstance(value, str):
            continue
        problem = path_problem(value)
        if problem:
            raise InputError(record.rel_path, record.line_of(*keys), f"{'.'.join(map(str, keys))}: {problem}")
