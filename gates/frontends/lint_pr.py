"""Check a pull-request description against G7's claims discipline, and a generated one against its sections.

    gate-check lint-pr --body-file pr.md [more.md ...] [--record docs/design/<id>.md]
                       [--format text|json|github|sarif] [--explain]

Any description, whatever its template ("Summary / Details / Testing Done" included), is
read by the claims engine behind G7 and results pages (`gates.checks.claim_detection`), so
a sentence gets the verdict it gets in a record:

- an end-to-end claim obeys the rule it obeys in the record (`gates.checks.e2e_evidence.
  claim_findings`): the record at `claim_level: e2e`, a cited e2e artifact whose pin verifies,
  measured properly, and the numbers the sentence quotes are that artifact's values; a claim
  in a description that names no record is a finding;
- every evidence artifact the description links is one the record declares, at the same
  path, and the record's SHA-256 pin verifies (a `sha256` the line shows must be that pin);
- every number that names a value (`ARTIFACT-ID:KEY.PATH`, `metric = value`) is that value,
  wherever it stands; in the Validation section every measured number must name one.

The section checks (the record named, Why, Design, Decisions, Validation with what was
run and what was not, Limitations, Follow-ups, Gates) apply to descriptions that
`gate-check pr-body` generated (its marker on the first line), or to every description
with `lint_pr.sections: always` in the configuration (`never` turns them off).

The record is the one the marker names, else the first path below a configured records
folder (`records`, default `docs/design`) that the text names, else `--record`.
`--explain` also lists every sentence that names an end-to-end word but is not a claim, and
why (a question, a plan, a target, kernel-level ...). Findings print as
`path:line:col: G7 error: message`. Exit codes: 0 clean, 1 findings, 2 the file or the
record cannot be read.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gates.checks.claim_detection import Verdict, judge_text, vocabulary_of
from gates.checks.context import GateContext
from gates.checks.e2e_evidence import Candidate, backing_problems, claim_findings, claim_paragraphs, pin_problem
from gates.checks.evidence_refs import cited_evidence, declared_evidence
from gates.checks.g7_claims import declared_numbers
from gates.checks.cited_values import CitedValues
from gates.checks.number_trace import SectionTracer, measured_numbers
from gates.checks.quoted_numbers import as_written_numbers, matches
from gates.checks.runner import RecordResult, Report, judging_policy
from gates.evidence.artifacts import EvidenceStore, verify_sha256
from gates.frontends.pr_body import MARKER_PATTERN
from gates.model.config import load_settings
from gates.model.errors import InputError, UsageError
from gates.model.findings import Finding, result_from_findings
from gates.model.markdown_body import iter_links, link_targets
from gates.model.paths import path_problem, to_rel
from gates.model.record import decode_record_bytes, load_record, prose_lines

MAX_BODY_BYTES = 256 * 1024
FORMATS = ("text", "json", "github", "sarif")
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
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--explain", action="store_true",
                        help="also say, for each sentence with an end-to-end word that is not a claim, why not")


@dataclass
class Review:
    """What `lint-pr` found in one description."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    sections_checked: bool = False
    numbers_traced: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "error"]

    def summary(self) -> str:
        claims = sum(verdict.claim for verdict in self.verdicts)
        excused = len(self.verdicts) - claims
        sections = "sections checked" if self.sections_checked else "sections not checked (not a generated description)"
        if self.errors:
            return f"gate-check lint-pr: {len(self.errors)} problem(s) in {self.path}"
        return (f"gate-check lint-pr: {self.path} passes: {claims} end-to-end claim(s), each backed by evidence; "
                f"{excused} sentence(s) with end-to-end words that claim nothing (--explain says why); "
                f"{self.numbers_traced} number(s) traced to artifact values; evidence links checked; {sections}")

    def explanations(self) -> list[str]:
        return [f"{self.path}:{verdict.line}:{verdict.col}: note: {verdict.explain()}" for verdict in self.verdicts]


def run(args, repo_root: Path) -> int:
    reviews = [review(body_file, repo_root, record_path=args.record) for body_file in args.body_file]
    print(render(reviews, args.format, explain=args.explain), end="")
    for item in reviews:
        if args.format in ("json", "sarif") or item.errors:
            print(item.summary(), file=sys.stderr)
    return 1 if any(item.errors for item in reviews) else 0


def render(reviews: list[Review], fmt: str, *, explain: bool = False) -> str:
    """The reviews in `fmt`; in text and github a description that passes ends with its summary line
    (one with problems has it on standard error)."""
    from gates.frontends.report_formats import to_github, to_sarif

    if fmt == "json":
        return json.dumps({"ok": not any(item.errors for item in reviews), "descriptions": [{
            "path": item.path, "ok": not item.errors, "sections_checked": item.sections_checked,
            "numbers_traced": item.numbers_traced,
            "findings": [dict(finding.to_json(), gate=finding.gate) for finding in item.findings],
            "verdicts": [{"line": v.line, "col": v.col, "claim": v.claim, "words": v.words, "result": v.result,
                          "reason": v.reason} for v in item.verdicts],
        } for item in reviews]}, indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        return to_sarif(_as_report(reviews))
    lines = []
    for item in reviews:
        if fmt == "github":
            lines.extend(to_github(_as_report([item])).rstrip("\n").split("\n")[:-1])
            if explain:
                lines.extend(f"::notice file={item.path},line={v.line},col={v.col}::{v.explain()}"
                             for v in item.verdicts if not v.claim)
        else:
            lines.extend(finding.format_text() for finding in item.findings)
            if explain:
                lines.extend(item.explanations())
        if not item.errors:
            lines.append(item.summary())
    return "\n".join(lines) + "\n"


def _as_report(reviews: list[Review]) -> Report:
    """The reviews as a `Report` (one entry per description, its findings by gate) for the shared formats."""
    records = []
    for item in reviews:
        gates = {}
        for gate in sorted({finding.gate for finding in item.findings} | {"G7"}):
            gates[gate] = result_from_findings(gate, [f for f in item.findings if f.gate == gate])
        records.append(RecordResult(item.path, item.path, None, None, gates))
    return Report(records)


def lint(body_file: Path, repo_root: Path, *, record_path: Path | None = None) -> list[Finding]:
    """Every finding for the description in `body_file`."""
    return review(body_file, repo_root, record_path=record_path).findings


def review(body_file: Path, repo_root: Path, *, record_path: Path | None = None) -> Review:
    """Read the description in `body_file` and check it (see the module's docstring)."""
    shown = to_rel(Path(repo_root), Path(body_file))
    try:
        raw = Path(body_file).read_bytes()
    except OSError as exc:
        raise InputError(shown, 1, f"cannot read the description: {exc.strerror or exc}") from None
    if len(raw) > MAX_BODY_BYTES:
        raise InputError(shown, 1, f"the description is over the {MAX_BODY_BYTES}-byte limit")
    text = decode_record_bytes(raw, shown).replace("\r\n", "\n")
    settings = load_settings(repo_root)
    result = Review(shown)

    def add(gate: str, line: int, message: str, col: int = 1) -> None:
        result.findings.append(Finding(gate, shown, line, col, message))

    generated = MARKER_PATTERN.search(text) is not None
    result.sections_checked = settings.lint_pr_sections == "always" or (
        settings.lint_pr_sections == "generated" and generated)
    sections = _sections(text)
    validation = next(((s, e) for t, s, e in sections if any(w in t.lower() for w in REQUIRED["Validation"])), None)
    if result.sections_checked:
        _check_sections(text, sections, validation, add)
    record = _record(text, repo_root, record_path, shown, settings, add if result.sections_checked else None)
    store = EvidenceStore(repo_root)
    pinned = _pinned_artifacts(record, store) if record is not None else {}
    _check_links(text, record, store, add)
    result.verdicts = judge_text(text, 1, vocabulary_of(settings))
    ctx = GateContext(Path(repo_root), evidence=store, settings=settings)
    ctx.policy = judging_policy(ctx.repo_root, None, settings)
    _check_claims(text, result.verdicts, record, pinned, ctx, add)
    results = [(start, end, title) for title, start, end in sections
               if any(word.lower() in title.lower() for word in settings.lint_pr_results_headings)]
    spans = ([(validation[0], validation[1], "Validation")] if validation else []) + results
    result.numbers_traced = _check_numbers(text, spans, pinned, record, add)
    result.findings.sort(key=lambda f: (f.line, f.col, f.gate, f.message))
    return result


def _check_sections(text: str, sections, validation, add) -> None:
    """A generated description keeps its sections, and its Validation says what was run and what was not."""
    for name, words in REQUIRED.items():
        if not any(any(w in title.lower() for w in words) for title, _, _ in sections):
            add("G0", 1, f"the description has no {name} section (a heading with {' / '.join(words)})")
    if validation:
        titles = [t.lower() for t, s, _ in sections if validation[0] <= s <= validation[1]]
        block = text.split("\n")[validation[0] - 1:validation[1]]
        said = "\n".join(titles + [line.lower() for line in block])
        if not any(w in said for w in NOT_RUN):
            add("G0", validation[0], "the Validation section does not say what was not run")
        if not any(w in said for w in RUN):
            add("G0", validation[0], "the Validation section does not say what was run")


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


def _record(text, repo_root, record_path, shown, settings, add):
    """The design record the description names (its marker, a path below a records folder) or `--record`.

    `add` reports a description that names none (when its sections are checked); else None is returned.
    """
    if record_path is None:
        marker = MARKER_PATTERN.search(text)
        folders = "|".join(re.escape(folder) for folder in settings.records)
        path = re.search(rf"(?<![\w./-])(?:{folders})/[A-Za-z0-9._/-]+\.md", text)
        named = marker.group(1) if marker else path.group(0) if path else None
        if named is None:
            if add is not None:
                add("G0", 1, f"the description names no design record ({settings.records_text()}/<id>.md); pass "
                    "--record to choose one")
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


def _check_links(text: str, record, store, add) -> None:
    """Every evidence artifact the description links is one the record declares, with a verifying pin."""
    declared = {entry.path: entry for entry in declared_evidence(record)} if record is not None else {}
    for line_no, raw in prose_lines(text, 1):
        for col, target in link_targets(raw):
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


def _check_claims(text: str, verdicts: list[Verdict], record, pinned: dict, ctx: GateContext, add) -> None:
    """Each claim is backed as the record's would be (`e2e_evidence.claim_findings`)."""
    if not any(verdict.claim for verdict in verdicts):
        return
    cited = {entry.id for entry in cited_evidence(record)} if record is not None else set()
    candidates = [Candidate(entry.id, artifact, problem or pin_problem(entry, artifact),
                            tuple(backing_problems(record, ctx, artifact)) if artifact is not None else ())
                  for entry_id, (entry, artifact, problem) in pinned.items()
                  if entry_id in cited and (entry.kind == "e2e" or (artifact is not None and artifact.kind == "e2e"))]
    claim_level = record.get("claim_level") if record is not None else None
    named = CitedValues({artifact.id: artifact.results for _, artifact, problem in pinned.values()
                         if artifact is not None and problem is None}, declared=list(pinned))
    first = ["the description names no design record"] if record is None else []
    for line, col, message in claim_findings(verdicts, claim_paragraphs(text), claim_level, candidates, named, first):
        add("G7", line, message, col)


def _check_numbers(text: str, spans: list[tuple[int, int, str]], pinned: dict, record, add) -> int:
    """Every number that names a value of a pinned artifact is that value, wherever it stands; in the
    Validation section, and in the sections the configuration's `lint_pr.results_headings` name (`spans`: first
    line, last line, title), every measured number names one. Returns how many numbers were traced."""
    usable = {artifact.id: artifact.results for _, artifact, problem in pinned.values()
              if artifact is not None and problem is None}
    values = CitedValues(usable, declared=list(pinned))
    by_path = {entry.path: entry_id for entry_id, (entry, _, _) in pinned.items()}

    def own_links(line: str) -> set[str]:
        return {by_path[path] for _, _, _, target in iter_links(line)
                if (path := link_path(target)[0]) in by_path}

    def section_of(line_no: int) -> str | None:
        return next((title for start, end, title in spans if start < line_no <= end), None)

    lines = [(line_no, as_written_numbers(raw)) for line_no, raw in prose_lines(text, 1)
             if not raw.lstrip().startswith("#")]
    # A nested list item belongs to the item above it: the summary under an evidence line
    # (`  - ncu kernel: name = value`) speaks of the artifact that line links. A paragraph
    # speaks of what it links itself.
    links_by_text: dict[str, set[str]] = {}
    item_links: set[str] = set()
    for _, raw in lines:
        if raw.strip() and not raw.startswith((" ", "\t")):
            item_links = own_links(raw)
            links = item_links
        else:
            links = own_links(raw) | item_links
        links_by_text.setdefault(raw, set()).update(links)
    trace = SectionTracer(values, lambda text: links_by_text.get(text, set()) | own_links(text)).trace(lines, measured_numbers(False))
    rule = "every number that names a value names one of an artifact the record pins"
    traced = 0
    for tie in trace.ties:
        if tie.problem and (section_of(tie.line) or ":" in tie.name):
            # outside Validation, as in a record's other sections: an explicit `ARTIFACT:KEY` that names
            # nothing is an error; a metric name several pinned artifacts share is left alone there
            add("G7", tie.line, f"{tie.quoted.shown()} names no value of the record's evidence: {tie.problem}",
                tie.quoted.col)
        elif tie.problem:
            continue
        elif tie.mismatch():
            add("G7", tie.line, f"{tie.quoted.shown()} is not the value it names, {tie.target.shown()}: {rule}",
                tie.quoted.col)
        else:
            traced += 1
    tolerances = declared_numbers(record) if record is not None else []
    for line_no, number in trace.untied:
        section = section_of(line_no)
        if section is None:
            continue
        if number.unit in ("", "%") and any(matches(number, value) for value in tolerances):
            continue
        where = "Validation" if section == "Validation" else f"a results section ('{section}')"
        add("G7", line_no, f"{number.shown()} is not tied to an artifact value (every measured number in {where} "
            "names a value of an artifact the record pins): write `ARTIFACT-ID:KEY.PATH` after it, or `metric = "
            "value`, or map its table column in the header", number.col)
    return traced
