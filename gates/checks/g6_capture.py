"""G6 Capture safety: the new path is CUDA-graph capturable, proven on a device.

When `capture.required` is true, from the stage named in `capture.due` (default
C, the stage that wires the workspace and the route) the record names a
`capture` evidence artifact that was produced on a GPU: its environment must be
consistent (`gates.evidence.device_environment`: a cuda/rocm backend, a GPU device name,
no `+cpu` torch build, a Triton version). It must be pinned and fresh (bound to
the current source hashes) and report `captured`, zero allocations and zero host
syncs during capture (integers, not `false`), and a replay equal to the eager
run; when it lists `runs`, every run must say the same, with no error.
"""

from __future__ import annotations

from gates.checks.context import GateContext, stage_at_least
from gates.checks.evidence_refs import checked_artifact, evidence_by_id
from gates.checks.required_contracts import missing_contract
from gates.evidence.device_environment import device_environment_problems
from gates.model.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.model.record import Record

GATE = "G6"


def check(record: Record, ctx: GateContext) -> GateResult:
    capture = record.get("capture")
    if capture is None or capture.get("required") is not True:
        return missing_contract(record, ctx, "capture", GATE) or GateResult(GATE, Status.NOT_APPLICABLE)
    due = capture.get("due") or "C"
    if not stage_at_least(ctx.effective_stage(record), due):
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)

    ref = capture.get("evidence")
    entry = evidence_by_id(record).get(ref) if ref else None
    if ref is None:
        add(("capture",), f"capture evidence is due at stage {due}: name the capture artifact in capture.evidence")
        return result_from_findings(GATE, findings)
    if entry is None:
        add(("capture", "evidence"), f"capture.evidence {ref!r} is not declared in evidence")
        return result_from_findings(GATE, findings)
    if entry.kind != "capture":
        add(("capture", "evidence"), f"capture.evidence {ref!r} is a {entry.kind} artifact, not capture")
        return result_from_findings(GATE, findings)
    artifact, problems = checked_artifact(record, ctx, entry, GATE)
    findings.extend(problems)
    if artifact is None:
        return result_from_findings(GATE, findings)
    for problem in device_environment_problems(artifact.environment):
        add(("capture", "evidence"), f"capture evidence {ref!r} is not a consistent GPU run: {problem}; "
            "graph capture is proven only on a GPU")
    for problem in _outcome_problems(artifact.results):
        add(("capture", "evidence"), f"capture evidence {ref!r}{problem}")
    return result_from_findings(GATE, findings)


def _outcome_problems(results: dict) -> list[str]:
    """What the artifact's summary, and each of its `runs` when it lists them, fails to show."""
    problems = [f": {problem}" for problem in _capture_problems(results)]
    runs = results.get("runs")
    if runs is not None and not (isinstance(runs, dict) and runs):
        problems.append(": `runs` lists no run")
    elif runs is not None:
        for name, run in sorted(runs.items()):
            problems.extend(f" run {name}: {problem}" for problem in _capture_problems(run if isinstance(run, dict) else {}))
    return problems


def _capture_problems(results: dict) -> list[str]:
    problems = []
    if results.get("captured") is not True:
        problems.append("the path was not captured")
    for key, what in (("allocations", "allocation(s)"), ("host_syncs", "host sync(s)")):
        value = results.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value != 0:
            problems.append(f"{value} {what} during capture (must be 0)")
    if results.get("replay_equals_eager") is not True:
        problems.append("the graph replay does not equal the eager run")
    if results.get("error") not in (None, ""):
        problems.append(f"it reports an error: {str(results['error'])[:200]}")
    if "passed" in results and results["passed"] is not True:
        problems.append(f"it reports passed = {results['passed']}")
    return problems
