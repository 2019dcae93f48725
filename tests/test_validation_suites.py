"""The G3/G4 suites themselves, run as CI runs them: the numeric and bitwise matrices in
their `ci` tier (each case in one dtype, through the Triton interpreter without a GPU),
each writing its evidence artifact.

Both suites start in their own processes as soon as the run knows it needs them
(`tests/conftest.py`), so they run beside the rest of the tests.
"""

import json
import subprocess

import pytest

from suite_processes import SUITES

TIMEOUT_S = 1800


@pytest.mark.parametrize("suite", SUITES)
def test_suite_passes_and_its_artifact_says_so(suite, suite_runs):
    run = suite_runs[suite]
    try:
        returncode = run.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        run.stop()
        pytest.fail(f"validation/suites/test_{suite}.py did not finish in {TIMEOUT_S} s:\n{run.log.read_text()[-3000:]}")
    assert returncode == 0, f"validation/suites/test_{suite}.py failed:\n{run.log.read_text()[-8000:]}"
    artifact = json.loads(run.artifact.read_text())
    results = artifact["results"]
    assert results["passed"] is True
    assert "--tier ci" in artifact["command"]
    if suite == "numeric":
        assert set(results["per_dtype"]) == {"bf16", "fp16", "bf16-int8", "bf16-fp8", "fp16-int8", "fp16-fp8"}
    else:
        assert {"A1", "A2", "A3"} <= {key.split("-")[0] for key in results["anchors"]}
