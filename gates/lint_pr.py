"""Check a pull-request description, as edited by hand, against G7 and the required sections.

    gate-check lint-pr --body-file pr.md [more.md ...] [--record docs/design/<id>.md]

The description must name its design record (the marker `gate-check pr-body`
writes, a `docs/design/<id>.md` path, or `--record`) and carry the sections
Why, Design, Decisions, Validation (with what was run and what was not),
Limitations, Follow-ups and Gates, in English or Chinese. Then G7 holds for it as
for the record: an end-to-end claim needs the record at `claim_level: e2e` with
a cited e2e artifact (same detector as the gate), and every measured number in
the Validation section appears in one of the record's evidence artifacts.

Findings print as `path:line:col: G7 error: message`. Exit codes: 0 clean,
1 findings, 2 the file or the record cannot be read.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gates.errors import InputError, UsageError
from gates.evidence import EvidenceStore
from gates.findings import Finding
from gates.g7_claims import MIN_SAMPLES, find_claims_in_text
from gates.paths import to_rel
from gates.pr_body import MARKER_PATTERN
from gates.quoted_numbers import matches, numbers_with_units, numeric_leaves, strip_code_spans
from gates.record import decode_record_bytes, load_record, prose_lines

MAX_BODY_BYTES = 256 * 1024
RECORD_PATH = re.compile(r"docs/design/[A-Za-z0-9._-]+\.md")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
REQUIRED = {
    "Why": ("why", "diagnos", "为什么", "诊断"),
    "Design": ("design", "设计"),
    "Decisions": ("decision", "决议", "决定"),
    "Validation": ("validation", "验证"),
    "Limitations": ("limitation", "限制"),
    "Follow-ups": ("follow", "后续"),
    "Gates": ("gate", "门禁"),
}
RUN = ("what was run", "已运行")
NOT_RUN = ("what was not run", "not run", "未运行")


def add_arguments(parser) -> None:
    parser.add_argument("--body-file", type=Path, nargs="+", required=True, metavar="FILE",
                        help="the pull-request description (Markdown); several files are checked one by one")
    parser.add_argument("--record", type=Path, help="the design record it describes (default: the one the body names)")


def run(args, repo_root: Path) -> int:
    failed = False
    for body_file in args.body_file:
        findings = lint(body_file, repo_root, record_path=args.record)
        for finding in findings:
            print(finding.format_text())
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            failed = True
            print(f"gate-check lint-pr: {len(errors)} problem(s) in {to_rel(repo_root, body_file)}", file=sys.stderr)
    return 1 if failed else 0


def lint(body_file: Path, repo_root: Path, *, record_path: Path | None = None) -> list[Finding]:
    """Every finding for the description in `body_file`."""
    shown = to_rel(Path(repo_root), Path(body_file))
    try:
        raw = Path(body_file).read_bytes()
    except OSError as exc:
        raise InputError(shown, 1, f"cannot read the description: {exc.strerror or exc}") from None
    if len(raw) > MAX_BODY_BYTES:
        raise InputError(shown, 1, f"the description is over the {MAX_BODY_BYTES}-byte limit")
    text = decode_record_bytes(raw, shown).replace("\r\n", "\n")
    findings: list[Finding] = []

    def add(gate: str, line: int, message: str, col: int = 1) -> None:
        findings.append(Finding(gate, shown, line, col, message))

    sections = _sections(text)
    for name, words in REQUIRED.items():
        if not any(any(w in title.lower() for w in words) for title, _, _ in sections):
            add("G0", 1, f"the description has no {name} section (a heading with {' / '.join(words)})")
    validation = next(((s, e) for t, s, e in sections if any(w in t.lower() for w in REQUIRED["Validation"])), None)
    if validation:
        titles = [t.lower() for t, s, _ in sections if validation[0] <= s <= validation[1]]
        block = text.split("\n")[validation[0] - 1:validation[1]]
        said = "\n".join(titles + [line.lower() for line in block])
        if not any(w in said for w in NOT_RUN):
            add("G0", validation[0], "the Validation section does not say what was not run")
        if not any(w in said for w in RUN):
            add("G0", validation[0], "the Validation section does not say what was run")
    record = _record(text, repo_root, record_path, shown, add)
    artifacts = _artifacts(record, repo_root) if record is not None else []
    _check_claims(text, record, artifacts, add)
    if validation:
        _check_numbers(text, validation, artifacts, record, add)
    return sorted(findings, key=lambda f: (f.line, f.col, f.gate, f.message))


def _sections(text: str) -> list[tuple[str, int, int]]:
    """(title, first line, last line) of every heading outside code, last line inclusive."""
    lines = text.split("\n")
    heads = [(n, HEADING.match(line)) for n, line in prose_lines(text, 1)]
    heads = [(n, len(m.group(1)), m.group(2)) for n, m in heads if m]
    found = []
    for index, (line_no, level, title) in enumerate(heads):
        end = len(lines)
        for later_line, later_level, _ in heads[index + 1:]:
            if later_level <= level:
                end = later_line - 1
                break
        found.append((title, line_no, end))
    return found


def _record(text, repo_root, record_path, shown, add):
    if record_path is None:
        marker = MARKER_PATTERN.search(text)
        named = marker.group(1) if marker else (RECORD_PATH.search(text) or [None])[0]
        if named is None:
            add("G0", 1, "the description names no design record (docs/design/<id>.md); pass --record to choose one")
            return None
        record_path = Path(repo_root) / named
    if not Path(record_path).is_absolute():
        record_path = Path(repo_root) / record_path
    if not record_path.exists():
        raise UsageError(f"{shown}: the design record {to_rel(Path(repo_root), record_path)} does not exist")
    return load_record(record_path, repo_root)


def _artifacts(record, repo_root) -> list:
    store, loaded = EvidenceStore(repo_root), []
    for item in record.get("evidence", default=[]) or []:
        try:
            loaded.append(store.get(str(item.get("path"))))
        except InputError:
            continue
    return loaded


def _check_claims(text: str, record, artifacts, add) -> None:
    problems = []
    if record is None or record.get("claim_level") != "e2e":
        problems.append("the record's claim_level is not e2e")
    e2e = [a for a in artifacts if a.kind == "e2e"]
    if not e2e:
        problems.append("the record has no e2e evidence")
    elif not any(a.fixtures and len(a.results.get("arms") or {}) and all(
            len(arm.get("samples") or []) >= MIN_SAMPLES and arm.get("fresh_process") is True
            for arm in a.results["arms"].values()) for a in e2e):
        problems.append(f"no e2e artifact has fixture identities and >= {MIN_SAMPLES} fresh-process samples per arm")
    if not problems:
        return
    for line, col, term in find_claims_in_text(text):
        add("G7", line, f"end-to-end claim ({term!r}) without e2e evidence: {'; '.join(problems)}. "
            "Quote kernel-level results only", col)


def _check_numbers(text: str, validation, artifacts, record, add) -> None:
    leaves = [value for artifact in artifacts for value in numeric_leaves(artifact.results)]
    if record is not None:
        for tolerance in record.get("numeric_contract", "tolerances", default=[]) or []:
            leaves.extend(v for k, v in tolerance.items() if k in ("max", "min"))
    start, end = validation
    for line_no, raw in prose_lines(text, 1):
        if not start < line_no <= end or raw.lstrip().startswith("#"):
            continue
        for number in numbers_with_units(strip_code_spans(raw)):
            if not any(matches(number, value) for value in leaves):
                add("G7", line_no, f"{number.text}{number.unit} is not in any evidence artifact of the record: "
                    "every measured number in Validation traces to an artifact", number.col)
