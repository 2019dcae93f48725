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
from gates.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.record import Record
from gates.suite_evidence import judged_results

GATE = "G3"


def check(record: Record, ctx: GateContext) -> GateResult:
    contract = record.get("numeric_contract")
    if contract is None:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)

    for index, tolerance in enumerate(contract.get("tolerances") or []):
        if ("max" in tolerance) == ("min" in tolerance):
            add(("numeric_contract", "tolerances", index), "a tolerance sets exactly one of max or min")
    if findings or not stage_at_least(ctx.effective_stage(record), "B"):
        return result_from_findings(GATE, findings) if findings else GateResult(GATE, Status.NOT_APPLICABLE)
    judged = judged_results(record, ctx, "numeric_contract", "numeric", GATE, findings, add)
    if judged is not None:
        _check_results(record, *judged, add)
    return result_from_findings(GATE, findings)


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
