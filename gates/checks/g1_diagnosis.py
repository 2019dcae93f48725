"""G1 Diagnosis from evidence: §1 cites a measurement, and quotes it faithfully.

§1 must link to at least one declared `profile`, `benchmark` or `numeric`
artifact. Every number §1 ties to a named value of a cited artifact must be that
value (see `gates.checks.number_trace` for the ways to tie): `name <op> value` with the
operators =, ≈, ~, is, was, of, equals, →, (…) and : (the name bare, in `code` or
in **bold**, with spaces or hyphens for `_`), `value name`, a bound (≥, ≤, <, >)
that must hold of the value, a number followed by an `ARTIFACT-ID:KEY.PATH`
reference, and table rows whose cell names a metric (the value is in the `value`
column, else the next cell with a number) or whose column header holds a
reference template. Values compare at the quoted precision, in the quoted unit
(`gates.checks.quoted_numbers.in_quoted_unit`; ‰ is per mille). A name that cannot be
resolved (no such key, several artifacts) is an error.
While the record is at stage A the artifact must also be fresh (it describes the
tree the design is proposed against); later the file pin (sha256) keeps it honest.

A change that is not performance work (a bug fix, a new dtype, an API addition)
may declare `diagnosis: {not_applicable: "<reason>"}`: G1 is then not applicable.
A record that declares profile or benchmark evidence is performance work, and the
declaration is refused.
"""

from __future__ import annotations

from gates.checks.context import GateContext
from gates.checks.evidence_refs import checked_artifact, cited_evidence, declared_evidence
from gates.checks.requote import number_fix
from gates.checks.cited_values import CitedValues
from gates.checks.number_trace import SectionTracer, links_to_artifacts, no_measured_numbers
from gates.model.findings import Finding, GateResult, Status, result_from_findings
from gates.model.record import Record, prose_lines

GATE = "G1"
DIAGNOSIS_KINDS = ("profile", "benchmark", "numeric")
PERFORMANCE_KINDS = ("profile", "benchmark")


def _not_applicable(record: Record) -> GateResult | None:
    """The result for a record that declares G1 not applicable (None when it does not)."""
    reason = record.get("diagnosis", "not_applicable")
    if not isinstance(reason, str) or not reason.strip():
        return None
    measured = [entry.id for entry in declared_evidence(record) if entry.kind in PERFORMANCE_KINDS]
    if measured:
        return GateResult(GATE, Status.FAIL, [Finding(
            GATE, record.rel_path, record.line_of("diagnosis", "not_applicable"), 1,
            f"diagnosis.not_applicable, but the record declares performance evidence ({', '.join(measured)}): "
            "performance work needs a diagnosis from a measurement; cite it in §1 instead")])
    return GateResult(GATE, Status.NOT_APPLICABLE)


def check(record: Record, ctx: GateContext) -> GateResult:
    findings: list[Finding] = []

    def add(line: int, message: str, col: int = 1, fix=None) -> None:
        findings.append(Finding(GATE, record.rel_path, line, col, message, fix=fix))

    declared = _not_applicable(record)
    if declared is not None:
        return declared
    section = record.section(1)
    if section is None:
        add(record.body_start_line, "there is no §1 (why / diagnosis) section to check")
        return result_from_findings(GATE, findings)
    cited = cited_evidence(record, 1, DIAGNOSIS_KINDS)
    if not cited:
        add(section.start_line, "§1 cites no profile, benchmark or numeric artifact: link the measurement the "
            "diagnosis rests on (declared in evidence)")
        return result_from_findings(GATE, findings)
    loaded = {}
    for entry in cited:
        artifact, problems = checked_artifact(record, ctx, entry, GATE, fresh=(ctx.effective_stage(record) == "A"))
        findings.extend(problems)
        if artifact is not None:
            loaded[entry.id] = artifact.results
    values = CitedValues(loaded, declared=[entry.id for entry in declared_evidence(record)])
    tracer = SectionTracer(values, links_to_artifacts(record, cited))
    lines = [(number, line) for number, line in prose_lines(section.text, section.start_line)
             if number != section.start_line]
    for tie in tracer.trace(lines, no_measured_numbers).ties:
        if tie.problem:
            add(tie.line, f"§1 quotes {tie.quoted.shown()} for {tie.name}, which names no value: {tie.problem}",
                tie.quoted.col)
        elif tie.mismatch() and tie.relation != "=":
            add(tie.line, f"§1 says {tie.said()}, which does not hold: the cited evidence measured "
                f"{tie.expected()}", tie.quoted.col)
        elif tie.mismatch():
            add(tie.line, f"§1 quotes {tie.name} = {tie.quoted.shown()}, but the cited evidence measured "
                f"{tie.expected()}", tie.quoted.col, number_fix(tie))
    return result_from_findings(GATE, findings)
