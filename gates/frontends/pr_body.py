"""Print the pull-request description for one stage of a design record's series.

    gate-check pr-body docs/design/splitkv-decode-attention.md --stage B [--lang zh] [--output pr.md]

The description is built from the record and its gate results only, so the same
tree always gives the same text (no dates, no absolute paths): why (the record's
§1 with the evidence it cites), design (§3), the decisions needed from reviewers,
validation (what was run, from the evidence artifacts, and what was not), the
limitations (§8), the follow-ups (§9 and the open unknowns) and the G0-G8 table.
Every number comes from an evidence artifact; end-to-end numbers appear only when
the record declares e2e evidence and claims the e2e level.

Exit codes: 0 the description was printed and every gate passes, 1 it was printed
but a gate fails (the table says which), 2 the record cannot be read or is not yet
at the requested stage.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gates.checks.registry import TITLES
from gates.evidence.artifacts import EvidenceStore
from gates.model.config import load_settings
from gates.model.errors import InputError, UsageError
from gates.model.markdown_body import iter_links
from gates.model.record import STAGES, Record, load_record

MARKER = "<!-- design-gates pr-body: record={path} stage={stage} -->"
MARKER_PATTERN = re.compile(r"<!-- design-gates pr-body: record=(\S+) stage=([A-D]) -->")
STAGE_KINDS = {"A": ("profile",), "B": ("numeric", "bitwise"), "C": ("capture",), "D": ("benchmark", "e2e")}

TEXT = {
    "en": {
        "stage_title": {"A": "design record", "B": "kernel and tests", "C": "workspace, switch and routing",
                        "D": "benchmark and results report"},
        "scope": {
            "A": "This pull request adds the design record only: no code changes.",
            "B": "This pull request adds the kernel and its tests; nothing routes to it yet.",
            "C": "This pull request adds the workspace, the switch and the routing; the default route stays as it is.",
            "D": "This pull request adds the benchmark and the results report.",
        },
        "single_title": "design record, change and evidence",
        "single_fact": "one pull request: record, change and evidence together",
        "single_scope": "This pull request carries the design record, the change with its tests, and the evidence "
                        "the record cites, together (the single-pr process).",
        "single_scope_no_evidence": "This pull request carries the design record and the change with its tests, "
                                    "together (the single-pr process); the record cites no evidence artifact.",
        "record": "Design record", "stage": "stage", "of": "of the series A→D", "stacked": "stacked on",
        "risk": "risk", "why": "Why", "design": "Design", "decisions": "Decisions needed from reviewers",
        "validation": "Validation", "run": "What was run", "not_run": "What was not run",
        "results": "Results (§7 of the record)",
        "limitations": "Limitations", "followups": "Follow-ups", "gates": "Gates",
        "cited": "Evidence the diagnosis cites:", "no_section": "(the record has no §{n})",
        "recommendation": "Recommendation", "decision": "Decision", "blast": "blast radius",
        "needed": "**needed**", "all_decided": "Every reviewer question is decided.",
        "no_questions": "The record asks reviewers no questions.",
        "earlier": "Carried from earlier stages (the gates re-check their pins and freshness):",
        "this_stage": "For this stage:", "none_this_stage": "No evidence artifact for this stage.",
        "gate_check": "`gate-check` on the record at stage {stage} (static gates: G3/G4 read the evidence "
                      "artifacts, no suite was executed); the result is the table below.",
        "later": "{what}: belongs to stage {stage}, not run for this pull request.",
        "missing": "{what}: no artifact declared in the record.",
        "no_e2e": "End-to-end measurement: not run. Every number in this description is kernel-level.",
        "docs_only": "No kernel, test suite or benchmark ran for this pull request: it changes documentation only.",
        "open_unknown": "{uid} (closes at stage {stage}): {question}",
        "gate": "Gate", "status": "Status", "findings": "Findings",
        "kinds": {"profile": "Profile", "numeric": "Numeric suite", "bitwise": "Bitwise anchors and fingerprints",
                  "capture": "CUDA-graph capture", "benchmark": "Benchmark", "e2e": "End-to-end measurement"},
        "lang_note": "",
    },
    "zh": {
        "stage_title": {"A": "设计记录", "B": "内核与测试", "C": "工作区、开关与路由", "D": "基准测试与结果报告"},
        "scope": {
            "A": "本 PR 只加入设计记录，不改任何代码。",
            "B": "本 PR 加入内核及其测试；尚无任何路由指向它。",
            "C": "本 PR 加入工作区、开关与路由；默认路由保持不变。",
            "D": "本 PR 加入基准测试与结果报告。",
        },
        "single_title": "设计记录、改动与证据",
        "single_fact": "单个 PR：记录、改动与证据一并提交",
        "single_scope": "本 PR 一并加入设计记录、改动及其测试，以及记录引用的证据（single-pr 流程）。",
        "single_scope_no_evidence": "本 PR 一并加入设计记录、改动及其测试（single-pr 流程）；记录未引用任何证据文件。",
        "record": "设计记录", "stage": "阶段", "of": "（系列 A→D）", "stacked": "依赖于",
        "risk": "风险等级", "why": "为什么（诊断）", "design": "设计", "decisions": "需要评审决议的问题",
        "validation": "验证", "run": "已运行", "not_run": "未运行", "results": "结果（记录 §7）",
        "limitations": "限制", "followups": "后续", "gates": "门禁",
        "cited": "诊断引用的证据：", "no_section": "（记录中没有 §{n}）",
        "recommendation": "建议", "decision": "决议", "blast": "影响范围",
        "needed": "**待决议**", "all_decided": "所有评审问题均已决议。",
        "no_questions": "本记录没有需要评审决议的问题。",
        "earlier": "沿用前序阶段的证据（门禁会重新校验其哈希与新鲜度）：",
        "this_stage": "本阶段：", "none_this_stage": "本阶段没有证据文件。",
        "gate_check": "在阶段 {stage} 对记录运行 `gate-check`（静态门禁：G3/G4 读取证据文件，未执行测试套件）；"
                      "结果见下方表格。",
        "later": "{what}：属于阶段 {stage}，本 PR 未运行。",
        "missing": "{what}：记录中没有声明对应的证据文件。",
        "no_e2e": "端到端测量：未运行。本描述中的所有数字都是内核级的。",
        "docs_only": "本 PR 只改文档：没有运行任何内核、测试套件或基准测试。",
        "open_unknown": "{uid}（在阶段 {stage} 关闭）：{question}",
        "gate": "门禁", "status": "状态", "findings": "发现",
        "kinds": {"profile": "性能剖析", "numeric": "数值测试套件", "bitwise": "逐位锚点与指纹",
                  "capture": "CUDA Graph 捕获", "benchmark": "基准测试", "e2e": "端到端测量"},
        "lang_note": "以下章节正文摘自英文记录。",
    },
}


def add_arguments(parser) -> None:
    parser.add_argument("record", type=Path, help="the design record (docs/design/<id>.md)")
    parser.add_argument("--stage", required=True, choices=list(STAGES), help="the stage this pull request carries")
    parser.add_argument("--lang", choices=list(TEXT), help="language of the description (default: the record's)")
    parser.add_argument("--output", type=Path, help="write the description here instead of standard output")


def run(args, repo_root: Path) -> int:
    from gates.checks.runner import check_records

    record = load_record(args.record, repo_root)
    own = record.stage
    if own is None:
        raise InputError(record.rel_path, record.line_of("stage"), "the record has no valid stage")
    if STAGES.index(args.stage) > STAGES.index(own):
        raise UsageError(f"{record.rel_path} is at stage {own}; move it to stage {args.stage} (its `stage` field) "
                         f"in the same pull request before writing the stage {args.stage} description")
    report = check_records([record.path], repo_root, stage=args.stage, run_suites=False)
    if report.input_errors:
        raise report.input_errors[0]
    gates = report.records[0].to_json()["gates"]
    lang = args.lang or record.get("lang", default="en")
    profile = load_settings(repo_root).profile_for(record.get("process"))
    single = profile is not None and len(profile.stages) == 1
    text = render(record, args.stage, gates, EvidenceStore(repo_root), lang if lang in TEXT else "en", single=single)
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    failed = [g for g, r in gates.items() if r["status"] in ("fail", "error")]
    if failed:
        print(f"gate-check pr-body: gate(s) {', '.join(failed)} do not pass; see the Gates table", file=sys.stderr)
        return 1
    return 0


def render(record: Record, stage: str, gates: dict, store: EvidenceStore, lang: str = "en", *,
           single: bool = False) -> str:
    """The description as Markdown; `gates` is the record's entry of `Report.to_json()`. `single`: the record
    follows a one-stage process (`single-pr`), so the pull request carries everything at once."""
    t = TEXT[lang]
    out = [MARKER.format(path=record.rel_path, stage=stage), ""]
    title = record.get("title", default=record.id)
    if single:
        out += [f"# {title} — {t['single_title']}", ""]
        facts = [f"{t['record']}: [`{record.id}`]({record.rel_path})", t["single_fact"]]
    else:
        out += [f"# {title} — {t['stage']} {stage}: {t['stage_title'][stage]}", ""]
        facts = [f"{t['record']}: [`{record.id}`]({record.rel_path})", f"{t['stage']} {stage} {t['of']}"]
    facts.append(f"{t['risk']} {record.get('risk', default='?')}")
    stacked = record.get("stacked_on", default=[]) or []
    if stacked:
        facts.append(f"{t['stacked']} " + ", ".join(f"`{s}`" for s in stacked))
    artifacts = _artifacts(record, store)
    scope = (t["single_scope"] if artifacts else t["single_scope_no_evidence"]) if single else t["scope"][stage]
    out += [" · ".join(facts), "", scope, ""]
    if t["lang_note"] and record.get("lang") != lang:
        out += [t["lang_note"], ""]
    out += [f"## {t['why']}", "", _section_text(record, 1, t), ""]
    cited = [a for a in artifacts if _in_section(record, 1, a["path"])]
    if cited:
        out += [t["cited"], ""] + [_evidence_line(a, t) for a in cited] + [""]
    out += [f"## {t['design']}", "", _section_text(record, 3, t), ""]
    out += [f"## {t['decisions']}", ""] + _decisions(record, t) + [""]
    out += [f"## {t['validation']}", ""] + _validation(record, stage, artifacts, t, single) + [""]
    out += [f"## {t['limitations']}", "", _section_text(record, 8, t), ""]
    out += [f"## {t['followups']}", "", _section_text(record, 9, t)] + _open_unknowns(record, stage, t) + [""]
    out += [f"## {t['gates']}", ""] + gate_table(gates, t) + [""]
    return "\n".join(out).rstrip() + "\n"


def gate_table(gates: dict, t: dict) -> list[str]:
    rows = [f"| {t['gate']} | | {t['status']} | {t['findings']} |", "|---|---|---|---|"]
    for gate, title in TITLES.items():
        result = gates.get(gate) or {"status": "not run", "findings": []}
        findings = "<br>".join(
            _cell(f"{f.get('line', 1)}:{f.get('col', 1)} {f.get('message', '')}") for f in result.get("findings", []))
        rows.append(f"| {gate} | {title} | {result['status']} | {findings} |")
    return rows


def _artifacts(record: Record, store: EvidenceStore) -> list[dict]:
    """The declared evidence, each with its loaded artifact (or the reason it could not load)."""
    found = []
    for item in record.get("evidence", default=[]) or []:
        entry = {"id": item.get("id"), "path": item.get("path"), "kind": item.get("kind"),
                 "sha256": item.get("sha256"), "artifact": None, "problem": None}
        try:
            entry["artifact"] = store.get(str(item.get("path")))
        except InputError as exc:
            entry["problem"] = exc.message
        found.append(entry)
    return found


def _validation(record: Record, stage: str, artifacts: list[dict], t: dict, single: bool = False) -> list[str]:
    claim_e2e = record.get("claim_level") == "e2e"
    shown = [a for a in artifacts if a["kind"] != "e2e" or claim_e2e]
    now = shown if single else [a for a in shown if _stage_of(record, a) == STAGES.index(stage)]
    before = [] if single else [a for a in shown if _stage_of(record, a) < STAGES.index(stage)]
    lines = [f"### {t['run']}", ""]
    if stage == "A":
        lines += [_evidence_line(a, t) for a in before + now]
    else:
        lines += [t["this_stage"], ""] + ([_evidence_line(a, t) for a in now] or [f"- {t['none_this_stage']}"])
        if before:
            lines += ["", t["earlier"], ""] + [_evidence_line(a, t) for a in before]
    lines += [f"- {t['gate_check'].format(stage=record.stage or stage)}", ""]
    results = _section_text(record, 7, t)
    if record.section(7) is not None and results:
        lines += [f"### {t['results']}", "", results, ""]
    lines += [f"### {t['not_run']}", ""]
    if stage == "A":
        lines.append(f"- {t['docs_only']}")
    kinds_present = {a["kind"] for a in shown}
    for later in STAGES[STAGES.index(stage) + 1:]:
        for kind in STAGE_KINDS[later]:
            if kind != "e2e":
                lines.append(f"- {t['later'].format(what=t['kinds'][kind], stage=later)}")
    for earlier in STAGES[1:STAGES.index(stage) + 1]:
        for kind in STAGE_KINDS[earlier]:
            if kind != "e2e" and kind not in kinds_present:
                lines.append(f"- {t['missing'].format(what=t['kinds'][kind])}")
    if not (claim_e2e and "e2e" in kinds_present):
        lines.append(f"- {t['no_e2e']}")
    return lines


def _evidence_line(entry: dict, t: dict) -> str:
    head = f"- `{entry['id']}` ({t['kinds'].get(entry['kind'], entry['kind'])}): [{entry['path']}]({entry['path']}), " \
           f"sha256 `{entry['sha256']}`"
    artifact = entry["artifact"]
    if artifact is None:
        return f"{head} — {entry['problem']}"
    env = artifact.environment
    where = ", ".join(f"{k} {env[k]}" for k in ("device", "backend", "torch", "triton") if env.get(k))
    lines = [head, f"  - `{artifact.data['command']}` ({where})"]
    lines += [f"  - {line}" for line in _summary(artifact.kind, artifact.results)]
    return "\n".join(lines)


def _summary(kind: str, results: dict) -> list[str]:
    if kind == "profile":
        metrics = results.get("metrics") or {}
        named = ", ".join(f"{k} = {_num(v)}" for k, v in metrics.items())
        return [f"{results.get('tool', '')} {results.get('kernel', '')}: {named}".strip()]
    if kind == "numeric":
        rows = [f"passed: {results.get('passed')}"]
        for dtype, values in (results.get("per_dtype") or {}).items():
            rows.append(f"{dtype}: " + ", ".join(f"{k} {_num(v)}" for k, v in values.items()))
        return rows
    if kind == "bitwise":
        rows = [f"passed: {results.get('passed')}" + (f" (backend {results['backend']})" if results.get("backend") else "")]
        for anchor, value in (results.get("anchors") or {}).items():
            cases = f", {value['cases']} cases" if "cases" in value else ""
            rows.append(f"{anchor}: passed {value.get('passed')}{cases}")
        rows.append(f"fingerprints: {len(results.get('fingerprints') or {})}")
        return rows
    if kind == "capture":
        return [", ".join(f"{k}: {results.get(k)}" for k in ("captured", "allocations", "host_syncs", "replay_equals_eager"))]
    if kind == "benchmark":
        return _bench_rows(results)
    if kind == "e2e":
        return [f"{arm}: {len(v.get('samples') or [])} samples, median {_num(_median(v.get('samples') or []))}"
                for arm, v in (results.get("arms") or {}).items()]
    return []


def _bench_rows(results: dict) -> list[str]:
    rows = [r for r in results.get("rows") or [] if isinstance(r, dict)]
    shapes = sorted({str(r["shape"]) for r in rows if "shape" in r})
    return [f"{len(rows)} rows" + (f" over {len(shapes)} shapes: {', '.join(shapes)}" if shapes else "")]


def _decisions(record: Record, t: dict) -> list[str]:
    questions = record.get("questions", default=[]) or []
    if not questions:
        return [t["no_questions"]]
    lines = []
    for q in questions:
        decision = q.get("decision") or t["needed"]
        lines.append(f"- **{q.get('id')}** ({t['blast']} {q.get('blast_radius')}): {q.get('question')}")
        lines.append(f"  - {t['recommendation']}: {q.get('recommendation') or '—'}")
        lines.append(f"  - {t['decision']}: {decision}" + (f" — {q['note']}" if q.get("note") else ""))
    if all(q.get("decision") for q in questions):
        lines += ["", t["all_decided"]]
    return lines


def _open_unknowns(record: Record, stage: str, t: dict) -> list[str]:
    items = [u for u in record.get("unknowns", default=[]) or [] if u.get("status") == "open"]
    if not items:
        return []
    return [""] + [f"- {t['open_unknown'].format(uid=u.get('id'), stage=u.get('closes_at'), question=u.get('question'))}"
                   for u in items]


_HEADING = re.compile(r"^(#{1,6})(\s)")


def _section_text(record: Record, number: int, t: dict) -> str:
    """A § section's body: first heading dropped, sub-headings kept below level 2, links made repository-relative."""
    section = record.section(number)
    if section is None:
        return t["no_section"].format(n=number)
    lines = section.text.split("\n")[1:]
    out = []
    for line in lines:
        line = _repository_relative_links(record, line)
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) < 3:
            line = "###" + line[len(heading.group(1)):]
        out.append(line)
    return "\n".join(out).strip()


def _repository_relative_links(record: Record, line: str) -> str:
    """The line with each relative link target rewritten from the record's folder to the repository root."""
    out, pos = [], 0
    for start, end, text, target in iter_links(line):
        out += [line[pos:start], f"[{text}]({record.link_target_rel(target) or target})"]
        pos = end
    return "".join(out) + line[pos:]


def _in_section(record: Record, number: int, rel_path: str) -> bool:
    section = record.section(number)
    return section is not None and any(
        section.start_line <= link.line <= section.end_line and record.link_target_rel(link.target) == rel_path
        for link in record.links)


def _stage_of(record: Record, entry: dict) -> int:
    """The stage an artifact belongs to: A when §1 cites it (the diagnosis), else by kind (a profile
    that is not the diagnosis is a result of stage D)."""
    if _in_section(record, 1, entry["path"]):
        return 0
    if entry["kind"] == "profile":
        return STAGES.index("D")
    for stage, kinds in STAGE_KINDS.items():
        if entry["kind"] in kinds:
            return STAGES.index(stage)
    return STAGES.index("D")


def _median(values: list) -> float | None:
    numbers = sorted(v for v in values if isinstance(v, (int, float)))
    if not numbers:
        return None
    middle = len(numbers) // 2
    return numbers[middle] if len(numbers) % 2 else (numbers[middle - 1] + numbers[middle]) / 2


def _num(value) -> str:
    """Six significant digits, more when that would round a fraction to a whole number (0.99999994)."""
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    text = f"{value:.6g}"
    if float(text) == round(value) and value != round(value):
        text = f"{value:.10g}"
    return text


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
