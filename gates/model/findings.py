"""What a gate reports: a status and findings that point at a file, line and column."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class Fix:
    """An edit that settles a finding, the way a linter's autofix does: the text `old` at
    `line`:`col` of the finding's file becomes `new` (`gate-check refresh --fix` applies it)."""

    line: int
    col: int
    old: str
    new: str


@dataclass(frozen=True)
class Finding:
    gate: str
    path: str
    line: int
    col: int
    message: str
    severity: str = "error"
    commit: str | None = None
    fix: Fix | None = field(default=None, compare=False)

    def format_text(self) -> str:
        text = f"{self.path}:{self.line}:{self.col}: {self.gate} {self.severity}: {self.message}"
        if self.commit:
            text += f" [commit {self.commit[:12]}]"
        return text

    def to_json(self) -> dict:
        data = {"line": self.line, "col": self.col, "severity": self.severity, "message": self.message}
        if self.commit:
            data["commit"] = self.commit
        if self.fix:
            data["fix"] = {"line": self.fix.line, "col": self.fix.col, "old": self.fix.old, "new": self.fix.new}
        return data


@dataclass
class GateResult:
    gate: str
    status: Status
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in (Status.PASS, Status.NOT_APPLICABLE)

    def to_json(self) -> dict:
        return {"status": self.status.value, "findings": [f.to_json() for f in self.findings]}


def result_from_findings(gate: str, findings: list[Finding]) -> GateResult:
    """PASS when no finding is an error, FAIL otherwise."""
    failed = any(f.severity == "error" for f in findings)
    return GateResult(gate, Status.FAIL if failed else Status.PASS, list(findings))


def adder_at_keys(gate: str, record, findings: list[Finding]):
    """`add(keys, message)`: append an error of `gate` at the line of the record's
    front-matter key path `keys` (e.g. ("bitwise", "anchors", 0))."""

    def add(keys: tuple, message: str) -> None:
        findings.append(Finding(gate, record.rel_path, record.line_of(*keys), 1, message))

    return add
