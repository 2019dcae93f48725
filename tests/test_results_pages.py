"""G7 on results pages: a page a record links traces every table cell to its declared, pinned artifact."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from test_pr_body import repo, write_record  # noqa: F401 - the fixture and the record writer are shared

ROOT = Path(__file__).resolve().parents[1]


def declaration(repo, artifact="benchmark-h200", path="docs/evidence/benchmark-h200.json", sha256=None) -> str:  # noqa: F811
    pin = sha256 or hashlib.sha256((repo / path).read_bytes()).hexdigest()
    return "<!-- results-page " + json.dumps({"artifact": artifact, "path": path, "sha256": pin}) + " -->"


MAPPING = '<!-- columns {"row": "splits", "columns": {"shape": null, "time us": "rows[num_splits={row}].us"}} -->'
TABLE = "| splits | shape | time us |\n|---|---|---|\n| 1 | llama8b-b1-32k | 162.55 |\n| 16 | llama8b-b1-32k | 17.14 |\n"


def page_text(repo, table=TABLE, mapping=MAPPING, first=None, extra="") -> str:  # noqa: F811
    first = declaration(repo) if first is None else first
    return f"{first}\n\n# Split-KV on the H200\n\nKernel-level numbers only.{extra}\n\n{mapping}\n{table}"


LINKED = "From the [benchmark](../evidence/benchmark-h200.json); every row is on the [results page](../results/bench.md)."


@pytest.fixture
def g7(repo):  # noqa: F811
    """Writes a stage-D record that links docs/results/bench.md; returns: page text -> G7 findings."""
    record = write_record(repo, "splitkv", "D")
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("From the [benchmark](../evidence/benchmark-h200.json).", LINKED), encoding="utf-8")
    (repo / "docs" / "results").mkdir(parents=True, exist_ok=True)

    def findings(page: str) -> list[str]:
        (repo / "docs" / "results" / "bench.md").write_text(page, encoding="utf-8")
        report = check_records([record], repo, gates=["G7"])
        assert not report.input_errors, report.input_errors
        return [f.format_text() for f in report.records[0].gates["G7"].findings if "self-check" not in f.message]
    findings.record = record
    return findings


def test_a_page_whose_cells_are_the_values_they_map_to_passes(repo, g7):  # noqa: F811
    assert g7(page_text(repo)) == []


def test_a_cell_that_is_not_its_value_is_a_finding(repo, g7):  # noqa: F811
    findings = g7(page_text(repo, TABLE.replace("17.14", "15.02")))
    assert len(findings) == 1
    assert findings[0].startswith("docs/results/bench.md:11:")
    assert "column 'time us': 15.02 is not the value it names, benchmark-h200:rows[num_splits=16].us = 17.14" \
        in findings[0]


def test_a_table_without_a_mapping_may_hold_no_measured_number(repo, g7):  # noqa: F811
    findings = g7(page_text(repo, mapping=""))
    assert len(findings) == 2 and all("a table without a column mapping" in f for f in findings), findings


def test_a_text_column_may_not_hold_a_measured_number(repo, g7):  # noqa: F811
    findings = g7(page_text(repo, TABLE.replace("| 1 | llama8b-b1-32k |", "| 1 | 4.5x faster |")))
    assert len(findings) == 1 and "column 'shape': 4.5x is a measured number in a text column" in findings[0]


def test_a_column_the_mapping_does_not_name_is_a_finding(repo, g7):  # noqa: F811
    mapping = MAPPING.replace('"shape": null, ', "")
    findings = g7(page_text(repo, mapping=mapping))
    assert any("does not say what column 'shape' holds" in f for f in findings), findings


@pytest.mark.parametrize("first, expected", [
    ("# no declaration", "declares no artifact"),
    (lambda repo: declaration(repo, sha256="0" * 64), "the page was generated from SHA-256 " + "0" * 64),
    (lambda repo: declaration(repo, path="docs/evidence/bench-copy.json"), "which the record does not declare as evidence"),
], ids=["undeclared", "other-sha256", "artifact-the-record-does-not-declare"])
def test_a_page_must_declare_the_records_pinned_artifact(repo, g7, first, expected):  # noqa: F811
    if callable(first):
        copy = repo / "docs" / "evidence" / "bench-copy.json"
        copy.write_bytes((repo / "docs" / "evidence" / "benchmark-h200.json").read_bytes())
        first = first(repo)
    findings = g7(page_text(repo, first=first))
    assert findings and expected in findings[0] and findings[0].startswith("docs/results/bench.md:1:1:"), findings


def test_a_page_of_notes_is_not_traced_but_its_end_to_end_claims_are_checked(repo, g7):  # noqa: F811
    notes = "<!-- results-notes: predictions and earlier runs, quoted from their logs -->"
    assert g7(page_text(repo, TABLE.replace("17.14", "15.02"), mapping="", first=notes)) == []
    findings = g7(page_text(repo, first=notes, extra=" End to end, serving is 20% faster."))
    assert len(findings) == 1
    assert "docs/results/bench.md:5:" in findings[0] and "end-to-end claim ('End to end')" in findings[0]
    assert "claim_level is kernel" in findings[0] and "linked from docs/design/splitkv.md" in findings[0]


def test_an_end_to_end_claim_on_a_results_page_is_a_finding(repo, g7):  # noqa: F811
    findings = g7(page_text(repo, extra=" It cuts TPOT by 30%."))
    assert len(findings) == 1 and "end-to-end claim ('TPOT')" in findings[0]


def test_a_page_the_record_does_not_link_is_not_read(repo, g7):  # noqa: F811
    unlinked = g7.record.read_text(encoding="utf-8").replace(
        LINKED, "From the [benchmark](../evidence/benchmark-h200.json).")
    g7.record.write_text(unlinked, encoding="utf-8")
    assert g7("# stray page, 4.5x faster end to end") == []


def test_the_committed_report_is_what_the_generator_writes_from_the_pinned_artifact():
    from validation.bench.report import render

    page = ROOT / "docs" / "results" / "splitkv-h200.md"
    artifact_path = ROOT / "docs" / "evidence" / "bench-splitkv-h200.json"
    artifact = json.loads(artifact_path.read_text(encoding="utf-8"))
    images = ["splitkv-h200-context.png", "splitkv-h200-shapes.png"]
    sha256 = hashlib.sha256(artifact_path.read_bytes()).hexdigest()
    assert render(artifact, "docs/evidence/bench-splitkv-h200.json", images, sha256) == page.read_text(encoding="utf-8")


def check_committed_report(edit) -> list[str]:
    """G7 on this repository's report as the split-KV record links it, after `edit`."""
    from gates.checks.context import GateContext
    from gates.checks.results_pages import Page, check_page
    from gates.evidence.artifacts import EvidenceStore
    from gates.model.record import load_record

    record = load_record(ROOT / "docs" / "design" / "splitkv-decode-attention.md", ROOT)
    text = edit((ROOT / "docs" / "results" / "splitkv-h200.md").read_text(encoding="utf-8"))
    page = Page("docs/results/splitkv-h200.md", text.split("\n"))
    return [f.format_text() for f in check_page(page, record, GateContext(ROOT, evidence=EvidenceStore(ROOT)), [])]


def ours_at_32k() -> str:
    """The report's cell for the split route at one request and 32k tokens, as the artifact measured it."""
    summary = json.loads((ROOT / "docs" / "evidence" / "bench-splitkv-h200.json").read_text(encoding="utf-8"))
    return f"| {summary['results']['summary']['llama8b-b1-32k']['ours_us']:.2f} |"


def first_failing_row_shown_as_passing(text: str) -> str:
    """The report with its first failing shape's 'NO' turned into 'yes' (whatever the run measured)."""
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.endswith("| NO |"))
    lines[index] = lines[index][: -len("NO |")] + "yes |"
    return "\n".join(lines)


def test_the_committed_report_traces_to_its_artifact():
    assert check_committed_report(lambda text: text) == []


@pytest.mark.parametrize("edit, expected", [
    (lambda t: first_failing_row_shown_as_passing(t),
     "column 'pass': 'yes' is not what summary.{row}.passed = False reads as ('NO')"),
    (lambda t: t.replace("read_ceiling_fraction>=0.85: FAIL", "read_ceiling_fraction>=0.85: pass", 1),
     "column 'checks':"),
    (lambda t: "\n".join(line for line in t.split("\n") if not line.startswith("| llama8b-b1-32k | >=")),
     "the table leaves out rows the artifact has under summary: llama8b-b1-32k"),
    (lambda t: t.replace(ours_at_32k(), "| 35.02 |", 1), "column 'ours us': 35.02 is not the value it names"),
], ids=["failed-shape-shown-as-passing", "failed-check-shown-as-passing", "failed-shape-dropped", "faster-time"])
def test_an_edited_report_is_a_finding(edit, expected):
    findings = check_committed_report(edit)
    assert any(expected in finding for finding in findings), findings


@pytest.mark.parametrize("link", [
    "Every row is on the [results page][bench].\n\n[bench]: ../results/bench.md",
    'Every row is on the <a href="../results/bench.md">results page</a>.',
    "Every row is on the [results page](../results/index.md), which links the [table](bench.md).",
], ids=["reference-style", "html-anchor", "page-linked-from-a-page"])
def test_a_results_page_linked_any_way_a_reader_can_follow_is_checked(repo, g7, link):  # noqa: F811
    evidence = "From the [benchmark](../evidence/benchmark-h200.json). "
    g7.record.write_text(g7.record.read_text(encoding="utf-8").replace(LINKED, evidence + link), encoding="utf-8")
    (repo / "docs" / "results" / "index.md").write_text(
        "<!-- results-notes: an index -->\n\n# Results\n\nSee the [table](bench.md).\n", encoding="utf-8")
    findings = g7(page_text(repo, extra=" It cuts TPOT by 30%."))
    assert len(findings) == 1 and findings[0].startswith("docs/results/bench.md:5:"), findings
    assert "end-to-end claim ('TPOT')" in findings[0]
