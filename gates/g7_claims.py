"""G7 Claims discipline: kernel numbers are not end-to-end claims, and numbers trace.

1. An end-to-end claim (TTFT, TPOT, ITL, tok/s, tokens/s, E2E, end-to-end,
   latency/throughput speedups; 端到端, 吞吐, 首字延迟, 每词延迟 ...) in the body
   needs `claim_level: e2e` and a cited `e2e` artifact with fixture identities and
   at least three fresh-process samples per arm. A sentence that negates or
   forbids ("must not be written as TPOT", "不声称任何端到端收益") is not a
   claim, and neither is a term in `code`.
2. A stage-A record claims no measured results: a number with a unit in §7 must
   come from a profile artifact cited in §1.
3. Every measured number in §7 (a number with a unit, or a decimal in a table
   row) is tied to one named value of a cited artifact (`gates.number_trace`:
   an `ARTIFACT-ID:KEY.PATH` reference, `metric = value`, or a table column
   mapped by its header) and equals it at the quoted precision.
4. The results pages the record links (`gates.results_pages`) declare their
   pinned artifact and trace every table cell to it, or declare themselves notes;
   end-to-end claims on them follow rule 1.

What backs an end-to-end claim, and whether the claim quotes it faithfully, is
decided in `gates.e2e_evidence` (shared with `gate-check lint-pr`).
"""

from __future__ import annotations

import re

from gates.context import GateContext
from gates.e2e_evidence import Candidate, claim_message, claim_paragraphs, claim_problems, pin_problem
from gates.evidence_refs import checked_artifact, cited_evidence, declared_evidence
from gates.findings import Finding, GateResult, result_from_findings
from gates.number_trace import CitedValues, SectionTracer, links_to_artifacts, measured_numbers
from gates.quoted_numbers import matches, strip_code_spans
from gates.record import Record, prose_lines
from gates.results_pages import check_linked_pages

GATE = "G7"
MIN_SAMPLES = 3

CLAIM = re.compile(
    r"\bTTFT\b|\bTPOT\b|\bITL\b|\bE2E\b|\bQPS\b|\btok(?:en)?s?/s\b|\brequests?/s\b|\bend[- ]to[- ]end\b"
    r"|\b(?:latency|throughput)\s+(?:speed-?ups?|gains?|improvements?|wins?|reductions?)\b"
    r"|\bspeed-?ups?\s+(?:in|of)\s+(?:latency|throughput)\b"
    r"|端到端|首字延迟|首\s*token\s*延迟|首词延迟|每词延迟|每\s*token\s*延迟|吞吐",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\b(?:not|never|no|nor|without|cannot|can't|don't|doesn't|didn't|won't|isn't|aren't|mustn't|shouldn't"
    r"|forbid\w*|prohibit\w*|refrain\w*|avoid\w*)\b|(?<![仅但少错])不(?![仅但少错])|未|没有|禁止|勿|无需|并非|非",
    re.IGNORECASE,
)
_MEMORY_CONTEXT = re.compile(r"(?:DRAM|HBM|L1|L2|SM|memory|内存|显存|带宽|缓存)\s*(?:/\s*\w+\s*)*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|[。！？；]|,\s*(?:but|and|while|whereas|yet)\b|，\s*(?:但|而|并且|且)|但是|然而")


def sentences(line: str):
    """(column, clause) pieces of one prose line; a table row is one piece.

    Sentences split at their ends and at contrastive joints (", but", ", and",
    "，但"), so a negation covers only its own clause.
    """
    if line.lstrip().startswith("|"):
        yield 1, line
        return
    start = 0
    for match in _SENTENCE_END.finditer(line):
        yield start + 1, line[start:match.start()]
        start = match.end()
    yield start + 1, line[start:]


def find_claims(record: Record):
    """(line, col, term) of every end-to-end claim in the record's body."""
    return find_claims_in_text(record.body, record.body_start_line)


def find_claims_in_text(text: str, first_line: int = 1):
    """(line, col, term) of every end-to-end claim in Markdown text whose first line is `first_line`."""
    for line_no, raw in prose_lines(text, first_line):
        if not CLAIM.search(raw):
            continue
        line = strip_code_spans(raw)
        for col, sentence in sentences(line):
            if NEGATION.search(sentence):
                continue
            for match in CLAIM.finditer(sentence):
                if match.group(0) == "吞吐" and _MEMORY_CONTEXT.search(sentence[max(0, match.start() - 16):match.start()]):
                    continue
                yield line_no, col + match.start(), match.group(0)
                break


def check(record: Record, ctx: GateContext) -> GateResult:
    findings: list[Finding] = []
    stage = ctx.effective_stage(record)

    def add(line: int, message: str, col: int = 1) -> None:
        findings.append(Finding(GATE, record.rel_path, line, col, message))

    cited = cited_evidence(record)
    loaded = {}
    for entry in cited:
        artifact, problems = checked_artifact(record, ctx, entry, GATE, fresh=False)
        findings.extend(problems)
        if artifact is not None:
            loaded[entry.id] = (entry, artifact)
    _check_claims(record, loaded, add)
    findings.extend(check_linked_pages(record, ctx, e2e_candidates(loaded), cited_values(record, loaded)))
    results = record.section(7)
    if results is not None:
        if stage == "A":
            profiles = [artifact for entry, artifact in loaded.values()
                        if entry.kind == "profile" and entry in cited_evidence(record, 1)]
            _check_numbers(record, results, profiles, add, "a stage-A record claims no measured results; a number "
                           "in §7 must come from a profile artifact cited in §1", units_only=True)
        else:
            _check_numbers(record, results, [artifact for _, artifact in loaded.values()], add,
                           "every number in the results section traces to a cited evidence artifact", units_only=False)
    return result_from_findings(GATE, findings)


def _check_claims(record: Record, loaded: dict, add) -> None:
    """Each end-to-end claim of the body is backed by a cited e2e artifact and quotes it faithfully."""
    claims = list(find_claims(record))
    if not claims:
        return
    candidates = e2e_candidates(loaded)
    named = cited_values(record, loaded)
    paragraphs, judged = claim_paragraphs(record.body, record.body_start_line), {}
    for line, col, term in claims:
        paragraph = paragraphs.get(line, "")
        if paragraph not in judged:
            judged[paragraph] = claim_problems(paragraph, record.get("claim_level"), candidates, named)
        problems = judged[paragraph]
        if problems:
            add(line, claim_message(term, problems), col)


def cited_values(record: Record, loaded: dict) -> CitedValues:
    """The values of the cited artifacts, by reference or metric name (`gates.number_trace`)."""
    return CitedValues({artifact.id: artifact.results for _, artifact in loaded.values()},
                       declared=[entry.id for entry in declared_evidence(record)])


def e2e_candidates(loaded: dict) -> list[Candidate]:
    """The cited e2e artifacts (`loaded`: evidence id -> (entry, artifact)), each with its pin checked."""
    return [Candidate(entry.id, artifact, pin_problem(entry, artifact))
            for entry, artifact in loaded.values() if entry.kind == "e2e" or artifact.kind == "e2e"]


def declared_numbers(record: Record) -> list[float]:
    """The numeric contract's tolerances: limits a results section may restate untied (without a unit, or as %)."""
    values = []
    for tolerance in record.get("numeric_contract", "tolerances", default=[]) or []:
        values.extend(v for k, v in tolerance.items() if k in ("max", "min"))
    return values


def _check_numbers(record: Record, section, artifacts, add, rule: str, units_only: bool) -> None:
    """Each measured number of the results section is tied to one named value and is that value.

    See `gates.number_trace` for how a number names its value. A number tied to nothing is
    not looked up among all the artifacts' numbers; only a declared tolerance may stand untied.
    """
    values = CitedValues({artifact.id: artifact.results for artifact in artifacts},
                         declared=[entry.id for entry in declared_evidence(record)])
    tracer = SectionTracer(values, links_to_artifacts(record, cited_evidence(record)))
    lines = [(line_no, raw) for line_no, raw in prose_lines(section.text, section.start_line)
             if line_no != section.start_line and not raw.lstrip().startswith("#")]
    trace = tracer.trace(lines, measured_numbers(units_only))
    declared = declared_numbers(record)
    for tie in trace.ties:
        if tie.problem:
            add(tie.line, f"{tie.quoted.shown()} names no value of the cited evidence: {tie.problem}", tie.quoted.col)
        elif tie.mismatch():
            add(tie.line, f"{tie.quoted.shown()} is not the value it names, {tie.target.shown()}: {rule}",
                tie.quoted.col)
    for line_no, number in trace.untied:
        if number.unit in ("", "%") and any(matches(number, value) for value in declared):
            continue
        add(line_no, f"{number.shown()} is not tied to an artifact value ({rule}): write `ARTIFACT-ID:KEY.PATH` "
            "after it, or `metric = value`, or map its table column in the header", number.col)
