"""Each record's front matter and gate results, from a gate-check report or computed at build time.

Fails closed: an unreadable or schema-invalid record, a gate that errors, and a
report that cannot be read or has no entry for a record all stop the build
(``PluginError``), with messages naming the file and line.  A gate that fails stops
the build only with ``fail_on_gate_failures`` (so that the site and CI agree);
otherwise the page shows it failing.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.exceptions import PluginError

from gates.model.errors import DesignGatesError
from gates.site.evidence_check import check_evidence
from gates.site.record_header import RecordView


def load_record_views(record_paths: list[str], repo_root: Path, report_path: Path | None,
                      fail_on_gate_failures: bool = False) -> dict[str, RecordView]:
    """Repository-relative record path -> ``RecordView``, with gate results from ``report_path`` if given."""
    metas = {path: load_front_matter(repo_root / path, repo_root) for path in record_paths}
    if report_path is not None:
        report = read_report(report_path)
    else:
        report = static_report(record_paths, repo_root) if record_paths else {"records": []}
    invalid = [f'{e.get("path")}:{e.get("line", 1)}:{e.get("col", 1)}: {e.get("message")}'
               for e in report.get("errors") or []]
    if invalid:
        raise PluginError("invalid design record:\n" + "\n".join(invalid))
    by_path = {entry.get("path"): entry for entry in report.get("records", []) if isinstance(entry, dict)}
    views, errored, failed = {}, [], []
    for path, meta in metas.items():
        entry = by_path.get(path)
        if entry is None:
            raise PluginError(f"{report_path}: the gate report has no entry for the record {path}")
        gates = entry.get("gates") or {}
        for gate, result in sorted(gates.items()):
            if isinstance(result, dict) and result.get("status") in ("error", "fail"):
                erred = result["status"] == "error"
                what = f"{gate} {'errored' if erred else 'failed'}"
                findings = [f for f in result.get("findings", []) if f.get("severity", "error") == "error"]
                lines = [f'{path}:{f.get("line", 1)}:{f.get("col", 1)}: {what}: {f.get("message", "")}'
                         for f in findings] or [f"{path}: {what}"]
                (errored if erred else failed).extend(lines)
        meta.pop("status", None)  # Material's page status never comes from a record
        views[path] = RecordView(
            id=str(meta.get("id", Path(path).stem)), path=path, meta=meta, gates=gates,
            evidence_check=check_evidence(meta.get("evidence") or [], repo_root),
        )
    if errored:
        raise PluginError("a gate errored on a design record:\n" + "\n".join(errored))
    if failed and fail_on_gate_failures:
        raise PluginError("a gate failed on a design record (fail_on_gate_failures is set):\n" + "\n".join(failed))
    return views


def load_front_matter(path: Path, repo_root: Path) -> dict:
    """The record's front matter; an unreadable or schema-invalid record stops the build."""
    from gates.model.record import load_record
    from gates.model.schemas import validate

    try:
        record = load_record(path, repo_root)
    except DesignGatesError as exc:
        raise PluginError(f"invalid design record: {exc}") from exc
    problems = validate("record", record.front_matter)
    if problems:
        raise PluginError("invalid design record:\n" + "\n".join(
            f"{record.rel_path}:{record.line_of(*p.path)}:1: {p.message}" for p in problems))
    return dict(record.front_matter)


def static_report(record_paths: list[str], repo_root: Path) -> dict:
    """The static gates (no suite executed) for ``record_paths``, as a ``--format json`` report."""
    from gates.checks.runner import check_records

    absolute = [str(repo_root / path) for path in record_paths]  # not relative to the working directory
    try:
        return check_records(absolute, repo_root, run_suites=False).to_json()
    except DesignGatesError as exc:
        raise PluginError(f"gate-check could not check the design records: {exc}") from exc


def read_report(path: Path) -> dict:
    """A ``gate-check --format json`` report; anything else stops the build."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PluginError(f"{path}: cannot read the gate report: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise PluginError(f"{path}: not a `gate-check --format json` report (no 'records' list)")
    return data
