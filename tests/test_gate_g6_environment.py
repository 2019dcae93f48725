"""G6 counts a capture artifact as device-produced only when its whole environment agrees.

`gates.evidence.device_environment` holds the rule; the gate tests use copies of the golden
example repository with the capture artifact edited and re-pinned.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from gates.evidence.device_environment import device_environment_problems
from gates.model.findings import Status

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G6/positive/capture-on-device.md"
H200 = {"backend": "cuda", "backend_key": "cuda-sm90-triton3.6", "device": "NVIDIA H200", "torch": "2.11.0+cu130",
        "triton": "3.6.0", "python": "3.12.3"}


@pytest.mark.parametrize("environment", [
    H200,
    dict(H200, torch="2.11.0"),
    {"backend": "rocm", "device": "AMD Instinct MI300X", "torch": "2.11.0+rocm6.4", "triton": "3.6.0"},
], ids=["h200", "torch-without-local-tag", "rocm"])
def test_a_consistent_gpu_environment_has_no_problem(environment):
    assert device_environment_problems(environment) == []


@pytest.mark.parametrize("change, words", [
    ({"backend": "interpreter-cpu"}, "backend 'interpreter-cpu' is not a device backend"),
    ({"backend": "cpu"}, "backend 'cpu' is not a device backend"),
    ({"backend": None}, "backend 'unknown' is not a device backend"),
    ({"backend_key": "interpreter-cpu-x86_64-avx2"}, "contradicts backend 'cuda'"),
    ({"device": "x86_64"}, "device 'x86_64' is a host processor"),
    ({"device": "AMD EPYC 9654 96-Core Processor"}, "is a host processor"),
    ({"device": ""}, "no device name"),
    ({"torch": "2.13.0+cpu"}, "torch 2.13.0+cpu is a CPU-only build"),
    ({"torch": "2.11.0+rocm6.4"}, "is not a cuda build"),
    ({"torch": None}, "no torch version"),
    ({"triton": None}, "no triton version"),
])
def test_an_inconsistent_environment_is_refused(change, words):
    environment = {k: v for k, v in dict(H200, **change).items() if v is not None}
    problems = device_environment_problems(environment)
    assert any(words in p for p in problems), problems


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def rewrite_capture(repo: Path, change) -> None:
    """Edit evidence/capture-h200.json with `change(data)` and pin the record to the new bytes."""
    artifact = repo / "evidence" / "capture-h200.json"
    data = json.loads(artifact.read_text(encoding="utf-8"))
    change(data)
    artifact.write_text(json.dumps(data, indent=2), encoding="utf-8")
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    record = repo / RECORD
    text = re.sub(r"(id: capture-h200, path: evidence/capture-h200\.json, sha256: )[0-9a-f]{64}", rf"\g<1>{digest}",
                  record.read_text(encoding="utf-8"))
    record.write_text(text, encoding="utf-8")


def g6(repo: Path):
    report = check_records([repo / RECORD], repo, gates=["G6"])
    assert not report.input_errors, report.input_errors
    result = report.records[0].gates["G6"]
    return result, "\n".join(f.message for f in result.findings)


def test_the_example_capture_passes(repo):
    rewrite_capture(repo, lambda data: None)
    assert g6(repo)[0].status is Status.PASS


def test_an_interpreter_backend_fails(repo):
    rewrite_capture(repo, lambda data: data["environment"].update(backend="interpreter-cpu"))
    result, text = g6(repo)
    assert result.status is Status.FAIL
    assert "is not a consistent GPU run: backend 'interpreter-cpu' is not a device backend" in text


def test_a_cpu_torch_build_next_to_a_gpu_name_fails(repo):
    rewrite_capture(repo, lambda data: data["environment"].update(torch="2.13.0+cpu"))
    result, text = g6(repo)
    assert result.status is Status.FAIL
    assert "torch 2.13.0+cpu is a CPU-only build" in text


def test_every_listed_run_must_hold(repo):
    def runs(data):
        good = {"captured": True, "allocations": 0, "host_syncs": 0, "replay_equals_eager": True, "error": None}
        data["results"]["runs"] = {"contig": good, "paged": dict(good, host_syncs=1, error="cudaStreamSynchronize")}
    rewrite_capture(repo, runs)
    result, text = g6(repo)
    assert result.status is Status.FAIL
    assert "run paged: 1 host sync(s) during capture (must be 0)" in text
    assert "run paged: it reports an error: cudaStreamSynchronize" in text
    assert "run contig" not in text


def test_an_empty_run_list_fails(repo):
    rewrite_capture(repo, lambda data: data["results"].update(runs={}))
    result, text = g6(repo)
    assert result.status is Status.FAIL
    assert "`runs` lists no run" in text


def test_this_repository_s_capture_artifact_is_a_consistent_gpu_run():
    artifact = Path(__file__).resolve().parents[1] / "docs" / "evidence" / "capture-splitkv-h200.json"
    assert device_environment_problems(json.loads(artifact.read_text(encoding="utf-8"))["environment"]) == []
