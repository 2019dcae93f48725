"""Collect what the suites measured and turn it into numeric / bitwise artifacts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .anchors import ANCHORS
from .artifacts import artifact_id_for, build_artifact, write_artifact
from .environment import backend_key

EVIDENCE_KEY = pytest.StashKey["EvidenceRecorder"]()
# Which end of the cases each per-dtype value is: the largest error, the smallest similarity.
WORST_OF = {"rel_l2": "max", "max_abs": "max", "min_cosine": "min"}


class EvidenceRecorder:
    """Worst metrics per dtype, anchor outcomes, fingerprints and fixture hashes of one session."""

    def __init__(self):
        self.per_dtype: dict[str, dict] = {}
        self.numeric_passed = True
        self.anchors: dict[str, dict] = {}
        self.fingerprints: dict[str, str] = {}
        self.fingerprints_passed = True
        self.fixtures: dict[str, dict[str, str]] = {"numeric": {}, "bitwise": {}}

    def state(self) -> dict:
        """Everything recorded, as JSON data (a shard of a suite run hands this to the merge)."""
        return {"per_dtype": self.per_dtype, "numeric_passed": self.numeric_passed, "anchors": self.anchors,
                "fingerprints": self.fingerprints, "fingerprints_passed": self.fingerprints_passed,
                "fixtures": self.fixtures}

    def merge(self, state: dict) -> None:
        """Add what another session of the same suite recorded (`state()`): the worse value of
        each metric, every anchor's cases and outcome, every fingerprint and fixture."""
        for dtype, theirs in state["per_dtype"].items():
            worst = self.per_dtype.setdefault(dtype, {"rel_l2": 0.0, "max_abs": 0.0, "min_cosine": 1.0, "cases": 0})
            worst["rel_l2"] = _worse(worst["rel_l2"], theirs["rel_l2"], max)
            worst["max_abs"] = _worse(worst["max_abs"], theirs["max_abs"], max)
            worst["min_cosine"] = _worse(worst["min_cosine"], theirs["min_cosine"], min)
            worst["cases"] += theirs["cases"]
        self.numeric_passed &= bool(state["numeric_passed"])
        for anchor, theirs in state["anchors"].items():
            entry = self.anchors.setdefault(anchor, {"passed": True, "cases": 0, "check": theirs["check"]})
            entry["passed"] &= bool(theirs["passed"])
            entry["cases"] += theirs["cases"]
        self.fingerprints.update(state["fingerprints"])
        self.fingerprints_passed &= bool(state["fingerprints_passed"])
        for kind, fixtures in state["fixtures"].items():
            self.fixtures.setdefault(kind, {}).update(fixtures)

    def record_numeric(self, dtype: str, metrics, passed: bool, fixture_key: str, fixture_sha: str) -> None:
        worst = self.per_dtype.setdefault(dtype, {"rel_l2": 0.0, "max_abs": 0.0, "min_cosine": 1.0, "cases": 0})
        worst["rel_l2"] = _worse(worst["rel_l2"], metrics.rel_l2, max)
        worst["max_abs"] = _worse(worst["max_abs"], metrics.max_abs, max)
        worst["min_cosine"] = _worse(worst["min_cosine"], metrics.min_cosine, min)
        worst["cases"] += 1
        self.numeric_passed &= bool(passed)
        self.fixtures["numeric"][fixture_key] = fixture_sha

    def record_anchor(self, anchor: str, passed: bool, fixture_key: str, fixture_sha: str) -> None:
        if anchor not in ANCHORS:
            raise ValueError(f"unknown anchor {anchor!r}; known: {sorted(ANCHORS)}")
        entry = self.anchors.setdefault(anchor, {"passed": True, "cases": 0, "check": ANCHORS[anchor]})
        entry["passed"] &= bool(passed)
        entry["cases"] += 1
        self.fixtures["bitwise"][fixture_key] = fixture_sha

    def record_fingerprint(self, key: str, sha: str, matched: bool | None, fixture_key: str, fixture_sha: str) -> None:
        self.fingerprints[key] = sha
        if matched is False:
            self.fingerprints_passed = False
        self.fixtures["bitwise"][fixture_key] = fixture_sha

    def numeric_results(self, session_failed: bool) -> dict:
        cases = sum(d["cases"] for d in self.per_dtype.values())
        return {
            "passed": bool(self.numeric_passed and cases > 0 and not session_failed),
            "per_dtype": {k: self.per_dtype[k] for k in sorted(self.per_dtype)},
            "worst_of": WORST_OF,
        }

    def bitwise_results(self, session_failed: bool) -> dict:
        anchors_ok = all(a["passed"] for a in self.anchors.values())
        return {
            "passed": bool(self.anchors and anchors_ok and self.fingerprints_passed and not session_failed),
            "backend": backend_key(),
            "anchors": {k: self.anchors[k] for k in sorted(self.anchors)},
            "fingerprints": dict(sorted(self.fingerprints.items())),
            "anchors_not_run": sorted(set(ANCHORS) - set(self.anchors)),
        }


def _worse(current: float, new: float, pick) -> float:
    if new != new:  # NaN is the worst value there is
        return float("nan")
    if current != current:
        return current
    return pick(current, new)


def write_session_artifacts(recorder: EvidenceRecorder, out, *, session_failed: bool,
                            collection: dict | None = None, sources: dict | None = None) -> list[Path]:
    """Write the artifact of each kind the session measured; two kinds get -numeric/-bitwise suffixes.

    `collection` (`gates.evidence.collection_record.collection_of`) goes into each artifact's
    results: what pytest collected, deselected and ran, so that a gate can see the whole suite ran.
    `sources` replaces this process's own binding (a merge of shards binds what the shards imported)."""
    kinds = []
    if recorder.per_dtype:
        kinds.append(("numeric", recorder.numeric_results(session_failed), recorder.fixtures["numeric"]))
    if recorder.anchors or recorder.fingerprints:
        kinds.append(("bitwise", recorder.bitwise_results(session_failed), recorder.fixtures["bitwise"]))
    for _, results, _ in kinds:
        if collection is not None:
            results["collection"] = collection
    out = Path(out)
    written = []
    for kind, results, fixtures in kinds:
        path = out if len(kinds) == 1 else out.with_name(f"{out.stem}-{kind}{out.suffix}")
        artifact_id = os.environ.get("DESIGN_GATES_EVIDENCE_ID") if len(kinds) == 1 else None
        artifact = build_artifact(
            artifact_id=artifact_id or artifact_id_for(path), kind=kind, results=results, fixtures=fixtures,
            sources=sources,
        )
        written.append(write_artifact(path, artifact))
    return written
