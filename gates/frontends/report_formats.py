"""Render a `Report` as text, JSON, JUnit XML, GitHub workflow commands or SARIF 2.1.0."""

from __future__ import annotations

import json
from urllib.parse import quote
from xml.etree import ElementTree

from gates import __version__
from gates.checks.registry import TITLES
from gates.checks.runner import CHANGE_ENTRY, Report
from gates.model.findings import Finding, Status

FORMATS = ("text", "json", "junit", "github", "sarif")
# A gate that cannot run because the record is unreadable says so; the text form lists
# the gates it stopped on one line ("G1-G8 error: not checked: ...") instead of eight.
NOT_CHECKED = "not checked: "


def render(report: Report, fmt: str, *, quiet: bool = False) -> str:
    """The report in `fmt`. `quiet` leaves out the summary line of the text and github
    forms when every gate passed, so that a passing run prints nothing."""
    text = {"text": to_text, "json": to_json, "junit": to_junit, "github": to_github, "sarif": to_sarif}[fmt](report)
    if quiet and fmt in ("text", "github") and report.ok:
        return "".join(text.splitlines(keepends=True)[:-1])
    return text


def to_text(report: Report) -> str:
    lines = [f"{error.path}:{error.line}:{error.col}: error: {error.message}" for error in report.input_errors]
    counts = {status: 0 for status in Status}
    changed_files = [record for record in report.records if record.id == CHANGE_ENTRY]
    for record in report.records:
        unchecked: dict[tuple, list[str]] = {}
        for gate, result in record.gates.items():
            if record.id != CHANGE_ENTRY:
                counts[result.status] += 1
            for finding in result.findings:
                if finding.message.startswith(NOT_CHECKED):
                    unchecked.setdefault((finding.path, finding.line, finding.col, finding.message), []).append(gate)
                else:
                    lines.append(finding.format_text())
            if result.status is Status.ERROR and not result.findings:
                lines.append(f"{record.path}:1:1: {gate} error: gate errored without a finding")
        for (path, line, col, message), gates in unchecked.items():
            lines.append(f"{path}:{line}:{col}: {_gate_span(gates)} error: {message}")
    summary = (
        f"{len(report.records) - len(changed_files)} record(s): {counts[Status.PASS]} passed, "
        f"{counts[Status.FAIL]} failed, {counts[Status.ERROR]} errored, {counts[Status.NOT_APPLICABLE]} not applicable"
    )
    if changed_files:
        failing = sum(1 for record in changed_files if not record.ok)
        summary += f"; the history checks failed at {failing} other file(s)" if failing else \
            f"; the history checks warned at {len(changed_files)} other file(s)"
    if report.input_errors:
        summary += f"; {len(report.input_errors)} unreadable input(s)"
    lines.append(summary)
    return "\n".join(lines) + "\n"


def to_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def to_junit(report: Report) -> str:
    suites = ElementTree.Element("testsuites", name="design-gates")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if report.input_errors:
        suite = ElementTree.SubElement(suites, "testsuite", name="inputs", tests=str(len(report.input_errors)),
                                       failures="0", errors=str(len(report.input_errors)), skipped="0")
        for error in report.input_errors:
            case = ElementTree.SubElement(suite, "testcase", classname="inputs", name=error.path)
            node = ElementTree.SubElement(case, "error", message=error.message)
            node.text = f"{error.path}:{error.line}:{error.col}: {error.message}"
        totals["tests"] += len(report.input_errors)
        totals["errors"] += len(report.input_errors)
    for record in report.records:
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite = ElementTree.SubElement(suites, "testsuite", name=record.path)
        for gate, result in record.gates.items():
            counts["tests"] += 1
            case = ElementTree.SubElement(suite, "testcase", classname=record.id, name=f"{gate} {TITLES.get(gate, '')}".strip(),
                                          file=record.path)
            text = "\n".join(f.format_text() for f in result.findings)
            if result.status is Status.FAIL:
                counts["failures"] += 1
                node = ElementTree.SubElement(case, "failure", message=f"{gate} failed")
                node.text = text
            elif result.status is Status.ERROR:
                counts["errors"] += 1
                node = ElementTree.SubElement(case, "error", message=f"{gate} errored")
                node.text = text
            elif result.status is Status.NOT_APPLICABLE:
                counts["skipped"] += 1
                ElementTree.SubElement(case, "skipped", message="not applicable")
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        suites.set(key, str(value))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(report: Report) -> str:
    lines = []
    for error in report.input_errors:
        lines.append(f"::error file={_escape_property(error.path)},line={error.line},col={error.col},"
                     f"title=unreadable input::{_escape_data(error.message)}")
    for record in report.records:
        for gate, result in record.gates.items():
            for finding in result.findings:
                level = "error" if finding.severity == "error" else "warning"
                message = finding.message + (f" [commit {finding.commit[:12]}]" if finding.commit else "")
                lines.append(f"::{level} file={_escape_property(finding.path)},line={finding.line},col={finding.col},"
                             f"title={_escape_property(gate + ' ' + TITLES.get(gate, ''))}::{_escape_data(message)}")
    lines.append(to_text(Report(report.records, [])).rstrip("\n").rsplit("\n", 1)[-1])
    return "\n".join(lines) + "\n"


def _gate_span(gates: list[str]) -> str:
    """"G1-G8" for a run of consecutive gates, else "G1,G3"."""
    numbers = [int(g[1:]) for g in gates if g[1:].isdigit()]
    if len(numbers) == len(gates) > 2 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{gates[0]}-{gates[-1]}"
    return ",".join(gates)


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def to_sarif(report: Report) -> str:
    """SARIF 2.1.0 for code scanning (GitHub's `upload-sarif`): one run whose driver lists
    the gates G0-G8 as rules; each finding a result at its file, line and column. An
    unreadable input is a tool execution notification and marks the run unsuccessful."""
    rule_index = {gate: index for index, gate in enumerate(TITLES)}
    rules = [{"id": gate, "name": title.title().replace(" ", ""), "shortDescription": {"text": f"{gate} {title}"},
              "defaultConfiguration": {"level": "error"}} for gate, title in TITLES.items()]
    results = []
    for record in report.records:
        for gate, result in record.gates.items():
            findings = list(result.findings)
            if result.status is Status.ERROR and not findings:
                findings = [Finding(gate, record.path, 1, 1, "gate errored without a finding")]
            for finding in findings:
                entry = {
                    "ruleId": gate,
                    "level": "error" if finding.severity == "error" else "warning",
                    "message": {"text": finding.message},
                    "locations": [_sarif_location(finding.path, finding.line, finding.col)],
                }
                if gate in rule_index:
                    entry["ruleIndex"] = rule_index[gate]
                if finding.commit:
                    entry["properties"] = {"commit": finding.commit}
                results.append(entry)
    notifications = [{"level": "error", "message": {"text": error.message},
                      "locations": [_sarif_location(error.path, error.line, error.col)]} for error in report.input_errors]
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "design-gates", "version": __version__, "rules": rules}},
            "invocations": [{"executionSuccessful": not report.input_errors,
                             "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _sarif_location(path: str, line: int, col: int) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": quote(path), "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": max(int(line), 1), "startColumn": max(int(col), 1)}}}
