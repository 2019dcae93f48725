"""Where a suite gate (G3, G4) gets the results it judges.

With `--run-suites`, from a fresh run of the suite the record declares (a run that
cannot start or fails is a finding, with the tail of pytest's output and what its exit
status means; each error the run's artifact lists is a finding too); the run's
artifact must bind every file the record covers, and the run must have imported
every covered Python file (gate-check's own observer says what it imported), so a
suite that writes canned numbers without exercising the kernel fails. Otherwise the
results come from the declared evidence artifact of the gate's kind, after its pin,
attestation, binding and freshness are checked (`evidence_refs.checked_artifact`).

With `--base`, a change that edits the suite it is judged by (the suite file, or a
`conftest.py`, `pytest.ini`, `.pytest.ini` or `tox.ini` in its folder or a folder above,
or the pytest section of the root `pyproject.toml`/`setup.cfg`) is a finding: the author wrote the
test that judges the change, so its results cannot be trusted without review. The
edit is accepted when an approved record at the base commit covers the edited file.
With `--run-suites` as well, so is an edit to any other repository file the run
imported that the record does not cover (a helper module of the suite, a plugin its
configuration loads): that code runs inside the judge.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from textwrap import indent

from gates.checks.context import GateContext
from gates.checks.evidence_refs import binding_problems, checked_artifact, declared_evidence, evidence_by_id, record_covered_files
from gates.evidence.suite_run import cached_run
from gates.model.findings import Finding
from gates.model.policy import any_glob_matches
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
    on the way are added to `findings`."""
    spec = record.get(section)
    for message in suite_edit_problems(record, ctx, spec.get("suite")):
        add((section, "suite"), message)
    if ctx.run_suites:
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
        return run.data, f"the run of {run.suite}"
    entry = select_evidence(record, kind, (section, "evidence"), add)
    if entry is None:
        return None
    artifact, problems = checked_artifact(record, ctx, entry, gate)
    findings.extend(problems)
    return None if artifact is None else (artifact.data, f"evidence {entry.id!r}")


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


# Files in the suite's folder or a folder above that configure a pytest run: where they
# add options (`addopts = -p plugin`), plugins or fixtures, they decide what the run does.
PYTEST_CONFIG_FILES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini")
# Files that configure pytest only in one of their sections: an edit counts when that section changed.
PYTEST_SECTIONS = {"pyproject.toml": "[tool.pytest", "setup.cfg": "[tool:pytest]"}


def suite_files(suite: str) -> list[str]:
    """The suite path (without a `::test` part) and the files that configure it: conftest.py,
    pytest.ini, .pytest.ini and tox.ini in its folder and every folder above."""
    path = PurePosixPath(suite.split("::", 1)[0])
    folders = [path.parent, *path.parent.parents] if path.suffix == ".py" else [path, *path.parents]
    files = [str(path)] + [str(folder / name) if str(folder) != "." else name
                           for folder in folders for name in PYTEST_CONFIG_FILES]
    return list(dict.fromkeys(files))


def _pytest_section(text: str | None, header: str) -> str:
    """The lines of `text` from a section whose header starts with `header` to the next header."""
    lines, inside = [], False
    for line in (text or "").splitlines():
        if line.lstrip().startswith("["):
            inside = line.strip().startswith(header)
        if inside:
            lines.append(line.rstrip())
    return "\n".join(lines)


def _edits_pytest_section(change, path: str) -> bool:
    name = PurePosixPath(path).name
    if name not in PYTEST_SECTIONS or PurePosixPath(path).parent != PurePosixPath("."):
        return False
    header = PYTEST_SECTIONS[name]
    return _pytest_section(change.read_at(change.base, path), header) != _pytest_section(change.read_at(change.head, path), header)


def suite_edit_problems(record: Record, ctx: GateContext, suite) -> list[str]:
    """With `--base`: the judging suite or its conftest files edited by the change, unless an approved
    record at base covers the edited file."""
    change = ctx.change
    if change is None or not isinstance(suite, str):
        return []
    judging = suite_files(suite)
    root = judging[0]
    edited = [path for path in change.changed_paths()
              if path in judging or (not root.endswith(".py") and path.startswith(root.rstrip("/") + "/"))
              or _edits_pytest_section(change, path)]
    return [f"{path} is edited by this change and judges it (suite {suite}); the results of a suite the "
            "change rewrites cannot be trusted without review: cover it with an approved record at base, "
            "or land the suite change first"
            for path in edited if not _approved_at_base(change, path)]


def imported_edit_problems(record: Record, ctx: GateContext, run) -> list[str]:
    """With `--base` and `--run-suites`: files the run imported that the change edits and the record does
    not cover (a helper module or a `-p` plugin of the suite), unless an approved record at base covers them."""
    change = ctx.change
    if change is None or not run.imported:
        return []
    covered = set(record_covered_files(record, ctx))
    edited = sorted(set(run.imported) & set(change.changed_paths()) - covered)
    return [f"{path} is edited by this change and was imported by the run of {run.suite}, which judges it; code "
            "the suite runs that the record does not cover is the author's own judge: cover it with an approved "
            "record at base, or land it first"
            for path in edited if not _approved_at_base(change, path)]


def _approved_at_base(change, path: str) -> bool:
    approved_covers = [snapshot.front_matter.get("covers") for snapshot in change.records_at_base().values()
                       if snapshot.front_matter and snapshot.front_matter.get("record_status") == "approved"]
    return any(any_glob_matches(covers, path) for covers in approved_covers)
