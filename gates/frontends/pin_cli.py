"""Record the SHA-256 of each evidence file in a design record's front matter.

    gate-check pin RECORD [RECORD...] [--check]

For each `evidence` entry of each record, the file at its `path` is hashed and the
entry's `sha256` set to the digest. Only the 64 hex digits change, in place: comments,
key order and layout of the front matter stay as written, and the file is replaced
atomically. An entry without a `sha256` key, a missing file, or a pin that cannot be
found on its line is reported and left alone. `--check` changes nothing and exits 1
when a pin is out of date (for a pre-commit hook or CI).

A pin says which bytes a record cites; it says nothing about who made them. Evidence
the gates must trust also carries a runner's attestation (gates/site/pages/trust-model.md).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from gates.model.atomic_write import write_atomically
from gates.model.errors import InputError
from gates.model.paths import resolve_inside
from gates.model.record import load_record

HEX = re.compile(r"[0-9a-fA-F]{64}")


def add_arguments(parser) -> None:
    parser.add_argument("records", nargs="+", type=Path, help="design record files")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a pin is out of date")


def run(args, repo_root: Path) -> int:
    stale = problems = 0
    for path in args.records:
        changes, trouble = pin_record(path, repo_root, write=not args.check)
        for line in changes:
            print(line)
        for line in trouble:
            print(line)
        stale += len(changes)
        problems += len(trouble)
    verb = "out of date" if args.check else "re-pinned"
    print(f"{stale} pin(s) {verb}, {problems} problem(s)")
    return 1 if problems or (args.check and stale) else 0


def pin_record(path: Path, repo_root: Path, *, write: bool) -> tuple[list[str], list[str]]:
    """(changed pins, problems) for one record, as `path:line: message` lines; writes when `write`."""
    record = load_record(path, repo_root)
    source = resolve_inside(Path(repo_root).resolve(), record.rel_path)
    if source is None:
        raise InputError(record.rel_path, 1, "record lies outside the repository")
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    changes, problems = [], []
    for index, entry in enumerate(record.get("evidence", default=[]) or []):
        if not isinstance(entry, dict):
            continue
        where = f"{record.rel_path}:{record.line_of('evidence', index)}"
        name = entry.get("id", f"evidence[{index}]")
        target = resolve_inside(Path(repo_root).resolve(), str(entry.get("path", "")))
        if target is None or not target.is_file():
            problems.append(f"{where}: {name}: no file at {entry.get('path')!r} inside the repository")
            continue
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        if "sha256" not in entry:
            problems.append(f"{where}: {name}: the entry has no sha256 key; add `sha256: {digest}`")
            continue
        old = entry["sha256"]
        if not isinstance(old, str):
            problems.append(f"{where}: {name}: sha256 is read as {type(old).__name__} {old!r}, not text (YAML reads "
                            f"unquoted digits as a number); write it quoted: `sha256: \"{digest}\"`")
            continue
        if old == digest:
            continue
        line_no = record.line_of("evidence", index, "sha256")
        text = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        if text.count(old) != 1 or not HEX.fullmatch(old):
            problems.append(f"{record.rel_path}:{line_no}: {name}: the pin {old!r} is not written once on its line; "
                            f"set it by hand to {digest}")
            continue
        lines[line_no - 1] = text.replace(old, digest)
        changes.append(f"{record.rel_path}:{line_no}: {name}: {old[:12]} -> {digest[:12]} ({entry.get('path')})")
    if write and changes:
        write_atomically(source, "".join(lines))
    return changes, problems
