"""G7 Claims discipline: kernel numbers are not end-to-end claims, and numbers trace.

1. An end-to-end claim (TTFT, TPOT, tok/s, time to first token, serving
   throughput, P99 latency, end-to-end; 端到端, 首字时间, 时延, 吞吐 ...), or a claim
   shaped like one (a serving subject or measure with a quantity or comparative:
   "Chat replies arrive 30% sooner for users", "延迟降低30%"), in the rendered prose
   of the body, link titles included, needs `claim_level: e2e` and a cited `e2e`
   artifact with fixture identities and at least three fresh-process samples per arm.
   Detection (`gates.checks.claim_detection`) excuses a term only where a negation or
   scope marker governs it ("must not be written as TPOT", "TTFT is out of
   scope", "不声称任何端到端收益"); a term in `code` is not prose.
2. A stage-A record claims no measured results: a number with a unit in §7 must
   come from a profile artifact cited in §1.
3. Every measured number in §7 (a number with a unit, or one written with a decimal
   point or a power of ten, in prose or a table, also right after CJK text) is tied to
   one named value of a cited artifact (`gates.checks.number_trace`: an
   `ARTIFACT-ID:KEY.PATH` reference, `metric = value`, or a table column mapped by
   its header) and equals it at the quoted precision, which must keep the value's first
   significant digit (no "0.000" for 2.1e-4). A reference must agree with the words
   that present its number: "fp16 rel_l2 = … (`…:per_dtype.fp32.rel_l2`)" and
   "rel_l2 = 2 (`…:per_dtype.fp16.cases`)" are errors.
4. The results pages the record links (`gates.checks.results_pages`) declare their
   pinned artifact and trace every table cell to it, or declare themselves notes;
   end-to-end claims on them follow rule 1.

What backs an end-to-end claim, and whether the claim quotes it faithfully, is
decided in `gates.checks.e2e_evidence` (shared with `gate-check lint-pr`).
"""

from __future__ import annotations

from gates.checks.claim_detection import Vocabulary, find_claims, find_claims_in_text, record_verdicts, vocabulary_of
from gates.checks.context import GateContext
from gates.checks.e2e_evidence import Candidate, backing_problems, claim_findings, claim_paragraphs, pin_problem
from gates.checks.requote import number_fix
from gates.checks.evidence_refs import checked_artifact, cited_evidence, declared_evidence
from gates.checks.cited_values import CitedValues
from gates.checks.number_trace import (
    SectionTracer, check_bars, links_to_artifacts, measured_numbers, no_measured_numbers, restates_a_bar,
)
from gates.checks.quoted_numbers import as_written_numbers, matches
from gates.checks.results_pages import check_linked_pages
from gates.model.findings import Finding, GateResult, result_from_findings
from gates.model.record import Record, prose_lines

__all__ = ["GATE", "MIN_SAMPLES", "check", "find_claims", "find_claims_in_text"]

GATE = "G7"
MIN_SAMPLES = 3


def check(record: Record, ctx: GateContext) -> GateResult:
    findings: list[Finding] = []
    stage = ctx.effective_stage(record)

    def add(line: int, message: str, col: int = 1, fix=None) -> None:
        findings.append(Finding(GATE, record.rel_path, line, col, message, fix=fix))

    cited = cited_evidence(record)
    loaded = {}
    for entry in cited:
        artifact, problems = checked_artifact(record, ctx, entry, GATE, fresh=False)
        findings.extend(problems)
        if artifact is not None:
            loaded[entry.id] = (entry, artifact)
    candidates = e2e_candidates(record, ctx, loaded)
    _check_claims(record, loaded, candidates, add, vocabulary_of(ctx.settings))
    findings.extend(check_linked_pages(record, ctx, candidates, cited_values(record, loaded)))
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
    _check_named_numbers(record, loaded, add)
    return result_from_findings(GATE, findings)


def _check_named_numbers(record: Record, loaded: dict, add) -> None:
    """A number that names a value of a cited artifact is that value in every section, not only in §7
    (§1 is G1's): "2.3x (`bench-h200:rows[0].speedup`)" in §3 must be the speedup measured. A name
    that several artifacts share is left to the sections that must trace every number."""
    if not loaded:
        return
    values = CitedValues({artifact.id: artifact.results for _, artifact in loaded.values()},
                         declared=[entry.id for entry in declared_evidence(record)])
    tracer = SectionTracer(values, links_to_artifacts(record, cited_evidence(record)))
    for section in record.sections:
        if section.number in (1, 7):
            continue
        lines = [(line_no, as_written_numbers(raw)) for line_no, raw in prose_lines(section.text, section.start_line)
                 if line_no != section.start_line]
        for tie in tracer.trace(lines, no_measured_numbers).ties:
            if tie.problem and ":" in tie.name:
                add(tie.line, f"{tie.quoted.shown()} names no value of the cited evidence: {tie.problem}",
                    tie.quoted.col)
            elif not tie.problem and tie.mismatch():
                add(tie.line, f"{tie.quoted.shown()} is not the value it names, {tie.expected()}: a number that "
                    f"names a value is that value wherever it stands (§{section.number})", tie.quoted.col,
                    number_fix(tie))


def _check_claims(record: Record, loaded: dict, candidates: list[Candidate], add, words: Vocabulary) -> None:
    """Each end-to-end claim of the title and body is backed by a cited e2e artifact and quotes it faithfully."""
    verdicts = [verdict for verdict in record_verdicts(record, words) if verdict.claim]
    if not verdicts:
        return
    paragraphs = claim_paragraphs(record.body, record.body_start_line)
    for line, col, message in claim_findings(verdicts, paragraphs, record.get("claim_level"), candidates,
                                             cited_values(record, loaded)):
        add(line, message, col)


def cited_values(record: Record, loaded: dict) -> CitedValues:
    """The values of the cited artifacts, by reference or metric name (`gates.checks.cited_values`)."""
    return CitedValues({artifact.id: artifact.results for _, artifact in loaded.values()},
                       declared=[entry.id for entry in declared_evidence(record)])


def e2e_candidates(record: Record, ctx: GateContext, loaded: dict) -> list[Candidate]:
    """The cited e2e artifacts (`loaded`: evidence id -> (entry, artifact)), each with its pin, attestation
    and freshness checked."""
    return [Candidate(entry.id, artifact, pin_problem(entry, artifact), tuple(backing_problems(record, ctx, artifact)))
            for entry, artifact in loaded.values() if entry.kind == "e2e" or artifact.kind == "e2e"]


def declared_numbers(record: Record) -> list[float]:
    """The numeric contract's tolerances: limits a results section may restate untied (without a unit, or as %)."""
    values = []
    for tolerance in record.get("numeric_contract", "tolerances", default=[]) or []:
        values.extend(v for k, v in tolerance.items() if k in ("max", "min"))
    return values


def _check_numbers(record: Record, section, artifacts, add, rule: str, units_only: bool) -> None:
    """Each measured number of the results section is tied to one named value and is that value.

    See `gates.checks.number_trace` for how a number names its value; here a key name of the cited
    results (`rel_l2`, `speedup`) also ties the next number of its clause. A number tied to
    nothing is not looked up among all the artifacts' numbers; only a declared tolerance,
    presented as a limit (`≤ 1.0e-6`, `max 1.0e-6`, a column headed tolerance/limit/bound), and the
    bar of a check of the cited results that the line names (`heuristic_within_10pct` … 1.1 倍), may
    stand untied. Headings inside the section are read like any other line.
    """
    values = CitedValues({artifact.id: artifact.results for artifact in artifacts},
                         declared=[entry.id for entry in declared_evidence(record)], key_names=True)
    tracer = SectionTracer(values, links_to_artifacts(record, cited_evidence(record)))
    lines = [(line_no, as_written_numbers(raw)) for line_no, raw in prose_lines(section.text, section.start_line)
             if line_no != section.start_line]
    trace = tracer.trace(lines, measured_numbers(units_only, prose_decimals=True))
    declared = declared_numbers(record)
    bars = check_bars([artifact.results for artifact in artifacts])
    text_of = dict(lines)
    for tie in trace.ties:
        if tie.mislabelled:
            add(tie.line, f"{tie.quoted.shown()} and its reference disagree: {tie.problem} ({rule})", tie.quoted.col)
        elif tie.problem:
            add(tie.line, f"{tie.quoted.shown()} names no value of the cited evidence: {tie.problem}", tie.quoted.col)
        elif tie.mismatch() and tie.relation != "=":
            add(tie.line, f"{tie.said()} does not hold for the value it names, {tie.expected()}: {rule}",
                tie.quoted.col)
        elif tie.mismatch():
            add(tie.line, f"{tie.quoted.shown()} is not the value it names, {tie.expected()}: {rule}",
                tie.quoted.col, number_fix(tie))
    for line_no, number in trace.untied:
        if (number.unit in ("", "%") and trace.is_limit(line_no, number)
                and any(matches(number, value) for value in declared)):
            continue
        if restates_a_bar(text_of.get(line_no, ""), number, bars):
            continue
        add(line_no, f"{number.shown()} is not tied to an artifact value ({rule}): write `ARTIFACT-ID:KEY.PATH` "
            "after it, or `metric = value`, or map its table column in the header", number.col)
