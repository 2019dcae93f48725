"""The G3/G4 suites themselves, run as CI runs them: the whole numeric and bitwise matrix
(through the Triton interpreter without a GPU), each writing its evidence artifact."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("suite", ["numeric", "bitwise"])
def test_full_suite_passes_and_its_artifact_says_so(suite, tmp_path):
    out = tmp_path / f"{suite}-matrix.json"
    done = subprocess.run(
        [sys.executable, "-m", "validation.run_suite", suite, "--out", str(out), "--", "-rfE"],
        cwd=REPO, capture_output=True, text=True, timeout=1800,
    )
    assert done.returncode == 0, f"validation/suites/test_{suite}.py failed:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    results = json.loads(out.read_text())["results"]
    assert results["passed"] is True
    if suite == "numeric":
        assert set(results["per_dtype"]) == {"bf16", "fp16"}
    else:
        assert {"A1", "A2", "A3", "A4"} <= {key.split("-")[0] for key in results["anchors"]}
