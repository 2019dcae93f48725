"""Check a pull-request description, as edited by hand, against G7 and the required sections.

    gate-check lint-pr --body-file pr.md [more.md ...] [--record docs/design/<id>.md]

The description must name its design record (the marker `gate-check pr-body`
writes, a `docs/design/<id>.md` path, or `--record`) and carry the sections
Why, Design, Decisions, Validation (with what was run and what was not),
Limitations, Follow-ups and Gates, in English or Chinese. Then G7 holds for it as
for the record:

- every evidence artifact the description links is one the record declares, at
  the same path, and the record's SHA-256 pin verifies (a `sha256` the line
  shows must be that pin);
- an end-to-end claim obeys the rule it obeys in the record (same detector, same
  `gates.checks.e2e_evidence.claim_problems`): the record at `claim_level: e2e`, a cited
  e2e artifact whose pin verifies, measured properly, and the numbers the
  sentence quotes are that artifact's values;
- every measured number in the Validation section (its results part included)
  names one value of a pinned artifact of the record, as in §7
  (`gates.checks.number_trace`); a number that merely occurs somewhere in the artifacts
  does not count.

Findings print as `path:line:col: G7 error: message`. Exit codes: 0 clean,
1 findings, 2 the file or the record cannot be read.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gates.checks.context import GateContext
from gates.checks.e2e_evidence import (
    Candidate, backing_problems, claim_message, claim_paragraphs, claim_problems, pin_problem,
)
from gates.checks.runner import judging_policy
from gates.checks.evidence_refs import cited_evidence, declared_evidence
from gates.checks.g7_claims import declared_numbers, find_claims_in_text
from gates.checks.number_trace import CitedValues, SectionTracer, measured_numbers
from gates.checks.quoted_numbers import matches
from gates.evidence.artifacts import EvidenceStore, verify_sha256
from gates.frontends.pr_body import MARKER_PATTERN
from gates.model.config import load_settings
from gates.model.errors import InputError, UsageError
from gates.model.findings import Finding
from gates.model.markdown_body import iter_links
from gates.model.paths import path_problem, to_rel
from gates.model.record import decode_record_bytes, load_record, prose_lines

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
        else:
            print(f"gate-check lint-pr: {to_rel(repo_root, body_file)} passes (sections, evidence links, "
                  "end-to-end claims, traced numbers)")
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
    store = EvidenceStore(repo_root)
    pinned = _pinned_artifacts(record, store) if record is not None else {}
    _check_links(text, record, store, add)
    settings = load_settings(repo_root)
    ctx = GateContext(Path(repo_root), evidence=store, settings=settings)
    ctx.policy = judging_policy(ctx.repo_root, None, settings)
    _check_claims(text, record, pinned, ctx, add, settings.g7_extra_terms)
    if validation:
        _check_numbers(text, validation, pinned, record, add)
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


def _pinned_artifacts(record, store) -> dict:
    """The record's declared evidence: id -> (entry, artifact or None, why its pin fails or None)."""
    pinned = {}
    for entry in declared_evidence(record):
        try:
            artifact = store.get(entry.path)
        except InputError as exc:
            pinned[entry.id] = (entry, None, f"{entry.path}: {exc.message}")
            continue
        problem = None
        if not verify_sha256(artifact, entry.sha256):
            problem = f"{entry.path} has SHA-256 {artifact.file_sha256}, the record pins {entry.sha256}"
        elif artifact.id != entry.id or artifact.kind != entry.kind:
            problem = f"{entry.path} is {artifact.kind} artifact {artifact.id!r}, the record declares {entry.kind} {entry.id!r}"
        pinned[entry.id] = (entry, artifact, problem)
    return pinned


_SHA256 = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")
_URL_PATH = re.compile(r"^https?://[^/]+/[^/]+/[^/]+/(?:blob|raw)/[^/]+/(.+)$")
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def link_path(target: str) -> tuple[str | None, bool]:
    """(repository-relative path, external) of a link in a description; links there are repository-relative.

    A GitHub `blob`/`raw` URL names a repository path too; any other URL is external.
    """
    target = target.split("#", 1)[0].split("?", 1)[0]
    url = _URL_PATH.match(target)
    if url:
        target = url.group(1)
    elif _EXTERNAL.match(target):
        return None, True
    target = target.removeprefix("./").lstrip("/")
    if not target or path_problem(target):
        return None, False
    return target, False


def _is_evidence(path: str, store) -> bool:
    if path.startswith("docs/evidence/"):
        return True
    if not path.endswith(".json"):
        return False
    try:
        store.get(path)
    except InputError:
        return False
    return True


_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?")
_HTML_LINK = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


def _link_targets(raw: str):
    """(col, target) of every link on a line: inline links, reference definitions and HTML href/src."""
    for start, _, _, target in iter_links(raw):
        yield start + 1, target
    definition = _LINK_DEFINITION.match(raw)
    if definition:
        yield definition.start(1) + 1, definition.group(1)
    for match in _HTML_LINK.finditer(raw):
        yield match.start(1) + 1, match.group(1)


def _check_links(text: str, record, store, add) -> None:
    """Every evidence artifact the description links is one the record declares, with a verifying pin."""
    declared = {entry.path: entry for entry in declared_evidence(record)} if record is not None else {}
    for line_no, raw in prose_lines(text, 1):
        for col, target in _link_targets(raw):
            path, external = link_path(target)
            is_json = target.split("#", 1)[0].split("?", 1)[0].endswith(".json")
            if external or (path is None and is_json):
                if is_json:
                    add("G7", line_no, f"links evidence that is no repository path ({target}): link the artifact "
                        "the record declares and pins, by its path from the repository root", col)
                continue
            if path is None or not _is_evidence(path, store):
                continue
            entry = declared.get(path)
            if entry is None:
                add("G7", line_no, f"links {path}, which the design record does not declare as evidence (with its "
                    "sha256 pin): link the record's own artifacts only", col)
                continue
            try:
                artifact = store.get(path)
            except InputError as exc:
                add("G7", line_no, f"links {path}, which cannot be read: {exc.message}", col)
                continue
            if not verify_sha256(artifact, entry.sha256):
                add("G7", line_no, f"links {path}, whose SHA-256 is {artifact.file_sha256}; the record pins "
                    f"{entry.sha256}", col)
            for match in _SHA256.finditer(raw):
                if match.group(0).lower() != str(entry.sha256).lower():
                    add("G7", line_no, f"shows sha256 {match.group(0)} for {path}; the record pins {entry.sha256}",
                        match.start() + 1)


def _check_claims(text: str, record, pinned: dict, ctx: GateContext, add, extra_terms=()) -> None:
    claims = list(find_claims_in_text(text, 1, extra_terms))
    if not claims:
        return
    cited = {entry.id for entry in cited_evidence(record)} if record is not None else set()
    candidates = [Candidate(entry.id, artifact, problem or pin_problem(entry, artifact),
                            tuple(backing_problems(record, ctx, artifact)) if artifact is not None else ())
                  for entry_id, (entry, artifact, problem) in pinned.items()
                  if entry_id in cited and (entry.kind == "e2e" or (artifact is not None and artifact.kind == "e2e"))]
    claim_level = record.get("claim_level") if record is not None else None
    named = CitedValues({artifact.id: artifact.results for _, artifact, problem in pinned.values()
                         if artifact is not None and problem is None}, declared=list(pinned))
    paragraphs, judged = claim_paragraphs(text), {}
    for line, col, term in claims:
        paragraph = paragraphs.get(line, "")
        if paragraph not in judged:
            judged[paragraph] = claim_problems(paragraph, claim_level, candidates, named)
        problems = list(judged[paragraph])
        if record is None:
            problems.insert(0, "the description names no design record")
        if problems:
            add("G7", line, claim_message(term, problems), col)


def _check_numbers(text: str, validation, pinned: dict, record, add) -> None:
    """Each measured number of the Validation section names one value of a pinned artifact and is it."""
    usable = {artifact.id: artifact.results for _, artifact, problem in pinned.values()
              if artifact is not None and problem is None}
    values = CitedValues(usable, declared=list(pinned))
    by_path = {entry.path: entry_id for entry_id, (entry, _, _) in pinned.items()}

    def own_links(line: str) -> set[str]:
        return {by_path[path] for _, _, _, target in iter_links(line)
                if (path := link_path(target)[0]) in by_path}

    start, end = validation
    lines = [(line_no, raw) for line_no, raw in prose_lines(text, 1)
             if start < line_no <= end and not raw.lstrip().startswith("#")]
    # A nested list item belongs to the item above it: the summary under an evidence line
    # (`  - ncu kernel: name = value`) speaks of the artifact that line links.
    links_by_text: dict[str, set[str]] = {}
    item_links: set[str] = set()
    for _, raw in lines:
        if raw.strip() and not raw.startswith((" ", "\t")):
            item_links = own_links(raw)
            links = item_links
        else:
            links = own_links(raw) | item_links
        links_by_text.setdefault(raw, set()).update(links)
    trace = SectionTracer(values, lambda line: links_by_text.get(line, set())).trace(lines, measured_numbers(False))
    rule = "every measured number in Validation names a value of an artifact the record pins"
    for tie in trace.ties:
        if tie.problem:
            add("G7", tie.line, f"{tie.quoted.shown()} names no value of the record's evidence: {tie.problem}",
                tie.quoted.col)
        elif tie.mismatch():
            add("G7", tie.line, f"{tie.quoted.shown()} is not the value it names, {tie.target.shown()}: {rule}",
                tie.quoted.col)
    tolerances = declared_numbers(record) if record is not None else []
    for line_no, number in trace.untied:
        if number.unit in ("", "%") and any(matches(number, value) for value in tolerances):
            continue
        add("G7", line_no, f"{number.shown()} is not tied to an artifact value ({rule}): write `ARTIFACT-ID:KEY.PATH` "
            "after it, or `metric = value`, or map its table column in the header", number.col)
