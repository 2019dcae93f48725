"""The record header the site plugin renders, from plain data (no site build)."""

from __future__ import annotations

import hashlib
import re

import pytest

pytest.importorskip("mkdocs")

from gates.site.evidence_check import check_evidence  # noqa: E402
from gates.site.record_header import GATE_IDS, RecordView, render_record_header  # noqa: E402


def _gates(**overrides):
    gates = {g: {"status": "pass", "findings": []} for g in GATE_IDS}
    gates.update(overrides)
    return gates


def _link(kind, key):
    if kind == "record":
        return f"../{key}/"
    if kind == "gate":
        return f"../../gates/{key}/"
    if kind == "file" and key.startswith("docs/"):
        return "../../" + key[len("docs/"):]
    return None


def _view(**meta):
    base = {
        "id": "splitkv-decode-attention",
        "title": "Split-KV decode attention",
        "lang": "en",
        "stage": "B",
        "record_status": "approved",
        "risk": "L3",
        "claim_level": "kernel",
        "stacked_on": ["paged-decode-attention"],
        "authors": [{"name": "Ada Author", "email": "ada@example.org"}],
        "reviewers": [{"name": "Rui Reviewer", "email": "rui@example.org", "decision": "approved"}],
        "questions": [{"id": "Q1", "question": "Combine in a separate kernel?",
                       "recommendation": "Yes, a separate combine kernel.", "decision": "accepted",
                       "blast_radius": "low"}],
        "unknowns": [{"id": "U1", "question": "Best num_splits on the H200?", "closes_at": "D",
                      "status": "open"}],
        "evidence": [],
    }
    base.update(meta)
    return RecordView(id=base["id"], path=f"docs/design/{base['id']}.md", meta=base,
                      gates=_gates(), evidence_check={})


def _rows(html, table_class):
    table = re.search(rf'<table class="{table_class}">(.*?)</table>', html, re.S).group(1)
    return re.findall(r"<tr.*?</tr>", table.split("<tbody>", 1)[1], re.S)


def test_gate_table_has_one_row_per_gate_with_status_and_findings():
    view = _view()
    view.gates = _gates(G7={"status": "fail", "findings": [
        {"line": 40, "col": 3, "message": "TTFT claim without e2e evidence"}]})
    html = render_record_header(view, _link)
    rows = _rows(html, "dg-gates")
    assert [re.search(r'data-gate="(G\d)"', r).group(1) for r in rows] == list(GATE_IDS)
    g7 = rows[7]
    assert "dg-badge--fail" in g7
    assert "<code>40:3</code> TTFT claim without e2e evidence" in g7
    assert '<a href="../../gates/G7/">G7</a>' in g7


def test_a_gate_missing_from_the_results_shows_as_missing_not_as_pass():
    view = _view()
    del view.gates["G5"]
    rows = _rows(render_record_header(view, _link), "dg-gates")
    assert "dg-badge--missing" in rows[5] and "dg-badge--pass" not in rows[5]


@pytest.mark.parametrize("field,value", [
    ("title", "<script>alert(1)</script>"),
    ("risk", "<img src=x onerror=alert(1)>"),
], ids=["title", "risk"])
def test_front_matter_values_are_escaped(field, value):
    view = _view(**{field: value})
    view.meta["questions"][0]["question"] = "<b>bold</b> & co"
    html = render_record_header(view, _link)
    assert "<img" not in html and "<b>bold" not in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html


def test_finding_messages_and_author_names_are_escaped():
    view = _view(authors=[{"name": "<script>x()</script>", "email": "a@b.c"}])
    view.gates = _gates(G1={"status": "fail", "findings": [{"line": 1, "col": 1, "message": "<svg onload=1>"}]})
    html = render_record_header(view, _link)
    assert "<script>" not in html and "<svg" not in html
    assert "&lt;script&gt;x()&lt;/script&gt;" in html and "&lt;svg onload=1&gt;" in html


def test_stacked_on_links_to_the_other_record():
    html = render_record_header(_view(), _link)
    assert '<a href="../paged-decode-attention/">paged-decode-attention</a>' in html


def test_questions_show_recommendation_and_decision_and_pending_when_undecided():
    view = _view()
    view.meta["questions"].append({"id": "Q2", "question": "num_splits as a host parameter?",
                                   "recommendation": "Host parameter.", "decision": None,
                                   "blast_radius": "medium"})
    rows = _rows(render_record_header(view, _link), "dg-questions")
    assert "Yes, a separate combine kernel." in rows[0] and "dg-badge--accepted" in rows[0]
    assert "dg-badge--pending" in rows[1]


def test_unknowns_name_their_closing_stage():
    rows = _rows(render_record_header(_view(), _link), "dg-unknowns")
    assert '<span class="dg-badge dg-badge--stage">D</span>' in rows[0]


def test_evidence_rows_link_the_file_and_show_sha256_and_file_check(tmp_path):
    artifact = tmp_path / "docs" / "evidence" / "ncu-single-pass-h200.json"
    artifact.parent.mkdir(parents=True)
    artifact.write_text('{"kind": "profile"}\n')
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    entries = [
        {"id": "ncu-single-pass-h200", "path": "docs/evidence/ncu-single-pass-h200.json",
         "sha256": digest, "kind": "profile"},
        {"id": "bench-gone", "path": "docs/evidence/bench-gone.json", "sha256": "0" * 64, "kind": "benchmark"},
    ]
    view = _view(evidence=entries)
    view.evidence_check = check_evidence(entries, tmp_path)
    rows = _rows(render_record_header(view, _link), "dg-evidence")
    assert '<a href="../../evidence/ncu-single-pass-h200.json">' in rows[0]
    assert digest in rows[0] and "dg-badge--verified" in rows[0]
    assert "dg-badge--missing" in rows[1]
    artifact.write_text('{"kind": "profile", "edited": true}\n')
    assert check_evidence(entries, tmp_path)[entries[0]["path"]] == "mismatch"


def test_chinese_record_gets_chinese_labels():
    html = render_record_header(_view(lang="zh"), _link)
    assert "门禁" in html and "评审问题" in html and "未知项" in html and "关闭阶段" in html


def test_header_names_the_report_when_results_come_from_one():
    html = render_record_header(_view(), _link, report_name="gate-report.json")
    assert "<code>gate-report.json</code>" in html
    assert "static gates" not in html


def test_before_the_table_the_page_says_which_gates_ran_and_that_history_checks_run_in_ci_only():
    view = _view()
    view.gates = _gates(G5={"status": "not-applicable", "findings": []}, G6={"status": "not-applicable", "findings": []})
    html = render_record_header(view, _link)
    said = re.search(r'<p class="dg-ran">(.*?)</p>', html, re.S).group(1)
    assert html.index('class="dg-ran"') < html.index('<table class="dg-gates">')
    assert "This table ran G0, G1, G2, G3, G4, G7, G8 on the record as committed" in said
    assert "not applicable at its stage: G5, G6" in said
    assert "They run in CI only, with <code>gate-check --base</code>, and can fail where this table passes" in said


def test_with_a_report_the_page_says_history_checks_appear_only_if_it_was_made_with_base():
    said = re.search(r'<p class="dg-ran">(.*?)</p>', render_record_header(_view(), _link, report_name="r.json")).group(1)
    assert "This table shows the gate-check report <code>r.json</code>: G0, G1" in said
    assert "only if that report was made with <code>gate-check --base</code>" in said


def test_a_chinese_record_says_it_in_chinese():
    html = render_record_header(_view(lang="zh"), _link)
    assert "它们只在 CI 中运行" in html
