"""Where a suite gate (G3, G4) gets the results it judges.

With `--run-suites`, from a fresh run of the suite the record declares (a run that
cannot start or fails is a finding, with the tail of pytest's output and what its exit
status means; each error the run's artifact lists is a finding too); the run's
artifact must bind every file the record covers, and the run must have imported
every covered Python file (gate-check's own observer says what it imported), so a
suite that writes canned numbers without exercising the kernel fails. Otherwise the
results come from the declared evidence artifact of the gate's kind, after its pin,
attestation, binding and freshness are checked (`evidence_refs.checked_artifact`).

Either way the artifact must show that the declared suite is what ran, and all of it: no test
deselected, dropped or left unrun (`gates.checks.suite_completeness`); and with `--base` a
change that edits a file judging it is a finding: the suite file, a file configuring pytest
along the suite's folders (`conftest.py`, `pytest.toml`, `pytest.ini`, `tox.ini`, the pytest
section of a `pyproject.toml` or `setup.cfg`, ...), or a file the artifact binds that the record
does not cover and that is part of the judge (a test file, a fixture or helper under the test
folders, a conftest, a `-p` plugin): the author wrote the test that judges the change, so its
results cannot be trusted without review. The edit is accepted when an approved record at the base
commit covers the edited file (`gates.checks.suite_integrity`). With `--run-suites` as well, so is
an edit to such a file the run imported (gate-check's observer says which). A library module the
run merely imported is a dependency, not a judge: an edit to it only makes declared evidence stale.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from textwrap import indent

from gates.checks.context import GateContext
from gates.checks.evidence_refs import binding_problems, checked_artifact, declared_evidence, evidence_by_id, record_covered_files
from gates.checks.suite_completeness import completeness_problems, plugin_files
from gates.checks.suite_integrity import (
    approved_at_base, bound_edit_problems, edited_suite_files, judges_the_run, new_plugin_problems, ran_test_files,
    reviewed_in_change,
    suite_edit_message, suite_edit_problems,
    suite_mismatch_problems, suite_path,
)
from gates.evidence.suite_run import cached_run
from gates.history.comment_edits import comment_only_paths
from gates.model.findings import Finding
from gates.model.record import Record


def select_evidence(record: Record, kind: str, explicit_keys: tuple, add):
    """The declared artifact a gate reads: named explicitly, or the only one of its kind."""
    explicit = record.get(*explicit_keys)
    if explicit is not None:
        entry = evidence_by_id(record).get(explicit)
        if entry is None:
            add(explicit_keys, f"{'.'.join(explicit_keys)} {explicit!r} is not declared in evidence")
        elif entry.kind != kind:
            add(explicit_keys, f"{'.'.join(explicit_keys)} {explicit!r} is a {entry.kind} artifact, not {kind}")
            return None
        return entry
    candidates = [e for e in declared_evidence(record) if e.kind == kind]
    if not candidates:
        add(explicit_keys[:1], f"no {kind} evidence is declared (required from stage B; "
            f"or run the suite with --run-suites)")
        return None
    if len(candidates) > 1:
        add(explicit_keys[:1], f"{len(candidates)} {kind} artifacts are declared; name the one to check in "
            f"{'.'.join(explicit_keys)}")
        return None
    return candidates[0]


def judged_results(record: Record, ctx: GateContext, section: str, kind: str, gate: str,
                   findings: list[Finding], add) -> tuple[dict, str] | None:
    """(artifact data, where it came from) for the record's `section` (with its `suite`,
    `timeout_s` and `evidence` keys), or None when there is nothing to judge; problems
    on the way are added to `findings`, and so are the suite's integrity problems
    (`gates.checks.suite_integrity`): the artifact must show that the declared suite ran,
    and with `--base` the change must not edit a file that judges it."""
    spec = record.get(section)
    suite = spec.get("suite")
    judged = _run_results(record, ctx, section, kind, add) if ctx.run_suites else \
        _declared_results(record, ctx, section, kind, gate, findings, add)
    for message in integrity_problems(record, ctx, suite, judged):
        add((section, "suite"), message)
    return None if judged is None else (judged.data, judged.where)


@dataclass(frozen=True)
class JudgedResults:
    """An artifact a suite gate judges: its data, where it came from (for messages), and the test
    paths of the command gate-check ran to produce it (None for a declared artifact)."""

    data: dict
    where: str
    command_paths: list[str] | None = None
    kind: str = ""  # numeric or bitwise


def integrity_problems(record: Record, ctx: GateContext, suite, judged: JudgedResults | None) -> list[str]:
    """The declared suite is not what ran, or (with `--base`) the change edits a file that judges it."""
    if not isinstance(suite, str):
        return []
    if judged is None:
        problems = suite_edit_problems(ctx, suite)
        return [] if problems and reviewed_in_change(record, ctx) else problems
    ran = ran_test_files(judged.data, ctx, judged.command_paths)
    problems = suite_mismatch_problems(suite, ran, judged.where)
    problems += completeness_problems(suite, judged.data, judged.where, ctx)
    edited = edited_suite_files(ctx, suite, ran.files, record)
    problems += [suite_edit_message(path, suite) for path in edited]
    sources = judged.data.get("sources") if isinstance(judged.data.get("sources"), dict) else {}
    plugins = plugin_files(judged.data, ctx, sources, suite)
    reported: list[str] = []
    if judged.command_paths is None:  # a declared artifact (a run of gate-check's own reports its edits itself)
        bound = bound_edit_problems(record, ctx, suite, sources, judged.where, edited, ran.files, plugins)
        problems += bound
        reported = [path for path in plugins if any(message.startswith(f"{path} ") for message in bound)]
    problems += new_plugin_problems(record, ctx, suite, plugins, _plugins_at_base(ctx, record, judged.kind, suite),
                                    judged.where, ran.files, reported)
    return problems


def _plugins_at_base(ctx: GateContext, record: Record, kind: str, suite: str) -> list[str]:
    """The repository plugins that the record's own `kind` artifacts at the base commit say their runs loaded: the
    artifacts the record, approved there, pinned, each read at base and matching its pin. None where the record was
    not approved at base or pinned no such artifact: then every plugin of the change's run is new. A file that only
    sits at the artifact's path on the base, pinned by nothing reviewed, says nothing (an earlier change could write
    a decoy there listing the plugin it adds)."""
    change = ctx.change
    if change is None:
        return []
    record_id = record.get("id")
    snapshots = list(change.records_at_base().values())
    if not any(snapshot.rel_path == record.rel_path for snapshot in snapshots):
        snapshots.append(change.record_at(change.base, record.rel_path))  # a record outside the records folders
    at_base = [snapshot.front_matter for snapshot in snapshots
               if snapshot is not None and snapshot.front_matter and snapshot.front_matter.get("id") == record_id]
    if len(at_base) != 1 or at_base[0].get("record_status") != "approved":
        return []
    found: list[str] = []
    for entry in at_base[0].get("evidence") or []:
        if not isinstance(entry, dict) or entry.get("kind") != kind or not isinstance(entry.get("path"), str):
            continue
        data = change.read_bytes_at(change.base, entry["path"])
        if data is None or hashlib.sha256(data).hexdigest() != str(entry.get("sha256", "")).lower():
            continue
        try:
            artifact = json.loads(data)
        except ValueError:
            continue
        if isinstance(artifact, dict):
            sources = artifact.get("sources") if isinstance(artifact.get("sources"), dict) else {}
            found += plugin_files(artifact, ctx, sources, suite)
    return list(dict.fromkeys(found))


def _run_results(record: Record, ctx: GateContext, section: str, kind: str, add) -> JudgedResults | None:
    """The artifact of a fresh run of the declared suite (`--run-suites`)."""
    spec = record.get(section)
    run = cached_run(ctx, spec["suite"], spec.get("timeout_s"), record.get("covers", default=[]) or [], kind)
    parts = [f"suite {run.suite} failed (pytest exit {run.returncode})"] if run.returncode not in (0, None) else []
    parts += [run.problem] if run.problem else []
    if parts:
        tail = f"; pytest output ends:\n{indent(run.output_tail, '    ')}" if run.output_tail else ""
        add((section, "suite"), "; ".join(parts + list(run.explanations)) + tail)
    if run.data is None:
        return None
    for error in run_errors(run.data):
        add((section, "suite"), f"the run of {run.suite} reports: {error}")
    for message in run_binding_problems(record, ctx, run) + imported_edit_problems(record, ctx, run):
        add((section, "suite"), message)
    return JudgedResults(run.data, f"the run of {run.suite}", [suite_path(run.suite)], kind=kind)


def _declared_results(record: Record, ctx: GateContext, section: str, kind: str, gate: str,
                      findings: list[Finding], add) -> JudgedResults | None:
    """The declared evidence artifact of `kind`, after its pin, attestation, binding and freshness are checked."""
    entry = select_evidence(record, kind, (section, "evidence"), add)
    if entry is None:
        return None
    artifact, problems = checked_artifact(record, ctx, entry, gate)
    findings.extend(problems)
    return None if artifact is None else JudgedResults(artifact.data, f"evidence {entry.id!r}", kind=kind)


def run_errors(data: dict) -> list[str]:
    """The `errors` a run's artifact lists (the evidence plugin says there why it did not pass)."""
    errors = (data.get("results") or {}).get("errors")
    return [str(error) for error in errors] if isinstance(errors, list) else []


def run_binding_problems(record: Record, ctx: GateContext, run) -> list[str]:
    """What a suite run failed to measure: covered files its artifact does not bind or it did not import."""
    where = f"the run of {run.suite}"
    sources = run.data.get("sources") or {}
    problems = [f"the artifact of {where} {message}" for message in binding_problems(record, ctx, sources)]
    for path, expected in sorted(sources.items()):
        if ctx.evidence.source_hash(path) != expected:
            problems.append(f"the artifact of {where} binds {path} to a SHA-256 that is not the file's")
    if run.imported is None:
        problems.append(f"{where} did not report which files it imported (gate-check's observer wrote nothing)")
        return problems
    imported = set(run.imported)
    for path in record_covered_files(record, ctx):
        if path.endswith(".py") and path not in imported:
            problems.append(f"{where} never imported {path}, a file the record covers: the suite does not exercise it")
    return problems


def imported_edit_problems(record: Record, ctx: GateContext, run) -> list[str]:
    """With `--base` and `--run-suites`: files the run imported that the change edits, the record does not
    cover, and that judge the measurement (a test helper, a fixture module, a `-p` plugin of the suite:
    `suite_integrity.judges_the_run`), unless an approved record at base covers them. A library module the
    run merely imported was measured as it is at head: nothing to report."""
    change = ctx.change
    if change is None or not run.imported:
        return []
    covered = set(record_covered_files(record, ctx))
    edited = sorted(path for path in set(change.changed_paths()) - comment_only_paths(change)
                    if (names := set(change.path_names(path))) & set(run.imported) and not names & covered)
    if edited and reviewed_in_change(record, ctx):
        return []
    ran = [suite_path(run.suite)]
    plugins = plugin_files(run.data or {}, ctx, {path: "" for path in run.imported}, run.suite)
    return [f"{path} is edited by this change and was imported by the run of {run.suite}, which judges it; code "
            "the suite runs that the record does not cover is the author's own judge: cover it with an approved "
            "record at base, land it first, or, for a single-pr record, have an independent reviewer approve this "
            "change in it (a forge review or a signed approval commit the policy counts)"
            for path in edited if judges_the_run(path, run.suite, ran, plugins) and not approved_at_base(change, path)]
