"""G6 Capture safety: the new path is CUDA-graph capturable, proven on a device.

When `capture.required` is true, from the stage named in `capture.due` (default
C, the stage that wires the workspace and the route) the record names a
`capture` evidence artifact that was produced on a GPU backend (not the CPU or
the Triton interpreter), is pinned and fresh (bound to the current source
hashes), and reports `captured`, zero allocations and zero host syncs during
capture, and a replay equal to the eager run.
"""

from __future__ import annotations

from gates.context import GateContext, stage_at_least
from gates.evidence_refs import checked_artifact, evidence_by_id
from gates.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.record import Record

GATE = "G6"
HOST_BACKENDS = {"cpu", "interpreter", "triton-interpreter", "none", ""}


def check(record: Record, ctx: GateContext) -> GateResult:
    capture = record.get("capture")
    if capture is None or capture.get("required") is not True:
        return GateResult(GATE, Status.NOT_APPLICABLE)
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
    backend = str(artifact.environment.get("backend", "")).lower()
    if backend in HOST_BACKENDS:
        add(("capture", "evidence"), f"capture evidence {ref!r} was produced on backend {backend or 'unknown'!r}; "
            "graph capture is proven only on a GPU")
    results = artifact.results
    if results.get("captured") is not True:
        add(("capture", "evidence"), f"capture evidence {ref!r}: the path was not captured")
    for key, what in (("allocations", "allocation(s)"), ("host_syncs", "host sync(s)")):
        if results.get(key) != 0:
            add(("capture", "evidence"), f"capture evidence {ref!r}: {results.get(key)} {what} during capture (must be 0)")
    if results.get("replay_equals_eager") is not True:
        add(("capture", "evidence"), f"capture evidence {ref!r}: the graph replay does not equal the eager run")
    return result_from_findings(GATE, findings)
