"""The closed set of gates, G0-G8, in one literal table."""

from __future__ import annotations

from gates.checks import (
    g0_form,
    g1_diagnosis,
    g2_unknowns,
    g3_numeric,
    g4_bitwise,
    g5_compatibility,
    g6_capture,
    g7_claims,
    g8_independence,
)

GATES = {
    "G0": g0_form.check,
    "G1": g1_diagnosis.check,
    "G2": g2_unknowns.check,
    "G3": g3_numeric.check,
    "G4": g4_bitwise.check,
    "G5": g5_compatibility.check,
    "G6": g6_capture.check,
    "G7": g7_claims.check,
    "G8": g8_independence.check,
}

TITLES = {
    "G0": "Form",
    "G1": "Diagnosis from evidence",
    "G2": "Unknowns and decisions",
    "G3": "Numeric contract",
    "G4": "Bitwise anchor",
    "G5": "Compatibility",
    "G6": "Capture safety",
    "G7": "Claims discipline",
    "G8": "Independence",
}


def gate_ids() -> list[str]:
    return list(GATES)
