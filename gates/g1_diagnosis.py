"""G1 Diagnosis from evidence: §1 cites a measurement, and quotes it faithfully.

§1 must link to at least one declared `profile`, `benchmark` or `numeric`
artifact. Every metric §1 quotes by name must carry the artifact's value: a table
row whose cell names a key of a cited artifact's `results.metrics` (the value is
the next cell; "a / b" names pair with "x / y" values), or inline `name = value`
/ `name: value`. Values compare at the quoted precision; `%` may quote a fraction.
While the record is at stage A the artifact must also be fresh (it describes the
tree the design is proposed against); later the file pin (sha256) keeps it honest.
"""

from __future__ import annotations

import re

from gates.context import GateContext
from gates.evidence_refs import checked_artifact, cited_evidence
from gates.findings import Finding, GateResult, result_from_findings
from gates.quoted_numbers import NUMBER, first_number, matches, parse_quoted
from gates.record import Record, prose_lines

GATE = "G1"
DIAGNOSIS_KINDS = ("profile", "benchmark", "numeric")


def check(record: Record, ctx: GateContext) -> GateResult:
    findings: list[Finding] = []

    def add(line: int, message: str, col: int = 1) -> None:
        findings.append(Finding(GATE, record.rel_path, line, col, message))

    section = record.section(1)
    if section is None:
        add(record.body_start_line, "there is no §1 (why / diagnosis) section to check")
        return result_from_findings(GATE, findings)
    cited = cited_evidence(record, 1, DIAGNOSIS_KINDS)
    if not cited:
        add(section.start_line, "§1 cites no profile, benchmark or numeric artifact: link the measurement the "
            "diagnosis rests on (declared in evidence)")
        return result_from_findings(GATE, findings)
    metrics: dict[str, list[tuple[str, float]]] = {}
    for entry in cited:
        artifact, problems = checked_artifact(record, ctx, entry, GATE, fresh=(ctx.effective_stage(record) == "A"))
        for problem in problems:
            findings.append(problem)
        if artifact is None:
            continue
        for name, value in (artifact.results.get("metrics") or {}).items():
            metrics.setdefault(str(name), []).append((entry.id, value))
    if metrics:
        for line_no, name, quoted in _quotes(section, metrics):
            measured = metrics[name]
            if not any(matches(quoted, value) for _, value in measured):
                shown = ", ".join(f"{value} in {source}" for source, value in measured)
                add(line_no, f"§1 quotes {name} = {quoted.text}{quoted.unit}, but the cited evidence measured {shown}",
                    quoted.col)
    return result_from_findings(GATE, findings)


def _name_pattern(names) -> re.Pattern:
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w])`?({alternatives})`?(?![\w]|\.\w)")


def _quotes(section, metrics):
    """(line, metric name, Quoted) for every quoted metric value in the section."""
    names = _name_pattern(metrics)
    inline = re.compile(names.pattern + rf"[ \t]*(?:=|:|＝|：)[ \t]*({NUMBER})[ \t]?(%)?(?![\w]|\.\d)")
    for line_no, line in prose_lines(section.text, section.start_line):
        stripped = line.strip()
        if stripped.startswith("|"):
            yield from _table_quotes(line_no, stripped, names)
            continue
        for match in inline.finditer(line):
            quoted = parse_quoted(match.group(2), match.group(3) or "", match.start(2) + 1)
            if quoted:
                yield line_no, match.group(1), quoted


def _table_quotes(line_no: int, row: str, names: re.Pattern):
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    if all(re.fullmatch(r":?-{2,}:?", cell) or not cell for cell in cells):
        return
    for index, cell in enumerate(cells[:-1]):
        found = [m.group(1) for m in names.finditer(cell)]
        if not found:
            continue
        value_cell = cells[index + 1]
        parts = [part for part in re.split(r"\s/\s", value_cell)]
        name_parts = re.split(r"\s/\s", cell)
        if len(found) > 1 and len(parts) == len(name_parts):
            pairs = []
            for name_part, value_part in zip(name_parts, parts):
                inner = [m.group(1) for m in names.finditer(name_part)]
                if inner:
                    pairs.append((inner[0], value_part))
        else:
            pairs = [(found[0], value_cell)]
        for name, value_text in pairs:
            quoted = first_number(value_text)
            if quoted:
                yield line_no, name, quoted
        return
