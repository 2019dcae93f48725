"""G7's reading of sentences, and how G1/G7 compare quoted numbers with measured ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.g7_claims import find_claims, find_claims_in_text
from gates.quoted_numbers import matches, numbers_with_units, parse_quoted
from gates.record import parse_record


def claims_in(body: str) -> list[str]:
    record = parse_record(f"---\nid: x\n---\n{body}\n", "docs/design/x.md", Path("/repo"))
    return [term for _, _, term in find_claims(record)]


@pytest.mark.parametrize("sentence, term", [
    ("Split-KV S8 gives +22.6% DFlash E2E at 21.5K context.", "E2E"),
    ("Median decode is 72.9 tok/s.", "tok/s"),
    ("This lowers TTFT for long prompts.", "TTFT"),
    ("We expect a clear throughput gain in serving.", "throughput gain"),
    ("The end-to-end latency drops.", "end-to-end"),
    ("改动后端到端吞吐明显提升。", "端到端"),
    ("首字延迟下降。", "首字延迟"),
    ("它不仅提升了吞吐，也降低了延迟。", "吞吐"),
], ids=["e2e", "tok-s", "ttft", "throughput-gain", "end-to-end", "zh-e2e", "zh-first-token", "zh-not-only"])
def test_claims(sentence, term):
    assert claims_in(sentence) == [term]


@pytest.mark.parametrize("sentence", [
    "Kernel-level numbers must not be written as TTFT/TPOT.",
    "This record does not claim any end-to-end gain.",
    "No E2E measurement was made.",
    "不声称任何端到端收益；kernel 级数字不得写成 TTFT/TPOT（G7）。",
    "未测量首字延迟。",
    "DRAM / L2 吞吐 0.44% / 0.96%。",
    "The metric is called `TPOT` in the serving dashboard.",
    "```\nTPOT 12 ms\n```",
    "The DRAM throughput is 0.44%.",
], ids=["must-not", "does-not-claim", "no-measurement", "zh-forbid", "zh-not-measured", "zh-memory-throughput",
        "code-span", "code-block", "memory-throughput"])
def test_not_claims(sentence):
    assert claims_in(sentence) == []


@pytest.mark.parametrize("text", [
    "We did not run the benchmark. TPOT improves by 10%.",
    "There is no regression, and TPOT drops by 10%.",
    "这里没有回退，但首字延迟下降了 10%。",
], ids=["next-sentence", "and-clause", "zh-but-clause"])
def test_negation_reaches_only_its_own_clause(text):
    assert len(claims_in(text)) == 1


@pytest.mark.parametrize("quoted, unit, measured, expected", [
    ("8.33", "%", 8.3312, True),
    ("8.33", "%", 0.083312, True),
    ("8.33", "%", 8.34, False),
    ("8.33", "", 0.0833, False),
    ("2.486e-4", "", 2.4861e-4, True),
    ("2.486e-4", "", 2.49e-4, False),
    ("39", "", 39.4, True),
    ("39", "", 39.6, False),
    ("4.20", "x", 4.2, True),
    ("1,536", "", 1536, True),
    ("0.5", "", float("nan"), False),
], ids=["pct", "pct-as-fraction", "pct-off", "fraction-needs-pct", "sci", "sci-off", "int-rounds", "int-off",
        "trailing-zero", "thousands", "nan"])
def test_numbers_compare_at_quoted_precision(quoted, unit, measured, expected):
    assert matches(parse_quoted(quoted, unit), measured) is expected


def test_numbers_with_units_skip_versions_and_section_numbers():
    found = numbers_with_units("6.8854 ms, +22.6%, 16.79x slower, §10.2, v3.6.0, 48.2 tok/s, 4.8 TB/s, 9.8 µs")
    assert [(q.text, q.unit) for q in found] == [
        ("6.8854", "ms"), ("+22.6", "%"), ("16.79", "x"), ("48.2", "tok/s"), ("4.8", "TB/s"), ("9.8", "µs")]


def test_a_pr_description_is_read_like_a_record_body():
    text = "## Why\n\nKernel numbers must not be written as TPOT.\n\nThis lowers TTFT by half.\n"
    assert list(find_claims_in_text(text)) == [(5, 13, "TTFT")]
    assert [line for line, _, _ in find_claims_in_text(text, first_line=40)] == [44]
