"""Committed fingerprints: format, and the explicit refresh from a bitwise artifact."""

import json

import validation.fingerprints as fingerprints


def test_committed_file_is_keyed_by_backend_then_fixture():
    committed = fingerprints.load_committed()
    assert committed, "validation/fingerprints.json holds at least one backend"
    keys = {key for key, *_ in fingerprints.fingerprint_targets()}
    quant_keys = {key for key, *_ in fingerprints.quant_fingerprint_targets()}
    assert not keys & quant_keys, "quantized-cache fingerprints have keys of their own"
    for backend, prints in committed.items():
        assert backend.startswith(("interpreter-cpu-", "cuda-sm"))
        assert set(prints) <= keys | quant_keys, "a fingerprint for a fixture that no longer exists"
        assert all(len(sha) == 64 for sha in prints.values())
    # a backend may lack fixtures not yet recorded on it (they skip there), but some backend has them all
    assert any(set(prints) >= keys for prints in committed.values())
    assert any(set(prints) >= quant_keys for prints in committed.values())


def test_refresh_from_an_artifact_writes_only_that_backend(tmp_path, monkeypatch):
    target = tmp_path / "fingerprints.json"
    target.write_text(json.dumps({"interpreter-cpu-x86_64-avx2": {"k": "0" * 64}}))
    monkeypatch.setattr(fingerprints, "FINGERPRINTS_PATH", target)
    monkeypatch.setattr(fingerprints.load_committed, "__defaults__", (target,))
    monkeypatch.setattr(fingerprints.save_committed, "__defaults__", (target,))
    artifact = tmp_path / "bitwise.json"
    artifact.write_text(json.dumps({"kind": "bitwise", "results": {"backend": "cuda-sm90-triton3.6", "fingerprints": {"k": "1" * 64}}}))
    assert fingerprints.main(["--from-artifact", str(artifact)]) == 0
    assert json.loads(target.read_text()) == {"cuda-sm90-triton3.6": {"k": "1" * 64}, "interpreter-cpu-x86_64-avx2": {"k": "0" * 64}}


def test_refresh_refuses_an_artifact_of_another_kind(tmp_path):
    artifact = tmp_path / "numeric.json"
    artifact.write_text(json.dumps({"kind": "numeric", "results": {}}))
    assert fingerprints.main(["--from-artifact", str(artifact)]) == 2
