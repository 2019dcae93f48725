"""The header at the top of a record page: facts, the G0-G8 table, questions, unknowns, evidence.

It renders plain data (a ``RecordView``) and never reads files, so it can be tested
without building a site.  Every front-matter value is escaped before it reaches the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gates.checks.registry import TITLES
from gates.site.markup import Linker, anchor, badge, text

GATE_IDS = tuple(TITLES)

LABELS = {
    "en": {
        "record": "Record", "stage": "Stage", "record_status": "Record status", "risk": "Risk",
        "stacked_on": "Stacked on", "claim_level": "Claim level", "authors": "Authors",
        "reviewers": "Reviewers", "none": "none", "gates": "Gates", "gate": "Gate",
        "status": "Status", "findings": "Findings", "questions": "Reviewer questions",
        "question": "Question", "recommendation": "Recommendation", "decision": "Decision",
        "blast_radius": "Blast radius", "unknowns": "Unknowns", "closes_at": "Closes at",
        "evidence": "Evidence", "kind": "Kind", "file": "File", "sha256": "SHA-256",
        "check": "File check", "pending": "pending", "report": "Gate results from the report",
        "static": "Gate results computed when the site was built (static gates, no suite executed).",
        "ran": "This table ran {ran} on the record as committed, reading its evidence (no suite executed)",
        "not_applicable": "; not applicable at its stage: {gates}",
        "ci_only": ("Not run here: the history checks of a change (stage scope, prerequisites, API diff, "
                    "approvals, hot path). They run in CI only, with <code>gate-check --base</code>, "
                    "and can fail where this table passes."),
        "report_ran": "This table shows the gate-check report <code>{report}</code>: {ran}",
        "report_ci": ("History checks appear here only if that report was made with "
                      "<code>gate-check --base</code>, as CI runs it."),
        "nothing": "no gate", "stop": ". ",
    },
    "zh": {
        "record": "记录", "stage": "阶段", "record_status": "记录状态", "risk": "风险等级",
        "stacked_on": "依赖于", "claim_level": "声明级别", "authors": "作者",
        "reviewers": "评审人", "none": "无", "gates": "门禁", "gate": "门禁",
        "status": "状态", "findings": "发现", "questions": "评审问题",
        "question": "问题", "recommendation": "建议", "decision": "决议",
        "blast_radius": "影响范围", "unknowns": "未知项", "closes_at": "关闭阶段",
        "evidence": "证据", "kind": "类型", "file": "文件", "sha256": "SHA-256",
        "check": "文件校验", "pending": "待定", "report": "门禁结果来自报告",
        "static": "门禁结果在构建站点时计算（静态门禁，未执行测试套件）。",
        "ran": "本表对已提交的记录运行了 {ran}，读取其证据（未执行测试套件）",
        "not_applicable": "；在其阶段不适用：{gates}",
        "ci_only": ("此处未运行：变更的历史检查（阶段范围、前置条件、API 差异、批准、热路径）。"
                    "它们只在 CI 中运行（<code>gate-check --base</code>），本表通过时它们仍可能失败。"),
        "report_ran": "本表显示 gate-check 报告 <code>{report}</code>：{ran}",
        "report_ci": "只有当该报告由 <code>gate-check --base</code> 生成（如 CI 所做）时，才包含历史检查。",
        "nothing": "无门禁", "stop": "。",
    },
}


@dataclass
class RecordView:
    """What the page renderer needs about one record: plain data only."""

    id: str
    path: str  # repository-relative
    meta: dict
    gates: dict  # {"G0": {"status": ..., "findings": [...]}, ...} as in Report.to_json()
    evidence_check: dict = field(default_factory=dict)  # evidence path -> "verified" | "mismatch" | "missing"

    def gate_status(self, gate: str) -> str:
        return str((self.gates.get(gate) or {}).get("status", "missing"))


def render_record_header(view: RecordView, link: Linker, report_name: str | None = None) -> str:
    """The record header as HTML; ``link`` gives URLs (see ``gates.site.markup.Linker``).

    ``report_name`` names the gate-check report the results come from; without it the
    header says the static gates were computed when the site was built.
    """
    meta = view.meta
    labels = LABELS.get(str(meta.get("lang")), LABELS["en"])
    note = f'{labels["report"]} <code>{text(report_name)}</code>.' if report_name else labels["static"]
    parts = [
        f'<div class="dg-record" id="dg-record" data-record="{text(view.id)}">',
        _facts(view, labels, link),
        f'<h2 id="dg-gates">{labels["gates"]}</h2>',
        _what_ran(view, labels, report_name),
        _gate_table(view.gates, labels, link),
        f'<p class="dg-source">{note}</p>',
        _questions(meta.get("questions") or [], labels),
        _unknowns(meta.get("unknowns") or [], labels),
        _evidence(meta.get("evidence") or [], view.evidence_check, labels, link),
        "</div>",
    ]
    return "\n".join(p for p in parts if p)


def _what_ran(view: RecordView, labels: dict, report_name: str | None) -> str:
    """Which gates the table ran, and that the history checks run in CI only, said before the table."""
    statuses = {gate: view.gate_status(gate) for gate in GATE_IDS}
    ran = [gate for gate, status in statuses.items() if status not in ("not-applicable", "missing")]
    skipped = [gate for gate, status in statuses.items() if status == "not-applicable"]
    ran_text = ", ".join(ran) or labels["nothing"]
    if report_name:
        first = labels["report_ran"].format(report=text(report_name), ran=ran_text)
        second = labels["report_ci"]
    else:
        first = labels["ran"].format(ran=ran_text)
        second = labels["ci_only"]
    if skipped:
        first += labels["not_applicable"].format(gates=", ".join(skipped))
    return f'<p class="dg-ran">{first}{labels["stop"]}{second}</p>'


def _facts(view: RecordView, labels: dict, link: Linker) -> str:
    meta = view.meta
    stacked = [anchor(link("record", str(r)), text(r)) for r in meta.get("stacked_on") or []]
    reviewers = [f'{text(r.get("name", ""))} {badge(r.get("decision") or "pending")}'
                 for r in meta.get("reviewers") or [] if isinstance(r, dict)]
    authors = [text(a.get("name", "")) for a in meta.get("authors") or [] if isinstance(a, dict)]
    rows = [
        (labels["record"], f"<code>{text(view.id)}</code>"),
        (labels["stage"], badge(meta.get("stage", "?"), "stage")),
        (labels["record_status"], badge(meta.get("record_status", "?"))),
        (labels["risk"], text(meta.get("risk", ""))),
        (labels["claim_level"], text(meta.get("claim_level", ""))),
        (labels["stacked_on"], ", ".join(stacked) or labels["none"]),
        (labels["authors"], ", ".join(authors) or labels["none"]),
        (labels["reviewers"], ", ".join(reviewers) or labels["none"]),
    ]
    items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="dg-facts">{items}</dl>'


def _gate_table(gates: dict, labels: dict, link: Linker) -> str:
    rows = []
    for gate in GATE_IDS:
        result = gates.get(gate) or {"status": "missing", "findings": []}
        items = "".join(_finding(f) for f in result.get("findings") or [])
        cell = f'<ul class="dg-findings">{items}</ul>' if items else ""
        rows.append(f'<tr data-gate="{gate}"><td>{anchor(link("gate", gate), gate)}</td>'
                    f'<td>{badge(result.get("status", "missing"))}</td><td>{cell}</td></tr>')
    head = f'<tr><th>{labels["gate"]}</th><th>{labels["status"]}</th><th>{labels["findings"]}</th></tr>'
    return f'<table class="dg-gates"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _finding(finding: dict) -> str:
    commit = f' <code>[{text(str(finding["commit"])[:12])}]</code>' if finding.get("commit") else ""
    where = f'{text(finding.get("line", 1))}:{text(finding.get("col", 1))}'
    return f'<li><code>{where}</code> {text(finding.get("message", ""))}{commit}</li>'


def _questions(questions: list, labels: dict) -> str:
    if not questions:
        return ""
    rows = "".join(
        f'<tr><td>{text(q.get("id", ""))}</td><td>{text(q.get("question", ""))}</td>'
        f'<td>{text(q.get("recommendation", ""))}</td>'
        f'<td>{badge(q.get("decision") or "pending")}</td><td>{text(q.get("blast_radius", ""))}</td></tr>'
        for q in questions if isinstance(q, dict)
    )
    headers = ["ID", labels["question"], labels["recommendation"], labels["decision"], labels["blast_radius"]]
    return _titled_table("questions", labels["questions"], headers, rows)


def _unknowns(unknowns: list, labels: dict) -> str:
    if not unknowns:
        return ""
    rows = "".join(
        f'<tr><td>{text(u.get("id", ""))}</td><td>{text(u.get("question", ""))}</td>'
        f'<td>{badge(u.get("closes_at", "?"), "stage")}</td><td>{badge(u.get("status", "open"))}</td>'
        f'<td>{", ".join(f"<code>{text(x)}</code>" for x in u.get("evidence") or [])}</td></tr>'
        for u in unknowns if isinstance(u, dict)
    )
    headers = ["ID", labels["question"], labels["closes_at"], labels["status"], labels["evidence"]]
    return _titled_table("unknowns", labels["unknowns"], headers, rows)


def _evidence(entries: list, checks: dict, labels: dict, link: Linker) -> str:
    if not entries:
        return ""
    rows = "".join(
        f'<tr id="dg-evidence-{text(ev.get("id", ""))}"><td><code>{text(ev.get("id", ""))}</code></td>'
        f'<td>{text(ev.get("kind", ""))}</td>'
        f'<td>{anchor(link("file", str(ev.get("path", ""))), text(ev.get("path", "")))}</td>'
        f'<td><code class="dg-sha">{text(ev.get("sha256", ""))}</code></td>'
        f'<td>{badge(checks.get(str(ev.get("path", "")), "missing"))}</td></tr>'
        for ev in entries if isinstance(ev, dict)
    )
    headers = ["ID", labels["kind"], labels["file"], labels["sha256"], labels["check"]]
    return _titled_table("evidence", labels["evidence"], headers, rows)


def _titled_table(name: str, title: str, headers: list, rows: str) -> str:
    """A heading and a table with CSS class dg-<name>; ``rows`` is already escaped HTML."""
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"
    return (f'<h2 id="dg-{name}">{title}</h2>'
            f'<table class="dg-{name}"><thead>{head}</thead><tbody>{rows}</tbody></table>')
