"""The suites write evidence artifacts in the ARCHITECTURE.md format, and a failure shows."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from validation.artifacts import build_artifact, source_hashes
from validation.evidence import EvidenceRecorder, write_session_artifacts
from validation.metrics import Metrics

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "gates" / "model" / "schema" / "evidence.schema.json"


def schema_check(artifact: dict) -> None:
    if SCHEMA.exists():
        jsonschema.validate(artifact, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_sources_bind_the_covered_files_and_the_imported_modules_not_a_fixed_list():
    import kernels.decode_attention.api  # noqa: F401 - the "measured" import

    sources = source_hashes(covers=["kernels/split_heuristic.py"])
    assert "kernels/split_heuristic.py" in sources, "a covered file is bound even when not imported"
    assert "kernels/decode_attention/kernel_partial.py" in sources, "an imported module is bound"
    assert "tests/test_validation_evidence.py" in sources, "the measuring code itself is bound"
    assert not any(p.startswith("gates/") for p in sources), "the checker judges; it is not measured"
    assert all(not p.startswith("/") and "\\" not in p for p in sources)


def test_a_kernel_outside_the_old_fixed_list_is_bound_when_covered(tmp_path, monkeypatch):
    (tmp_path / "kernels" / "rmsnorm").mkdir(parents=True)
    (tmp_path / "kernels" / "rmsnorm" / "kernel.py").write_text("X = 1\n", encoding="utf-8")
    monkeypatch.setenv("DESIGN_GATES_COVERS", json.dumps(["kernels/rmsnorm/**"]))
    sources = source_hashes(repo_root=tmp_path)
    assert list(sources) == ["kernels/rmsnorm/kernel.py"]


def test_the_artifact_records_the_real_command_line():
    artifact = build_artifact(artifact_id="x", kind="numeric", results={}, fixtures={}, sources={})
    assert artifact["command"] == shlex.join(sys.orig_argv)


def test_a_runner_with_a_signing_key_writes_an_attested_artifact(tmp_path, monkeypatch):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from gates.evidence.attestation import TrustedKeys, private_key_text, public_key_text, verification_problem
    from validation.artifacts import write_artifact

    key = Ed25519PrivateKey.generate()
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY", private_key_text(key))
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY_ID", "cpu-runner")
    results = {"passed": True, "per_dtype": {"bf16": {"rel_l2": 1e-3, "cases": 1}}}
    path = write_artifact(tmp_path / "n.json", build_artifact(artifact_id="n", kind="numeric", results=results,
                                                               fixtures={}, sources={}))
    artifact = json.loads(path.read_text(encoding="utf-8"))
    schema_check(artifact)
    assert verification_problem(artifact, TrustedKeys({"cpu-runner": public_key_text(key.public_key())}, {})) is None


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
    assert "-m validation.run_suite bitwise --out" in artifact["command"]
    assert "kernels/decode_attention/kernel_partial.py" in artifact["sources"]
    assert "validation/suites/test_bitwise.py" in artifact["sources"]
    assert artifact["results"]["anchors"]["A1-split1-equals-single-pass"]["cases"] == 4
    assert artifact["results"]["passed"] is True


def test_a_named_commit_wins_over_the_checkout_and_stands_in_for_a_missing_one(tmp_path, monkeypatch):
    from validation.artifacts import COMMIT_ENV, REPO_ROOT, git_commit

    monkeypatch.delenv(COMMIT_ENV, raising=False)
    assert git_commit(tmp_path) is None
    monkeypatch.setenv(COMMIT_ENV, "bf39b19")
    assert git_commit(tmp_path) == "bf39b19"
    assert git_commit(REPO_ROOT) == "bf39b19"
