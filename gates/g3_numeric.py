"""G3 Numeric: the kernel meets its declared tolerances against the fp64 oracle.

The record declares `numeric_contract` (oracle, suite, tolerances per metric and
dtype). From stage B on, either the declared suite is run (`--run-suites`) or,
by default, the record's `numeric` evidence artifact is read: it must exist,
match the schema and its pinned SHA-256, be fresh, report `passed`, and every
declared tolerance must hold on `results.per_dtype`. Before stage B there is no
kernel yet and the gate does not apply (the declaration is still checked).
"""

from __future__ import annotations

from gates.context import GateContext, stage_at_least
from gates.evidence_refs import checked_artifact, declared_evidence, evidence_by_id
from gates.findings import Finding, GateResult, Status, result_from_findings
from gates.record import Record
from gates.suite_run import cached_run

GATE = "G3"


def check(record: Record, ctx: GateContext) -> GateResult:
    contract = record.get("numeric_contract")
    if contract is None:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []

    def add(keys: tuple, message: str) -> None:
        findings.append(Finding(GATE, record.rel_path, record.line_of(*keys), 1, message))

    for index, tolerance in enumerate(contract.get("tolerances") or []):
        if ("max" in tolerance) == ("min" in tolerance):
            add(("numeric_contract", "tolerances", index), "a tolerance sets exactly one of max or min")
    if findings or not stage_at_least(ctx.effective_stage(record), "B"):
        return result_from_findings(GATE, findings) if findings else GateResult(GATE, Status.NOT_APPLICABLE)
    if ctx.run_suites:
        run = cached_run(ctx, contract["suite"], contract.get("timeout_s"))
        if run.problem:
            add(("numeric_contract", "suite"), run.problem)
        elif not run.passed:
            add(("numeric_contract", "suite"), f"suite {run.suite} failed (pytest exit {run.returncode}): {run.output_tail[-400:]}")
        if run.data is not None:
            _check_results(record, run.data, f"the run of {run.suite}", add)
        return result_from_findings(GATE, findings)
    entry = select_evidence(record, "numeric", ("numeric_contract", "evidence"), add)
    if entry is None:
        return result_from_findings(GATE, findings)
    artifact, problems = checked_artifact(record, ctx, entry, GATE)
    findings.extend(problems)
    if artifact is not None:
        _check_results(record, artifact.data, f"evidence {entry.id!r}", add)
    return result_from_findings(GATE, findings)


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


def _check_results(record: Record, data: dict, source: str, add) -> None:
    if data.get("kind") != "numeric":
        add(("numeric_contract",), f"{source} is a {data.get('kind')} artifact, not numeric")
        return
    results = data.get("results") or {}
    if results.get("passed") is not True:
        add(("numeric_contract",), f"{source} reports passed = {results.get('passed')}")
    per_dtype = results.get("per_dtype") or {}
    for index, tolerance in enumerate(record.get("numeric_contract", "tolerances", default=[]) or []):
        metric, dtype = tolerance["metric"], tolerance["dtype"]
        keys = ("numeric_contract", "tolerances", index)
        value = (per_dtype.get(dtype) or {}).get(metric)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            add(keys, f"{source} has no {metric} for {dtype}")
            continue
        if "max" in tolerance and not value <= tolerance["max"]:
            add(keys, f"{dtype} {metric} = {value:.6g} exceeds the declared max {tolerance['max']:g} ({source})")
        if "min" in tolerance and not value >= tolerance["min"]:
            add(keys, f"{dtype} {metric} = {value:.6g} is below the declared min {tolerance['min']:g} ({source})")
