"""Where a suite gate (G3, G4) gets the results it judges.

With `--run-suites`, from a fresh run of the suite the record declares (a run that
cannot start or fails is a finding); otherwise from the declared evidence artifact of
the gate's kind, after its pin and freshness are checked.
"""

from __future__ import annotations

from gates.context import GateContext
from gates.evidence_refs import checked_artifact, declared_evidence, evidence_by_id
from gates.findings import Finding
from gates.record import Record
from gates.suite_run import cached_run


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
    if ctx.run_suites:
        spec = record.get(section)
        run = cached_run(ctx, spec["suite"], spec.get("timeout_s"))
        if run.problem:
            add((section, "suite"), run.problem)
        elif not run.passed:
            add((section, "suite"), f"suite {run.suite} failed (pytest exit {run.returncode}): {run.output_tail[-400:]}")
        return None if run.data is None else (run.data, f"the run of {run.suite}")
    entry = select_evidence(record, kind, (section, "evidence"), add)
    if entry is None:
        return None
    artifact, problems = checked_artifact(record, ctx, entry, gate)
    findings.extend(problems)
    return None if artifact is None else (artifact.data, f"evidence {entry.id!r}")
