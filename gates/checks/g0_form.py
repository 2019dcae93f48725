"""G0 Form: the record is well formed and everything it names exists.

The front matter matches the record schema (checked by the runner before any
gate, reported here); the id is the file name and unique; the ten § sections are
present; no template placeholder is left; every path and record id it refers to
resolves inside the repository; its process (`process`, else the configuration's
`profile`) is one the configuration allows, and its stage is a stage of that process.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from gates.checks.context import GateContext, stage_at_least
from gates.checks.evidence_refs import declared_evidence
from gates.model.findings import Finding, GateResult, result_from_findings
from gates.model.paths import resolve_inside
from gates.model.policy import LEVELS, glob_matches
from gates.model.record import Record, prose_lines

GATE = "G0"
PLACEHOLDER = re.compile(r"\[\[[ \t]*fill\b[^\[\]]*\]\]")
REQUIRED_SECTIONS = {
    1: ("why", "diagnos", "为什么", "诊断"),
    2: ("unknown", "未知"),
    3: ("design", "设计"),
    4: ("numeric", "数值"),
    5: ("bitwise", "逐位"),
    6: ("api", "interface", "接口"),
    7: ("validation", "result", "验证", "结果"),
    8: ("limitation", "限制"),
    9: ("follow", "后续"),
    10: ("self-check", "self check", "自检"),
}


def check(record: Record, ctx: GateContext) -> GateResult:
    findings: list[Finding] = []

    def add(line: int, message: str, severity: str = "error") -> None:
        findings.append(Finding(GATE, record.rel_path, line, 1, message, severity))

    _check_identity(record, ctx, add)
    _check_process(record, ctx, add)
    _check_sections(record, add)
    _check_placeholders(record, add)
    _check_references(record, ctx, add)
    _check_paths(record, ctx, add)
    _check_risk(record, ctx, add)
    _check_links(record, add)
    return result_from_findings(GATE, findings)


def _check_risk(record: Record, ctx: GateContext, add) -> None:
    """The record's `risk` is at least the policy's level of every file its `covers` matches: reviewers read the
    level in the record's header and pull-request description, so a record below the policy's level misleads them.
    A warning for now: records approved under an understated level would otherwise fail without a change."""
    risk = record.get("risk")
    if ctx.policy is None or risk not in LEVELS:
        return
    highest, where = risk, None
    for index, pattern in enumerate(record.get("covers", default=[]) or []):
        if not isinstance(pattern, str):
            continue
        for path in _matching_files(ctx, pattern):
            level, rule = ctx.policy.level_of(path)
            if LEVELS.index(level) > LEVELS.index(highest):
                highest, where = level, (index, path, rule)
    if where is not None:
        index, path, rule = where
        why = f" ({rule.reason})" if rule is not None and rule.reason else ""
        add(record.line_of("risk"), f"risk {risk} is below {highest}, the policy's level of {path}{why}, which covers "
            f"{record.get('covers')[index]!r} matches: raise risk to {highest}", "warning")


def _matching_files(ctx: GateContext, pattern: str, limit: int = 5000) -> list[str]:
    """Working-tree files (relative, POSIX) a `covers` glob matches, by the policy's glob rules; at most `limit`
    looked at, from the folder the glob names before its first wildcard."""
    cache = ctx.__dict__.setdefault("_covered_files", {})
    if pattern not in cache:
        root = ctx.repo_root
        literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        start = literal if literal.endswith("/") or literal == pattern else literal.rpartition("/")[0]
        folder = resolve_inside(root, start.rstrip("/")) if start.strip("/") else root
        found: list[str] = []
        if folder is not None and folder.is_file():
            found = [pattern.rstrip("/")] if glob_matches(pattern, pattern.rstrip("/")) else []
        elif folder is not None and folder.is_dir():
            for path in _limited((p for p in folder.rglob("*") if ".git" not in p.parts), limit):
                if path.is_file() and not path.is_symlink():
                    rel = path.relative_to(root).as_posix()
                    if glob_matches(pattern, rel) or glob_matches(pattern.rstrip("/") + "/**", rel):
                        found.append(rel)
        cache[pattern] = found
    return cache[pattern]


def _check_identity(record: Record, ctx: GateContext, add) -> None:
    stem = Path(record.rel_path).stem
    if record.id != stem:
        add(record.line_of("id"), f"id {record.id!r} does not match the file name {stem!r}")
    others = [p for p in ctx.duplicate_ids.get(record.id, []) if p != record.rel_path]
    if others:
        add(record.line_of("id"), f"id {record.id!r} is also used by {', '.join(others)}")
    if record.record_status == "superseded" and not record.get("superseded_by"):
        add(record.line_of("record_status"), "a superseded record names its successor in superseded_by")


def _check_process(record: Record, ctx: GateContext, add) -> None:
    settings = ctx.settings
    profile = ctx.profile_of(record)
    if profile is None:
        add(record.line_of("process"), f"process {record.get('process')!r} is not allowed by the configuration "
            f"({settings.source or 'the defaults'}: {', '.join(settings.profiles)})")
    elif record.stage is not None and record.stage not in profile.stages:
        add(record.line_of("stage"), f"stage {record.stage} is not a stage of the {profile.name} process "
            f"(its stages: {', '.join(profile.stages)})")


def _check_sections(record: Record, add) -> None:
    seen: dict[int, int] = {}
    for section in record.sections:
        if section.number in seen:
            add(section.start_line, f"§{section.number} appears twice (first on line {seen[section.number]})")
            continue
        seen[section.number] = section.start_line
        words = REQUIRED_SECTIONS.get(section.number)
        if words and not any(word in section.title.lower() for word in words):
            add(section.start_line, f"§{section.number} is titled {section.title!r}; expected a title about "
                f"{' / '.join(words)}", severity="warning")
    body_end = record.body_start_line + record.body.count("\n")
    for number in REQUIRED_SECTIONS:
        if number in seen:
            continue
        later = [line for n, line in seen.items() if n > number]
        where = min(later) if later else body_end
        words = REQUIRED_SECTIONS[number]
        add(where, f"missing section §{number} ({words[0]} / {words[-1]}); it belongs before this line"
            if later else f"missing section §{number} ({words[0]} / {words[-1]})")
    numbers = [s.number for s in record.sections if s.number in REQUIRED_SECTIONS]
    if numbers != sorted(numbers):
        add(record.body_start_line, "§ sections are out of order", severity="warning")


def _check_placeholders(record: Record, add) -> None:
    for keys, line in sorted(record.key_lines.items(), key=lambda item: item[1]):
        value = record.get(*keys)
        if isinstance(value, str) and PLACEHOLDER.search(value):
            add(line, f"template placeholder left in {'.'.join(map(str, keys))}: {PLACEHOLDER.search(value).group(0)}")
    for line_no, line in prose_lines(record.body, record.body_start_line):
        match = PLACEHOLDER.search(line)
        if match:
            add(line_no, f"template placeholder left: {match.group(0)}")


def _ids(record: Record, key: str, add) -> set:
    ids, first = set(), {}
    for index, item in enumerate(record.get(key, default=[]) or []):
        value = item.get("id") if isinstance(item, dict) else None
        if value in ids:
            add(record.line_of(key, index, "id"), f"{key} id {value!r} is declared twice (first on line {first[value]})")
        ids.add(value)
        first.setdefault(value, record.line_of(key, index, "id"))
    return ids


def _check_references(record: Record, ctx: GateContext, add) -> None:
    evidence_ids = _ids(record, "evidence", add)
    question_ids = _ids(record, "questions", add)
    _ids(record, "unknowns", add)
    anchors = record.get("bitwise", "anchors", default=[]) or []
    seen_anchor = set()
    for index, anchor in enumerate(anchors):
        if anchor.get("id") in seen_anchor:
            add(record.line_of("bitwise", "anchors", index, "id"), f"anchor id {anchor.get('id')!r} is declared twice")
        seen_anchor.add(anchor.get("id"))
    for index, other in enumerate(record.get("stacked_on", default=[]) or []):
        if other == record.id:
            add(record.line_of("stacked_on", index), "a record cannot be stacked on itself")
        elif other not in ctx.records_by_id:
            add(record.line_of("stacked_on", index), f"stacked_on {other!r}: no record with this id under {ctx.settings.records_text()}")
    successor = record.get("superseded_by")
    if successor and successor not in ctx.records_by_id:
        add(record.line_of("superseded_by"), f"superseded_by {successor!r}: no record with this id under {ctx.settings.records_text()}")
    for index, unknown in enumerate(record.get("unknowns", default=[]) or []):
        for position, ref in enumerate(unknown.get("evidence") or []):
            if ref not in evidence_ids:
                add(record.line_of("unknowns", index, "evidence", position),
                    f"unknown {unknown.get('id')}: evidence {ref!r} is not declared in evidence")
    for keys in (("capture", "evidence"), ("numeric_contract", "evidence"), ("bitwise", "evidence")):
        ref = record.get(*keys)
        if ref is not None and ref not in evidence_ids:
            add(record.line_of(*keys), f"{'.'.join(keys)}: {ref!r} is not declared in evidence")
    for index, change in enumerate(record.get("bitwise", "fingerprints", "accepted_changes", default=[]) or []):
        if change.get("question") not in question_ids:
            add(record.line_of("bitwise", "fingerprints", "accepted_changes", index, "question"),
                f"accepted change {change.get('key')!r} names question {change.get('question')!r}, which is not declared")
    route_question = record.get("api", "default_route_question")
    if route_question is not None and route_question not in question_ids:
        add(record.line_of("api", "default_route_question"), f"api.default_route_question {route_question!r} is not declared")


def _exists(ctx: GateContext, rel: str) -> bool:
    resolved = resolve_inside(ctx.repo_root, rel)
    return resolved is not None and resolved.exists()


def _glob_matches(ctx: GateContext, pattern: str) -> bool:
    cache = ctx.__dict__.setdefault("_glob_cache", {})
    if pattern not in cache:
        if not any(ch in pattern for ch in "*?["):
            cache[pattern] = _exists(ctx, pattern.rstrip("/"))
        else:
            root = ctx.repo_root
            cache[pattern] = any(
                resolve_inside(root, str(match)) is not None for match in _limited(root.glob(pattern), 1))
    return cache[pattern]


def _limited(iterator, count):
    for index, item in enumerate(iterator):
        if index >= count:
            return
        yield item


def _check_paths(record: Record, ctx: GateContext, add) -> None:
    stage = ctx.effective_stage(record)
    for entry in declared_evidence(record):
        if not _exists(ctx, entry.path):
            add(record.line_of("evidence", entry.index, "path"), f"evidence {entry.id!r}: {entry.path} does not exist")
    code_due = stage_at_least(stage, "B")
    for keys in (("numeric_contract", "suite"), ("bitwise", "suite"), ("bitwise", "fingerprints", "path")):
        value = record.get(*keys)
        if isinstance(value, str) and code_due and not _exists(ctx, value):
            add(record.line_of(*keys), f"{'.'.join(keys)}: {value} does not exist (required from stage B)")
    if code_due:
        for index, pattern in enumerate(record.get("covers", default=[]) or []):
            if not _glob_matches(ctx, pattern):
                add(record.line_of("covers", index), f"covers {pattern!r} matches no file (required from stage B)")


def _check_links(record: Record, add) -> None:
    for link in record.links:
        target = link.target
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        bare = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not bare:
            continue
        if target.startswith("/"):
            add(link.line, f"link {target!r} is absolute; link relative to this file")
            continue
        resolved = resolve_inside(record.repo_root, bare, base=record.path.parent)
        if resolved is None:
            add(link.line, f"link {target!r} leads outside the repository")
        elif not resolved.exists():
            add(link.line, f"link {target!r} points at a file that does not exist")
