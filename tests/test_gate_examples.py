"""Golden examples: every positive record passes, every negative fails the gate and line it names.

The examples live in tests/examples/G<n>/{positive,negative}/*.md, inside a small
repository of their own (tests/examples is their repository root). A negative
record's second line says what must fail: `# expect: G1 line 65`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gates.checks.registry import GATES
from gates.checks.runner import check_records
from gates.model.findings import Status

EXAMPLES = Path(__file__).parent / "examples"
EXPECT = re.compile(r"^# expect: (G\d) line (\d+)$", re.MULTILINE)


def _examples(kind: str):
    return [pytest.param(path, id=f"{path.parent.parent.name}-{path.stem}")
            for path in sorted(EXAMPLES.glob(f"G*/{kind}/*.md"))]


def _check(path: Path):
    report = check_records([path], EXAMPLES)
    assert not report.input_errors, report.input_errors
    (record,) = report.records
    return record


@pytest.mark.parametrize("path", _examples("positive"))
def test_positive_example_passes_every_gate(path):
    record = _check(path)
    failing = {gate: [f.format_text() for f in result.findings] for gate, result in record.gates.items() if not result.ok}
    assert not failing, failing
    assert record.gates[path.parent.parent.name].status in (Status.PASS, Status.NOT_APPLICABLE)


@pytest.mark.parametrize("path", _examples("negative"))
def test_negative_example_fails_its_gate_at_its_line(path):
    expectation = EXPECT.search(path.read_text(encoding="utf-8"))
    assert expectation, f"{path} must say '# expect: G<n> line <N>' on its second line"
    gate, line = expectation.group(1), int(expectation.group(2))
    assert gate == path.parent.parent.name, "a negative example lives under the folder of the gate it fails"
    result = _check(path).gates[gate]
    assert result.status is Status.FAIL, (result.status, [f.format_text() for f in result.findings])
    lines = sorted({f.line for f in result.findings})
    assert line in lines, f"expected a {gate} finding on line {line}, got lines {lines}"


def test_every_gate_has_positive_and_negative_examples():
    for gate in GATES:
        assert list(EXAMPLES.glob(f"{gate}/positive/*.md")), f"{gate} has no positive example"
        assert list(EXAMPLES.glob(f"{gate}/negative/*.md")), f"{gate} has no negative example"


def test_the_stacked_on_record_of_the_examples_passes():
    record = _check(EXAMPLES / "docs" / "design" / "base-record.md")
    assert record.ok, [f.format_text() for f in record.findings()]
