"""Which of this repository's own findings only say that its GPU evidence predates the code.

The H200 artifacts under docs/evidence/ bind the kernel and validation sources they
measured. When those sources change, every gate that reads the artifacts fails until the
GPU run is repeated (`validation.gpu_check` and `validation/bench/h200_session.sh` on an
H200, then the pins re-recorded). CI has no GPU, so its tests tell the two apart: a finding
that the GPU evidence is out of date, and anything else, which must never appear.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT_OF_DATE = re.compile(r"evidence '(?P<id>[\w.-]+)' (?:is stale: .* since it was measured|does not bind .*, a file "
                         r"the record covers)")
SELF_CHECK = re.compile(r"self-check claims pass for (?P<gate>G\d), but (?P=gate) is fail")


def gpu_artifact_ids() -> set[str]:
    """Ids of the committed artifacts that a GPU run produced (their environment names a CUDA device)."""
    ids = set()
    for path in sorted((REPO / "docs" / "evidence").glob("*.json")):
        artifact = json.loads(path.read_text(encoding="utf-8"))
        environment = artifact.get("environment") or {}
        if "cuda" in str(environment.get("backend", "")).lower() or "H200" in str(environment.get("device", "")):
            ids.add(artifact["id"])
    return ids


def split_findings(findings) -> tuple[list[str], list[str]]:
    """(out-of-date GPU evidence, everything else) among `findings` (gates.model.findings.Finding objects).

    A gate's self-check mismatch counts as out of date only when that gate, in that record,
    has an out-of-date finding and nothing else wrong.
    """
    gpu_ids = gpu_artifact_ids()
    out_of_date, other = [], []
    by_gate: dict[tuple[str, str], list] = {}
    for finding in findings:
        by_gate.setdefault((finding.path, finding.gate), []).append(finding)
    for finding in findings:
        text = finding.format_text()
        match = OUT_OF_DATE.search(finding.message)
        if match and match.group("id") in gpu_ids:
            out_of_date.append(text)
            continue
        claimed = SELF_CHECK.search(finding.message)
        if claimed:
            gate_findings = by_gate.get((finding.path, claimed.group("gate")), [])
            reasons = [f for f in gate_findings if f is not finding and f.severity == "error"]
            if reasons and all((m := OUT_OF_DATE.search(f.message)) and m.group("id") in gpu_ids for f in reasons):
                out_of_date.append(text)
                continue
        other.append(text)
    return out_of_date, other
