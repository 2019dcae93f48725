"""Render a `Report` as text, JSON, JUnit XML or GitHub workflow commands."""

from __future__ import annotations

import json
from xml.etree import ElementTree

from gates.findings import Status
from gates.registry import TITLES
from gates.runner import Report

FORMATS = ("text", "json", "junit", "github")
# A gate that cannot run because the record is unreadable says so; the text form lists
# the gates it stopped on one line ("G1-G8 error: not checked: ...") instead of eight.
NOT_CHECKED = "not checked: "


def render(report: Report, fmt: str) -> str:
    return {"text": to_text, "json": to_json, "junit": to_junit, "github": to_github}[fmt](report)


def to_text(report: Report) -> str:
    lines = [f"{error.path}:{error.line}:{error.col}: error: {error.message}" for error in report.input_errors]
    counts = {status: 0 for status in Status}
    for record in report.records:
        unchecked: dict[tuple, list[str]] = {}
        for gate, result in record.gates.items():
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
        f"{len(report.records)} record(s): {counts[Status.PASS]} passed, {counts[Status.FAIL]} failed, "
        f"{counts[Status.ERROR]} errored, {counts[Status.NOT_APPLICABLE]} not applicable"
    )
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
