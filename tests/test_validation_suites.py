"""The G3/G4 suites themselves, run as CI runs them: the whole numeric and bitwise matrix
(through the Triton interpreter without a GPU), each writing its evidence artifact.

Both suites start together, in their own processes, when the first of these tests runs,
so that they share the machine's cores instead of running one after the other.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SUITES = ("numeric", "bitwise")
TIMEOUT_S = 1800


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory):
    """suite name -> (the running `validation.run_suite` process, its artifact path, its output file)."""
    out_dir = tmp_path_factory.mktemp("suites")
    runs = {}
    for suite in SUITES:
        out, log = out_dir / f"{suite}-matrix.json", out_dir / f"{suite}.log"
        with open(log, "w", encoding="utf-8") as handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "validation.run_suite", suite, "--out", str(out), "--", "-rfE"],
                cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
        runs[suite] = (process, out, log)
    yield runs
    for process, _, _ in runs.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("suite", SUITES)
def test_full_suite_passes_and_its_artifact_says_so(suite, suite_runs):
    process, out, log = suite_runs[suite]
    try:
        process.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"validation/suites/test_{suite}.py did not finish in {TIMEOUT_S} s:\n{log.read_text()[-3000:]}")
    assert process.returncode == 0, f"validation/suites/test_{suite}.py failed:\n{log.read_text()[-8000:]}"
    results = json.loads(out.read_text())["results"]
    assert results["passed"] is True
    if suite == "numeric":
        assert set(results["per_dtype"]) == {"bf16", "fp16", "bf16-int8", "bf16-fp8", "fp16-int8", "fp16-fp8"}
    else:
        assert {"A1", "A2", "A3", "A4"} <= {key.split("-")[0] for key in results["anchors"]}
