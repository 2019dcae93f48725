"""The contracts the policy requires of a record by its level (`contracts` in the policy).

A record that declares no numeric contract, no bitwise anchors or no capture requirement leaves
G3, G4 or G6 not applicable: right for a record whose change needs none, a silent pass for a
hot-path kernel change. The base policy can say which a record must declare, per level of the
paths it covers (`contracts: {L3: [numeric], L4: [bitwise, capture]}`; a kind listed at a level
is required at every higher level too), and the gate that would judge the contract then fails
instead of not applying.
"""

from __future__ import annotations

from gates.checks.context import GateContext
from gates.checks.evidence_refs import record_level
from gates.model.findings import Finding, GateResult, Status, adder_at_keys
from gates.model.record import Record

DECLARES = {"numeric": "numeric_contract (oracle, suite, tolerances)", "bitwise": "bitwise (suite, anchors)",
            "capture": "capture: {required: true, due: C}"}


def missing_contract(record: Record, ctx: GateContext, kind: str, gate: str) -> GateResult | None:
    """A failing result, at the record's `covers`, when the policy requires contract `kind` (numeric, bitwise or
    capture) of the record's level and the record does not declare it; None when the policy does not require it."""
    if ctx.policy is None:
        return None
    level = record_level(record, ctx)
    if kind not in ctx.policy.required_contracts(level):
        return None
    findings: list[Finding] = []
    adder_at_keys(gate, record, findings)(("covers",), f"the policy requires a {kind} contract of a record that covers "
                                          f"{level} paths ({ctx.policy.path}, contracts); declare {DECLARES[kind]}")
    return GateResult(gate, Status.FAIL, findings)
