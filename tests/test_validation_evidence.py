"""The suites write evidence artifacts in the ARCHITECTURE.md format, and a failure shows."""

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from validation.artifacts import build_artifact, source_hashes
from validation.evidence import EvidenceRecorder, write_session_artifacts
from validation.metrics import Metrics

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "gates" / "schema" / "evidence.schema.json"


def schema_check(artifact: dict) -> None:
    if SCHEMA.exists():
        jsonschema.validate(artifact, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_sources_are_repository_relative_posix_paths_of_kernels_and_validation():
    sources = source_hashes()
    assert "kernels/decode_attention/kernel_partial.py" in sources
    assert "validation/suites/test_numeric.py" in sources
    assert all(not p.startswith("/") and "\\" not in p for p in sources)
    assert not any(p.startswith("validation/bench/") for p in sources)


def test_recorder_keeps_the_worst_values_and_a_failure(tmp_path):
    rec = EvidenceRecorder()
    rec.record_numeric("bf16", Metrics(1e-3, 2e-3, 0.99999, True, True), True, "fx-a", "a" * 64)
    rec.record_numeric("bf16", Metrics(4e-3, 1e-3, 0.9999, True, True), False, "fx-b", "b" * 64)
    (path,) = write_session_artifacts(rec, tmp_path / "numeric-x.json", session_failed=False)
    artifact = json.loads(path.read_text())
    schema_check(artifact)
    assert artifact["id"] == "numeric-x" and artifact["kind"] == "numeric"
    assert artifact["results"]["per_dtype"]["bf16"] == {"rel_l2": 4e-3, "max_abs": 2e-3, "min_cosine": 0.9999, "cases": 2}
    assert artifact["results"]["passed"] is False
    assert artifact["fixtures"] == {"fx-a": "a" * 64, "fx-b": "b" * 64}


def test_bitwise_results_fail_when_one_anchor_breaks(tmp_path):
    rec = EvidenceRecorder()
    rec.record_anchor("A1-split1-equals-single-pass", True, "fx", "c" * 64)
    rec.record_anchor("A1-split1-equals-single-pass", False, "fx", "c" * 64)
    rec.record_anchor("A4-run-to-run", True, "fx", "c" * 64)
    results = rec.bitwise_results(session_failed=False)
    assert results["passed"] is False
    assert results["anchors"]["A1-split1-equals-single-pass"] == {"passed": False, "cases": 2, "check": results["anchors"]["A1-split1-equals-single-pass"]["check"]}
    with pytest.raises(ValueError, match="unknown anchor"):
        rec.record_anchor("A9", True, "fx", "c" * 64)


def test_build_artifact_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        build_artifact(artifact_id="x", kind="speed", command="c", results={}, fixtures={})


def test_run_suite_writes_a_schema_valid_bitwise_artifact(tmp_path):
    out = tmp_path / "bitwise-smoke.json"
    done = subprocess.run(
        [sys.executable, "-m", "validation.run_suite", "bitwise", "--out", str(out), "--", "-k", "A1 and B3-Hq4"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    artifact = json.loads(out.read_text())
    schema_check(artifact)
    assert artifact["command"].startswith("python -m validation.run_suite bitwise --out")
    assert artifact["results"]["anchors"]["A1-split1-equals-single-pass"]["cases"] == 4
    assert artifact["results"]["passed"] is True


def test_a_named_commit_wins_over_the_checkout_and_stands_in_for_a_missing_one(tmp_path, monkeypatch):
    from validation.artifacts import COMMIT_ENV, REPO_ROOT, git_commit

    monkeypatch.delenv(COMMIT_ENV, raising=False)
    assert git_commit(tmp_path) is None
    monkeypatch.setenv(COMMIT_ENV, "bf39b19")
    assert git_commit(tmp_path) == "bf39b19"
    assert git_commit(REPO_ROOT) == "bf39b19"
