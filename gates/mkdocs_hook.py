"""MkDocs hook: the header of every design record page and the records index.

Enable it in ``mkdocs.yml``::

    hooks:
      - gates/mkdocs_hook.py

Every ``docs/design/<id>.md`` (other than the index) is loaded as a design record.
At the top of its page the hook renders the record's stage and status, the records
it is stacked on, the G0-G8 table with each gate's status and findings, the
reviewer questions with their recommendations and decisions, the unknowns with the
stage that closes each, and the evidence files with their SHA-256.  It also adds
``design/index.md`` (all records with id, title, stage, status and gates) and
``results/index.md`` (every results report) when those files are not on disk.

Gate results come from a ``gate-check --format json`` report when one is named by
the ``DESIGN_GATES_REPORT`` environment variable or by ``extra.design_gates.report``
in ``mkdocs.yml`` (a path relative to the directory of ``mkdocs.yml``).  Otherwise
the gates are computed at build time without executing any test suite.

The build fails (``PluginError``) on an invalid record, on a gate that errors, and
on a report that cannot be read or does not cover every record.  A gate that fails
is shown as failing: reviewers read records before they pass.

Every front-matter value is HTML-escaped before it reaches the page.  The record's
own status is the ``record_status`` key; Material's page ``status`` key never
comes from a record (the schema rejects it, and the hook drops it).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Callable

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

_REPO_ROOT = Path(__file__).resolve().parents[1]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from gates.errors import DesignGatesError  # noqa: E402

log = logging.getLogger("mkdocs.hooks.design_gates")

RECORDS_DIR = "design"
RECORDS_INDEX = "design/index.md"
RESULTS_DIR = "results"
RESULTS_INDEX = "results/index.md"
REPORT_ENV = "DESIGN_GATES_REPORT"
GATE_IDS = tuple(f"G{n}" for n in range(9))

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
    },
}


@dataclass
class RecordView:
    """What the page renderer needs about one record: plain data only."""

    id: str
    path: str  # repository-relative
    meta: dict
    gates: dict  # {"G0": {"status": ..., "findings": [...]}, ...} as in Report.to_json()
    evidence_check: dict  # evidence path -> "verified" | "mismatch" | "missing"


@dataclass
class _BuildState:
    repo_root: Path
    docs_dir: Path
    report_path: Path | None
    records: dict  # src_uri -> RecordView


_state: _BuildState | None = None


def on_config(config):
    """Start a build: find the repository root and the report to render, if any."""
    global _state
    config_dir = Path(config.config_file_path or ".").resolve().parent
    docs_dir = Path(config.docs_dir).resolve()
    report = os.environ.get(REPORT_ENV) or (config.extra.get("design_gates") or {}).get("report")
    report_path = (config_dir / report).resolve() if report else None
    _state = _BuildState(repo_root=config_dir, docs_dir=docs_dir, report_path=report_path, records={})
    return config


def on_files(files: Files, config) -> Files:
    """Load and check every record; add the records and results indexes."""
    state = _require_state()
    record_files = [f for f in files.documentation_pages() if _is_record_uri(f.src_uri)]
    paths = [_repo_relative(Path(f.abs_src_path), state.repo_root) for f in record_files]
    metas = [_load_front_matter(Path(f.abs_src_path), state.repo_root) for f in record_files]
    if state.report_path:
        report = _read_report(state.report_path)
    else:
        report = _static_report(paths, state.repo_root) if paths else {"records": []}
    by_path = {entry.get("path"): entry for entry in report.get("records", [])}
    errors = [f'{e.get("path")}:{e.get("line", 1)}:{e.get("col", 1)}: {e.get("message")}' for e in report.get("errors") or []]
    if errors:
        raise PluginError("invalid design record:\n" + "\n".join(errors))
    for file, path, meta in zip(record_files, paths, metas):
        entry = by_path.get(path)
        if entry is None:
            raise PluginError(f"{state.report_path}: the gate report has no entry for the record {path}")
        gates = entry.get("gates") or {}
        for gate, result in sorted(gates.items()):
            if result.get("status") == "error":
                messages = "; ".join(f.get("message", "") for f in result.get("findings", []))
                errors.append(f"{path}: {gate} errored: {messages}")
        meta.pop("status", None)
        state.records[file.src_uri] = RecordView(
            id=str(meta.get("id", Path(path).stem)), path=path, meta=meta, gates=gates,
            evidence_check=_check_evidence(meta.get("evidence") or [], state.repo_root),
        )
    if errors:
        raise PluginError("a gate errored on a design record:\n" + "\n".join(errors))
    _add_generated(files, config, RECORDS_INDEX, lambda index: _records_index(index, files, state))
    _add_generated(files, config, RESULTS_INDEX, lambda index: _results_index(index, files))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Escape a record's title wherever the theme prints it."""
    view = _view_for(page)
    if view is not None:
        page.meta.pop("status", None)
        page.meta["title"] = escape(str(view.meta.get("title", view.id)))
    return markdown


def on_page_content(html: str, page, config, files) -> str:
    """Put the record header after the page's first heading (or first, when it has none)."""
    view = _view_for(page)
    if view is None:
        return html
    source = _state.report_path if _state and _state.report_path else None
    header = render_record_header(view, _linker(page.file, files), report_name=source and source.name)
    cut = html.find("</h1>")
    if cut < 0:
        title = escape(str(view.meta.get("title", view.id)))
        return f'<h1 id="dg-title">{title}</h1>\n{header}\n{html}'
    cut += len("</h1>")
    return html[:cut] + "\n" + header + "\n" + html[cut:]


def render_record_header(view: RecordView, link: Callable[[str, str], str | None],
                         report_name: str | None = None) -> str:
    """The record header as HTML.  ``link(kind, key)`` gives a URL or None.

    ``kind`` is ``"record"`` (key: record id), ``"gate"`` (key: ``G0``..``G8``) or
    ``"file"`` (key: repository-relative path).  Every value is escaped here.
    """
    meta = view.meta
    t = LABELS.get(str(meta.get("lang")), LABELS["en"])
    parts = [f'<div class="dg-record" id="dg-record" data-record="{_e(view.id)}">']
    parts.append(_facts(meta, view, t, link))
    parts.append(f'<h2 id="dg-gates">{t["gates"]}</h2>')
    parts.append(_gate_table(view.gates, t, link))
    note = f'{t["report"]} <code>{_e(report_name)}</code>.' if report_name else t["static"]
    parts.append(f'<p class="dg-source">{note}</p>')
    parts.append(_questions(meta.get("questions") or [], t))
    parts.append(_unknowns(meta.get("unknowns") or [], t))
    parts.append(_evidence(meta.get("evidence") or [], view.evidence_check, t, link))
    parts.append("</div>")
    return "\n".join(p for p in parts if p)


def _facts(meta, view, t, link) -> str:
    stacked = [_a(link("record", str(r)), _e(r)) for r in meta.get("stacked_on") or []]
    reviewers = [f'{_e(r.get("name", ""))} {_badge(r.get("decision") or "pending")}'
                 for r in meta.get("reviewers") or [] if isinstance(r, dict)]
    authors = [_e(a.get("name", "")) for a in meta.get("authors") or [] if isinstance(a, dict)]
    rows = [
        (t["record"], f"<code>{_e(view.id)}</code>"),
        (t["stage"], _badge(meta.get("stage", "?"), "stage")),
        (t["record_status"], _badge(meta.get("record_status", "?"))),
        (t["risk"], _e(meta.get("risk", ""))),
        (t["claim_level"], _e(meta.get("claim_level", ""))),
        (t["stacked_on"], ", ".join(stacked) or t["none"]),
        (t["authors"], ", ".join(authors) or t["none"]),
        (t["reviewers"], ", ".join(reviewers) or t["none"]),
    ]
    items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="dg-facts">{items}</dl>'


def _gate_table(gates: dict, t, link) -> str:
    rows = []
    for gate in GATE_IDS:
        result = gates.get(gate) or {"status": "missing", "findings": []}
        findings = result.get("findings") or []
        items = "".join(
            f"<li><code>{_e(f.get('line', 1))}:{_e(f.get('col', 1))}</code> {_e(f.get('message', ''))}"
            + (f" <code>[{_e(str(f['commit'])[:12])}]</code>" if f.get("commit") else "") + "</li>"
            for f in findings
        )
        cell = f'<ul class="dg-findings">{items}</ul>' if items else ""
        rows.append(f'<tr data-gate="{gate}"><td>{_a(link("gate", gate), gate)}</td>'
                    f'<td>{_badge(result.get("status", "missing"))}</td><td>{cell}</td></tr>')
    head = f'<tr><th>{t["gate"]}</th><th>{t["status"]}</th><th>{t["findings"]}</th></tr>'
    return f'<table class="dg-gates"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _questions(questions: list, t) -> str:
    if not questions:
        return ""
    rows = "".join(
        f'<tr><td>{_e(q.get("id", ""))}</td><td>{_e(q.get("question", ""))}</td>'
        f'<td>{_e(q.get("recommendation", ""))}</td>'
        f'<td>{_badge(q.get("decision") or "pending")}</td><td>{_e(q.get("blast_radius", ""))}</td></tr>'
        for q in questions if isinstance(q, dict)
    )
    return _titled_table("questions", t["questions"],
                         ["ID", t["question"], t["recommendation"], t["decision"], t["blast_radius"]], rows)


def _unknowns(unknowns: list, t) -> str:
    if not unknowns:
        return ""
    rows = "".join(
        f'<tr><td>{_e(u.get("id", ""))}</td><td>{_e(u.get("question", ""))}</td>'
        f'<td>{_badge(u.get("closes_at", "?"), "stage")}</td><td>{_badge(u.get("status", "open"))}</td>'
        f'<td>{", ".join(f"<code>{_e(x)}</code>" for x in u.get("evidence") or [])}</td></tr>'
        for u in unknowns if isinstance(u, dict)
    )
    return _titled_table("unknowns", t["unknowns"],
                         ["ID", t["question"], t["closes_at"], t["status"], t["evidence"]], rows)


def _titled_table(name: str, title: str, headers: list, rows: str) -> str:
    """A heading and a table with CSS class dg-<name>; `rows` is already escaped HTML."""
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"
    return (f'<h2 id="dg-{name}">{title}</h2>'
            f'<table class="dg-{name}"><thead>{head}</thead><tbody>{rows}</tbody></table>')


def _evidence(entries: list, checks: dict, t, link) -> str:
    if not entries:
        return ""
    rows = "".join(
        f'<tr id="dg-evidence-{_e(ev.get("id", ""))}"><td><code>{_e(ev.get("id", ""))}</code></td>'
        f'<td>{_e(ev.get("kind", ""))}</td>'
        f'<td>{_a(link("file", str(ev.get("path", ""))), _e(ev.get("path", "")))}</td>'
        f'<td><code class="dg-sha">{_e(ev.get("sha256", ""))}</code></td>'
        f'<td>{_badge(checks.get(str(ev.get("path", "")), "missing"))}</td></tr>'
        for ev in entries if isinstance(ev, dict)
    )
    head = (f'<tr><th>ID</th><th>{t["kind"]}</th><th>{t["file"]}</th><th>{t["sha256"]}</th>'
            f'<th>{t["check"]}</th></tr>')
    return (f'<h2 id="dg-evidence">{t["evidence"]}</h2>'
            f'<table class="dg-evidence"><thead>{head}</thead><tbody>{rows}</tbody></table>')


def _records_index(index: File, files: Files, state: _BuildState) -> str:
    link = _linker(index, files)
    rows = []
    for view in sorted(state.records.values(), key=lambda v: v.id):
        meta = view.meta
        gates = " ".join(
            _a(link("gate", g), _badge(f'{g} {_short(_gate_status(view, g))}', _gate_status(view, g)))
            for g in GATE_IDS
        )
        rows.append(
            f'<tr data-record="{_e(view.id)}"><td>{_a(link("record", view.id), f"<code>{_e(view.id)}</code>")}</td>'
            f'<td>{_e(meta.get("title", ""))}</td><td>{_badge(meta.get("stage", "?"), "stage")}</td>'
            f'<td>{_badge(meta.get("record_status", "?"))}</td><td>{_e(meta.get("risk", ""))}</td>'
            f'<td class="dg-index-gates">{gates}</td></tr>'
        )
    body = "".join(rows) or '<tr><td colspan="6">No design records yet.</td></tr>'
    return (
        "---\ntitle: Design records\n---\n\n# Design records\n\n"
        "Every design record in `docs/design/`, with the stage its series has reached, the "
        "record's own status and its gates.\n\n"
        '<table class="dg-index"><thead><tr><th>ID</th><th>Title</th><th>Stage</th>'
        f'<th>Record status</th><th>Risk</th><th>Gates</th></tr></thead><tbody>{body}</tbody></table>\n'
    )


def _results_index(index: File, files: Files) -> str:
    link = _linker(index, files)
    reports = sorted(
        (f for f in files.documentation_pages()
         if f.src_uri.startswith(RESULTS_DIR + "/") and f.src_uri != RESULTS_INDEX),
        key=lambda f: f.src_uri,
    )
    items = "".join(
        f'<li>{_a(link("docs", f.src_uri), _e(_first_heading(Path(f.abs_src_path)) or f.name))}</li>'
        for f in reports
    )
    body = f"<ul>{items}</ul>" if items else "<p>No results reports yet.</p>"
    return ("---\ntitle: Results\n---\n\n# Results\n\nBenchmark and validation reports, each "
            f"written from the evidence artifacts in `docs/evidence/`.\n\n{body}\n")


def _gate_status(view: RecordView, gate: str) -> str:
    return str((view.gates.get(gate) or {}).get("status", "missing"))


def _short(status: str) -> str:
    return {"not-applicable": "n/a"}.get(status, status)


def _linker(source: File, files: Files) -> Callable[[str, str], str | None]:
    """URLs relative to ``source`` for records, gate pages, docs pages and evidence files."""
    state = _require_state()
    docs_prefix = _repo_relative(state.docs_dir, state.repo_root).rstrip("/") + "/"

    def link(kind: str, key: str) -> str | None:
        if kind == "record":
            uri = f"{RECORDS_DIR}/{key}.md"
        elif kind == "gate":
            uri = f"gates/{key}.md"
        elif kind == "file":
            if docs_prefix != "./" and not key.startswith(docs_prefix):
                return None
            uri = key[len(docs_prefix):] if docs_prefix != "./" else key
        else:
            uri = key
        target = files.get_file_from_path(uri)
        return target.url_relative_to(source) if target is not None else None

    return link


def _add_generated(files: Files, config, uri: str, content: Callable[[File], str]) -> None:
    if files.get_file_from_path(uri) is not None:
        return
    placeholder = File.generated(config, uri, content="", inclusion=InclusionLevel.INCLUDED)
    files.append(placeholder)
    placeholder.content_string = content(placeholder)


def _load_front_matter(path: Path, repo_root: Path) -> dict:
    """The record's front matter; an unreadable or schema-invalid record stops the build."""
    from gates.record import load_record
    from gates.schemas import validate

    try:
        record = load_record(path, repo_root)
    except DesignGatesError as exc:
        raise PluginError(f"invalid design record: {exc}") from exc
    problems = validate("record", record.front_matter)
    if problems:
        raise PluginError("invalid design record:\n" + "\n".join(
            f"{record.rel_path}:{record.line_of(*p.path)}:1: {p.message}" for p in problems))
    return dict(record.front_matter)


def _static_report(paths: list[str], repo_root: Path) -> dict:
    from gates.runner import check_records

    try:
        return check_records(paths, repo_root, run_suites=False).to_json()
    except DesignGatesError as exc:
        raise PluginError(f"gate-check could not check the design records: {exc}") from exc


def _read_report(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PluginError(f"{path}: cannot read the gate report: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise PluginError(f"{path}: not a `gate-check --format json` report (no 'records' list)")
    return data


def _check_evidence(entries: list, repo_root: Path) -> dict:
    """Evidence path -> "verified" (the file hashes to the pinned SHA-256), "mismatch" or "missing"."""
    from gates.evidence import file_sha256
    from gates.paths import resolve_inside

    checks = {}
    for ev in entries:
        if not isinstance(ev, dict) or not ev.get("path"):
            continue
        target = resolve_inside(repo_root, str(ev["path"]))
        if target is None or not target.is_file():
            checks[str(ev["path"])] = "missing"
            continue
        pinned = str(ev.get("sha256", "")).lower()
        checks[str(ev["path"])] = "verified" if file_sha256(target) == pinned else "mismatch"
    return checks


def _first_heading(path: Path) -> str | None:
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    except OSError:
        return None
    return None


def _is_record_uri(src_uri: str) -> bool:
    parts = src_uri.split("/")
    return len(parts) == 2 and parts[0] == RECORDS_DIR and parts[1].endswith(".md") and parts[1] != "index.md"


def _view_for(page) -> RecordView | None:
    return _state.records.get(page.file.src_uri) if _state else None


def _require_state() -> _BuildState:
    if _state is None:
        raise PluginError("design-gates hook: on_config did not run")
    return _state


def _repo_relative(path: Path, repo_root: Path) -> str:
    try:
        return path.resolve().relative_to(repo_root.resolve()).as_posix() or "."
    except ValueError:
        return path.resolve().as_posix()


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def _badge(value, kind: str | None = None) -> str:
    text = _e(value)
    css = kind or "".join(c if c.isalnum() or c == "-" else "-" for c in str(value).lower())
    return f'<span class="dg-badge dg-badge--{css}">{text}</span>'


def _a(url: str | None, inner: str) -> str:
    return f'<a href="{_e(url)}">{inner}</a>' if url else inner
