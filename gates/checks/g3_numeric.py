"""G3 Numeric: the kernel meets its declared tolerances against the fp64 oracle.

The record declares `numeric_contract` (oracle, suite, tolerances per metric and
dtype). Every declared tolerance must be sound and no looser than the policy's
ceilings (`gates.checks.tolerance_bounds`), at every stage. From stage B on, either the
oracle must name a function that exists (`gates.checks.oracle_reference`), and either the
declared suite is run (`--run-suites`) or, by default, the record's `numeric`
evidence artifact is read: it must exist, match the schema and its pinned SHA-256,
be fresh, report `passed`, have measured cases for every declared dtype, and every
declared tolerance and every ceiling for a declared dtype must hold on
`results.per_dtype`, which must hold each metric's worst case (where the artifact says which end
of its cases it kept, `results.worst_of`, that end is the one the tolerance bounds). Before stage B there is no kernel yet and the gate does not
apply (the declaration is still checked).
"""

from __future__ import annotations

from gates.checks.context import GateContext, stage_at_least
from gates.checks.oracle_reference import oracle_problem
from gates.checks.required_contracts import missing_contract
from gates.checks.suite_evidence import judged_results
from gates.checks.tolerance_bounds import ceilings_of, is_finite_number, number_text, tolerance_problems
from gates.model.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.model.policy import POLICY_PATH
from gates.model.record import Record

GATE = "G3"


def check(record: Record, ctx: GateContext) -> GateResult:
    contract = record.get("numeric_contract")
    if contract is None:
        return missing_contract(record, ctx, "numeric", GATE) or GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)
    ceilings = ceilings_of(ctx.policy)
    policy_path = ctx.policy.path if ctx.policy is not None else POLICY_PATH

    for index, tolerance in enumerate(contract.get("tolerances") or []):
        for problem in tolerance_problems(tolerance, ceilings, policy_path):
            add(("numeric_contract", "tolerances", index), problem)
    oracle = contract.get("oracle")
    if isinstance(oracle, str) and stage_at_least(ctx.effective_stage(record), "B"):
        problem = oracle_problem(oracle, ctx)
        if problem:
            add(("numeric_contract", "oracle"), problem)
    if findings or not stage_at_least(ctx.effective_stage(record), "B"):
        return result_from_findings(GATE, findings) if findings else GateResult(GATE, Status.NOT_APPLICABLE)
    judged = judged_results(record, ctx, "numeric_contract", "numeric", GATE, findings, add)
    if judged is not None:
        _check_results(record, *judged, ceilings, policy_path, add)
    return result_from_findings(GATE, findings)


def _check_results(record: Record, data: dict, source: str, ceilings, policy_path: str, add) -> None:
    if data.get("kind") != "numeric":
        add(("numeric_contract",), f"{source} is a {data.get('kind')} artifact, not numeric")
        return
    results = data.get("results") or {}
    if results.get("passed") is not True:
        add(("numeric_contract",), f"{source} reports passed = {results.get('passed')}")
    per_dtype = results.get("per_dtype") or {}
    tolerances = record.get("numeric_contract", "tolerances", default=[]) or []
    for dtype in dict.fromkeys(t["dtype"] for t in tolerances):
        cases = (per_dtype.get(dtype) or {}).get("cases")
        if isinstance(cases, bool) or not isinstance(cases, int) or cases <= 0:
            add(("numeric_contract", "tolerances"), f"{source} measured no {dtype} cases (cases = {cases}); "
                "a metric over no cases proves nothing")
    worst_of = results.get("worst_of") if isinstance(results.get("worst_of"), dict) else {}
    for index, tolerance in enumerate(tolerances):
        metric, dtype = tolerance["metric"], tolerance["dtype"]
        keys = ("numeric_contract", "tolerances", index)
        kept = worst_of.get(metric)
        bound = "max" if "max" in tolerance else "min"
        if kept is not None and kept != bound:
            add(keys, f"{source} keeps the {_end(kept)} {metric} of its cases, but the tolerance bounds its "
                f"{_end(bound)} (a {bound}): that value is the best case, not the worst; measure {metric} with its "
                "worst case kept")
            continue
        value = _measured(per_dtype, dtype, metric)
        if value is None:
            add(keys, f"{source} has no {metric} for {dtype}")
            continue
        if "max" in tolerance and not value <= tolerance["max"]:
            add(keys, f"{dtype} {metric} = {value:.6g} exceeds the declared max {number_text(tolerance['max'])} ({source})")
        if "min" in tolerance and not value >= tolerance["min"]:
            add(keys, f"{dtype} {metric} = {value:.6g} is below the declared min {number_text(tolerance['min'])} ({source})")
    declared = {(t["metric"], t["dtype"]) for t in tolerances}
    for dtype in dict.fromkeys(t["dtype"] for t in tolerances):
        for ceiling in ceilings:
            if ceiling.dtype not in (None, dtype) or (ceiling.metric, dtype) in declared:
                continue
            value = _measured(per_dtype, dtype, ceiling.metric)
            if value is None:
                add(("numeric_contract", "tolerances"), f"{source} has no {ceiling.metric} for {dtype}, which "
                    f"{ceiling.describe(policy_path)} bounds")
            elif not ceiling.allows(value):
                add(("numeric_contract", "tolerances"), f"{dtype} {ceiling.metric} = {value:.6g} breaks "
                    f"{ceiling.describe(policy_path)} ({source})")


def _end(direction) -> str:
    return {"max": "largest", "min": "smallest"}.get(direction, repr(direction))


def _measured(per_dtype: dict, dtype: str, metric: str):
    value = (per_dtype.get(dtype) or {}).get(metric)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if is_finite_number(value) else float("nan")
