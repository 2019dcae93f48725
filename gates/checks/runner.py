"""Check records against the gates and collect one `Report`.

This is the engine both front ends share: `gate-check` (gates.frontends.cli) and the pytest
plugin (gates.frontends.pytest_plugin). Each gate call is wrapped: an exception becomes an
ERROR result with the exception text as a finding, never a pass or a skip.

Where the records are, which policy judges them and which gates apply at each stage
of a record's process come from the configuration (`gates.model.config`): the working
tree's, or for a change the base commit's rules with the records folders of both.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from gates.checks.context import GateContext
from gates.checks.record_workers import check_in_workers, worker_count
from gates.checks.registry import GATES
from gates.model.config import Settings, judging_settings, load_settings, settings_at
from gates.model.errors import InputError, UsageError
from gates.model.findings import Finding, GateResult, Status
from gates.model.paths import clear_cache, resolve_inside, to_rel
from gates.model.record import Record, load_record
from gates.model.schemas import validate

NOT_RECORDS = {"index.md", "readme.md"}


CHANGE_ENTRY = "(change)"  # the entry holding history findings at a file that is no record being checked

@dataclass
class RecordResult:
    id: str
    path: str
    stage: str | None
    record_status: str | None
    gates: dict[str, GateResult] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(result.ok for result in self.gates.values())

    def findings(self):
        for result in self.gates.values():
            yield from result.findings

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "path": self.path,
            "stage": self.stage,
            "record_status": self.record_status,
            "ok": self.ok,
            "gates": {gate: result.to_json() for gate, result in self.gates.items()},
        }


@dataclass
class Report:
    records: list[RecordResult] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.input_errors and all(record.ok for record in self.records)

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "records": [record.to_json() for record in self.records],
            "errors": [{"path": e.path, "line": e.line, "col": e.col, "message": e.message} for e in self.input_errors],
        }


def record_files(paths, repo_root: Path, settings: Settings | None = None) -> list[Path]:
    """The record files named by `paths` (files, or folders searched for `*.md`).

    Without `paths`, every record below the configured records folders; a folder the
    configuration names explicitly must exist.
    """
    repo_root = Path(repo_root).resolve()
    if not paths:
        settings = settings or load_settings(repo_root)
        found = []
        for folder in settings.records:
            default = repo_root / folder
            if default.is_dir():
                found.extend(_markdown_under(default))
            elif settings.configures("records"):
                raise InputError(settings.source, settings.line_of("records"),
                                 f"records: the folder {folder} does not exist")
        paths = [str(path) for path in found]
        if not paths:
            return []
    files = []
    for raw in paths:
        path = Path(raw)
        if not path.is_absolute():
            path = Path.cwd() / path
        if path.is_dir():
            files.extend(_markdown_under(path))
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            raise UsageError(f"{raw}: no such file or folder")
    seen, unique = set(), []
    for path in files:
        key = _dedupe_key(repo_root, path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def _dedupe_key(repo_root: Path, path: Path) -> str:
    """The resolved path when it lies inside the repository; an unresolvable one (a symlink
    loop) keeps its own name, and `load_record` reports it."""
    if resolve_inside(repo_root, str(path)) is None:
        return str(path)
    try:
        return str(path.resolve(strict=True))
    except (OSError, RuntimeError):
        return str(path)


def _markdown_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.md") if p.name.lower() not in NOT_RECORDS and not p.name.startswith("_"))


def check_records(paths, repo_root, *, gates=None, stage=None, run_suites=False, change=None,
                  suite_timeout_s: float = 600.0, max_record_bytes: int | None = None,
                  history_findings: list[Finding] | None = None, jobs: int | None = None,
                  approvals_judged_except: frozenset[str] | None = None) -> Report:
    """Run the selected gates (default: all) over the records at `paths` (default: the configured records folders).

    Records that cannot be read are reported in `Report.input_errors` (exit 2 at the
    CLI); the others are still checked. `max_record_bytes` overrides the size limit
    (default 1 MiB, or the `DESIGN_GATES_MAX_RECORD_BYTES` environment variable).
    `history_findings` (from `gates.history.ratchet`) join the results like the findings
    of a change; `approvals_judged_except` comes with them (`GateContext`). Without a change or suites, many records are checked on `jobs` processes (default: one per
    CPU; `gates.checks.record_workers` says when).
    """
    clear_cache()
    repo_root = Path(repo_root).resolve()
    selected = _select_gates(gates)
    report = Report()
    records: list[Record] = []
    settings = _settings_for(repo_root, change)
    for path in record_files(paths, repo_root, settings):
        try:
            records.append(load_record(path, repo_root, max_bytes=max_record_bytes))
        except InputError as exc:
            report.input_errors.append(exc)
    ctx = make_context(records, repo_root, run_suites=run_suites, stage=stage, change=change,
                       suite_timeout_s=suite_timeout_s, settings=settings,
                       approvals_judged_except=approvals_judged_except)
    workers = 1 if change is not None or run_suites else worker_count(len(records), jobs)
    if workers > 1:
        results, refused = check_in_workers(records, partial(check_record, ctx=ctx, selected=selected), workers,
                                            lambda: ctx.evidence.refused)
        report.records.extend(results)
        report.input_errors.extend(refused)
    else:
        report.records.extend(check_record(record, ctx, selected) for record in records)
        report.input_errors.extend(ctx.evidence.refused)
    if change is not None:
        _merge_change_findings(report, change, ctx, selected)
    if history_findings:
        _merge_findings(report, history_findings, selected)
    return report


def make_context(records: list[Record], repo_root, **options) -> GateContext:
    """A `GateContext` that knows `records` and every other record in the records folders.

    The configuration's rules and the policy come from the base commit of a change
    (`change`), else from the working tree; an invalid one raises `InputError` (exit 2).
    """
    if options.get("settings") is None:
        options["settings"] = _settings_for(repo_root, options.get("change"))
    ctx = GateContext(Path(repo_root).resolve(), **options)
    ctx.records_by_id, ctx.duplicate_ids = _index(records, ctx.repo_root, ctx.settings)
    if ctx.policy is None:
        ctx.policy = judging_policy(ctx.repo_root, ctx.change, ctx.settings)
    return ctx


def _settings_for(repo_root, change=None) -> Settings:
    """The working tree's configuration, or for a change the base's rules (`gates.model.config.judging_settings`)."""
    head = load_settings(Path(repo_root))
    if change is None:
        return head
    return judging_settings(head, settings_at(change, change.base))


def judging_policy(repo_root: Path, change=None, settings: Settings | None = None):
    """The policy a run is judged by: at the change's base commit, else the working tree's."""
    from gates.model.policy import load_policy, parse_policy

    settings = settings or _settings_for(repo_root, change)
    if change is None:
        return load_policy(repo_root, settings.policy)
    text = change.read_at(change.base, settings.policy)
    return parse_policy(text, settings.policy) if text is not None else None


def _select_gates(gates) -> list[str]:
    if not gates:
        return list(GATES)
    chosen = []
    for gate in gates:
        name = str(gate).upper()
        if name not in GATES:
            raise UsageError(f"unknown gate {gate!r}; the gates are {', '.join(GATES)}")
        if name not in chosen:
            chosen.append(name)
    return [gate for gate in GATES if gate in chosen]


def _index(records: list[Record], repo_root: Path, settings: Settings):
    """Every record by id: the ones being checked, then the rest of the records folders."""
    by_id: dict[str, Record] = {}
    paths_by_id: dict[str, list[str]] = {}
    for record in records:
        if record.id:
            by_id.setdefault(record.id, record)
            paths_by_id.setdefault(record.id, []).append(record.rel_path)
    checked = {record.rel_path for record in records}
    others = [path for folder in settings.records if (repo_root / folder).is_dir()
              for path in _markdown_under(repo_root / folder)]
    if others:
        for path in dict.fromkeys(others):
            rel = to_rel(repo_root, path)
            if rel in checked:
                continue
            try:
                other = load_record(path, repo_root)
            except InputError:
                continue
            if other.id:
                by_id.setdefault(other.id, other)
                paths_by_id.setdefault(other.id, []).append(rel)
    duplicates = {rid: paths for rid, paths in paths_by_id.items() if len(paths) > 1}
    return by_id, duplicates


def check_record(record: Record, ctx: GateContext, selected=None) -> RecordResult:
    """Run the selected gates over one loaded record (schema first: an invalid record fails G0)."""
    selected = selected or list(GATES)
    result = RecordResult(record.id or Path(record.rel_path).stem, record.rel_path, record.stage, record.record_status)
    schema_errors = validate("record", record.front_matter)
    if schema_errors:
        findings = [Finding("G0", record.rel_path, record.line_of(*error.path), 1, error.message) for error in schema_errors]
        for gate in selected:
            if gate == "G0":
                result.gates[gate] = GateResult("G0", Status.FAIL, findings)
            else:
                result.gates[gate] = GateResult(gate, Status.ERROR, [Finding(
                    gate, record.rel_path, 1, 1, "not checked: the front matter does not match the record schema (see G0)")])
        if "G0" not in selected:
            first = findings[0]
            for gate in selected:
                result.gates[gate].findings.append(Finding(gate, record.rel_path, first.line, 1, f"schema: {first.message}"))
        return result
    applying = _gates_applying(record, ctx)
    for gate in selected:
        result.gates[gate] = run_gate(gate, record, ctx) if gate in applying else GateResult(gate, Status.NOT_APPLICABLE)
    _check_self_claims(record, result)
    return result


def _gates_applying(record: Record, ctx: GateContext) -> tuple[str, ...]:
    """The gates the record's process applies at its stage; all of them for a process not allowed
    (G0 reports it), so that a record cannot switch a gate off by naming an unknown process."""
    profile = ctx.profile_of(record)
    if profile is None:
        return tuple(GATES)
    return tuple(gate for gate in GATES if gate in profile.gates_at(ctx.effective_stage(record)))


def run_gate(gate: str, record: Record, ctx: GateContext) -> GateResult:
    """One gate over one record, failing closed."""
    try:
        outcome = GATES[gate](record, ctx)
        if not isinstance(outcome, GateResult):
            raise TypeError(f"gate returned {type(outcome).__name__}, not GateResult")
        return outcome
    except InputError as exc:
        message = f"{exc.path}:{exc.line}: {exc.message}"
        return GateResult(gate, Status.ERROR, [Finding(gate, record.rel_path, 1, 1, message)])
    except Exception as exc:  # noqa: BLE001 - fail closed: a crashing gate is an error result
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"internal error in {gate}: {type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})"
        return GateResult(gate, Status.ERROR, [Finding(gate, record.rel_path, 1, 1, message)])


def _check_self_claims(record: Record, result: RecordResult) -> None:
    """A self-check that claims pass (or n/a) for a gate that fails is itself a finding."""
    claims = record.get("self_check", default={}) or {}
    for gate, outcome in result.gates.items():
        claim = claims.get(gate)
        if claim in ("pass", "n/a") and outcome.status in (Status.FAIL, Status.ERROR):
            outcome.findings.append(Finding(
                gate, record.rel_path, record.line_of("self_check", gate), 1,
                f"self-check claims {claim} for {gate}, but {gate} is {outcome.status.value}"))


def _merge_change_findings(report: Report, change, ctx: GateContext, selected) -> None:
    from gates.history import check_change

    _merge_findings(report, check_change(change, ctx.records_by_id, ctx.repo_root), selected)


def _merge_findings(report: Report, findings: list[Finding], selected) -> None:
    """History findings join the result of the record they name, or a `(change)` entry for another file."""
    by_path = {record.path: record for record in report.records}
    for finding in findings:
        if finding.gate not in selected:
            continue
        target = by_path.get(finding.path)
        if target is None:
            target = RecordResult(CHANGE_ENTRY, finding.path, None, None)
            by_path[finding.path] = target
            report.records.append(target)
        result = target.gates.get(finding.gate)
        if result is None:
            result = target.gates[finding.gate] = GateResult(finding.gate, Status.PASS, [])
        result.findings.append(finding)
        if finding.severity == "error" and result.status in (Status.PASS, Status.NOT_APPLICABLE):
            result.status = Status.FAIL
