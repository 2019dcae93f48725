"""The evidence plugin turns another repository's ordinary pytest suite into G3/G4 evidence.

Each test builds a throwaway host repository (git, a tiny torch package, allclose tests
that use `record_metric` and the `design_gates` marker; no design-gates code in it), runs
pytest there in a fresh process and reads the artifact it wrote, or runs gate-check
--run-suites on a record of that repository.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gates
from gates.checks.runner import check_records
from gates.evidence.artifacts import parse_artifact, sha256_bytes
from gates.evidence.evidence_collector import EvidenceCollector, worst_direction
from gates.model.findings import Status

DESIGN_GATES_ROOT = Path(gates.__file__).resolve().parents[1]
PLUGIN_ARGS = ["-p", "no:design_gates_evidence", "-p", "gates.evidence.evidence_plugin"]

OPS = '''\
import torch


def scaled_sum(x: torch.Tensor, scale: float) -> torch.Tensor:
    """Row sums of x * scale, accumulated in float32."""
    return (x.float() * scale).sum(dim=-1).to(x.dtype)
'''

NUMERIC_TESTS = '''\
import pytest
import torch

from tinyops import scaled_sum


@pytest.mark.design_gates(kind="numeric")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_scaled_sum_matches_fp64(dtype, record_metric):
    torch.manual_seed(0)
    x = torch.randn(8, 257, dtype=dtype)
    out, ref = scaled_sum(x, 0.5).double(), (x.double() * 0.5).sum(dim=-1)
    record_metric("rel_l2", ((out - ref).norm() / ref.norm()).item(), dtype=dtype)
    record_metric("max_abs", (out - ref).abs().max(), dtype=dtype)
    record_metric("min_cosine", torch.nn.functional.cosine_similarity(out, ref, dim=0), dtype=dtype)
    torch.testing.assert_close(out, ref, rtol=2e-2, atol=2e-2)
'''

BITWISE_TESTS = '''\
import pytest
import torch

from tinyops import scaled_sum


@pytest.mark.design_gates(kind="bitwise", anchor="A1-batch-equals-alone")
def test_a_row_alone_equals_the_row_in_its_batch():
    x = torch.randn(4, 65, generator=torch.Generator().manual_seed(1))
    assert torch.equal(scaled_sum(x, 2.0)[2:3], scaled_sum(x[2:3], 2.0))


def test_run_to_run(record_anchor, record_fingerprint):
    x = torch.randn(4, 65, generator=torch.Generator().manual_seed(2))
    first, second = scaled_sum(x, 2.0), scaled_sum(x, 2.0)
    record_anchor("A2-run-to-run", torch.equal(first, second), cases=4)
    record_fingerprint("scaled-sum-4x65", first)
'''

RECORD = '''\
---
schema_version: 1
id: tinyops-scaled-sum
title: Scaled row sums
risk: L2
record_status: in-review
stage: B
lang: en
authors:
  - {name: Ada Author, email: ada@example.com}
reviewers:
  - {name: Rex Reviewer, email: rex@example.com, decision: pending}
covers: ["tinyops/**"]
questions: []
unknowns: []
numeric_contract:
  oracle: torch.float64
  suite: tests/test_ops.py
  tolerances:
    - {metric: rel_l2, dtype: fp32, max: 1.0e-6}
    - {metric: rel_l2, dtype: bf16, max: 1.0e-2}
    - {metric: min_cosine, dtype: bf16, min: 0.999}
bitwise:
  suite: tests/test_bitwise.py
  anchors:
    - {id: A1, check: "a row alone == the same row in its batch"}
    - {id: A2, check: "two identical calls give the same bytes"}
claim_level: kernel
evidence: []
independence: {defect: false}
self_check: {G0: pass, G1: pass, G2: pass, G3: pass, G4: pass, G5: pass, G6: pass, G7: pass, G8: pass}
---

# Scaled row sums
'''


def git(host: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=host, check=True, capture_output=True, text=True,
                          env=dict(os.environ, GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.com",
                                   GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.com"))
    return done.stdout.strip()


def make_host(root: Path, files: dict[str, str]) -> Path:
    """A git repository holding `files`, committed."""
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tiny ops")
    return root


@pytest.fixture
def host(tmp_path) -> Path:
    return make_host(tmp_path / "host", {"tinyops/__init__.py": OPS, "tests/test_ops.py": NUMERIC_TESTS,
                                         "tests/test_bitwise.py": BITWISE_TESTS})


def run_pytest(host: Path, out: Path | None, *args: str, covers=("tinyops/**",), **env) -> tuple[list[str], str]:
    """Run pytest in `host` in a fresh process; (the command, its output)."""
    environ = {key: value for key, value in os.environ.items()
               if not key.startswith("DESIGN_GATES_") and key != "PYTEST_ADDOPTS"}
    environ["PYTHONPATH"] = os.pathsep.join([str(DESIGN_GATES_ROOT), environ.get("PYTHONPATH", "")])
    if out is not None:
        environ["DESIGN_GATES_EVIDENCE_OUT"] = str(out)
    environ["DESIGN_GATES_COVERS"] = json.dumps(list(covers))
    environ.update(env)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGIN_ARGS, *args]
    done = subprocess.run(command, cwd=host, env=environ, capture_output=True, text=True, timeout=120)
    return command, done.stdout + done.stderr


def artifact(path: Path) -> dict:
    data, _ = parse_artifact(path.read_bytes(), str(path))  # schema-checked
    return data


def test_an_allclose_suite_writes_numeric_and_bitwise_evidence_bound_to_the_host(host, tmp_path):
    out = tmp_path / "evidence.json"
    command, output = run_pytest(host, out, "tests")
    numeric, bitwise = artifact(tmp_path / "evidence-numeric.json"), artifact(tmp_path / "evidence-bitwise.json")

    assert numeric["kind"] == "numeric" and numeric["results"]["passed"] is True, output
    assert numeric["commit"] == git(host, "rev-parse", "HEAD")
    assert numeric["command"] == shlex.join(command)
    assert numeric["environment"]["backend"] == "cpu" and numeric["environment"]["torch"]
    for rel in ("tinyops/__init__.py", "tests/test_ops.py"):
        assert numeric["sources"][rel] == sha256_bytes((host / rel).read_bytes())
    per_dtype = numeric["results"]["per_dtype"]
    assert set(per_dtype) == {"fp32", "bf16"} and per_dtype["bf16"]["cases"] == 1
    assert 0 < per_dtype["fp32"]["rel_l2"] < per_dtype["bf16"]["rel_l2"] < 1e-2
    assert 0.999 < per_dtype["bf16"]["min_cosine"] <= 1.0

    assert bitwise["results"]["passed"] is True, output
    assert bitwise["results"]["anchors"] == {"A1-batch-equals-alone": {"passed": True, "cases": 1},
                                             "A2-run-to-run": {"passed": True, "cases": 4}}
    assert bitwise["results"]["backend"] == "cpu"
    assert list(bitwise["results"]["fingerprints"]) == ["scaled-sum-4x65"]


def test_a_failing_marked_test_makes_the_artifact_not_passed(host, tmp_path):
    ops = host / "tinyops" / "__init__.py"
    ops.write_text(OPS.replace("(x.float() * scale)", "(x.float() * scale * 1.1)"), encoding="utf-8")
    out = tmp_path / "evidence.json"
    run_pytest(host, out, "tests/test_ops.py")
    results = artifact(out)["results"]
    assert results["passed"] is False
    assert results["tests"]["tests/test_ops.py::test_scaled_sum_matches_fp64[fp32]"] == "failed"
    assert "the session did not pass (pytest exit 1)" in results["errors"]
    assert artifact(out)["sources"]["tinyops/__init__.py"] == sha256_bytes(ops.read_bytes())


PLAIN_OPS = "def double(x):\n    return 2 * x\n"


@pytest.mark.parametrize("tests, error", [
    ("from plainops import double\n\ndef test_double():\n    assert double(2) == 4\n",
     "no test marked @pytest.mark.design_gates(kind='numeric') or recording numeric evidence ran"),
    ("import pytest\n\n@pytest.mark.design_gates(kind='numeric')\ndef test_double():\n    assert 2 * 2 == 4\n",
     "no metric was recorded (use the record_metric fixture)"),
    ("import pytest\n\n@pytest.mark.design_gates(kind='numeric')\ndef test_later():\n    pytest.skip('no GPU')\n",
     "numeric test tests/test_plain.py::test_later skipped"),
    ("import pytest\n\n@pytest.mark.design_gates(kind='numerc')\ndef test_typo():\n    pass\n",
     "tests/test_plain.py::test_typo: @pytest.mark.design_gates: kind must be 'numeric' or 'bitwise', got 'numerc'"),
], ids=["no-marked-test", "no-metric", "skipped", "bad-marker"])
def test_a_suite_that_measures_nothing_writes_an_error_artifact(tmp_path, tests, error):
    host = make_host(tmp_path / "plain", {"plainops/__init__.py": PLAIN_OPS, "tests/test_plain.py": tests})
    out = tmp_path / "evidence.json"
    _, output = run_pytest(host, out, "tests", covers=["plainops/**"])
    results = artifact(out)["results"]
    assert results["passed"] is False, output
    assert error in results["errors"]


def test_a_covers_glob_that_matches_nothing_is_an_error(tmp_path):
    tests = ("import pytest\n\n@pytest.mark.design_gates(kind='numeric')\ndef test_d(record_metric):\n"
             "    record_metric('max_abs', 0.0, dtype='fp32')\n")
    host = make_host(tmp_path / "plain", {"plainops/__init__.py": PLAIN_OPS, "tests/test_plain.py": tests})
    out = tmp_path / "evidence.json"
    run_pytest(host, out, "tests", covers=["plainops/**", "kernels/**"])
    results = artifact(out)["results"]
    assert results["errors"] == [f"covers glob 'kernels/**' matches no file under {host.resolve()}"]
    assert results["passed"] is False


def test_without_an_output_path_the_plugin_writes_nothing(tmp_path):
    tests = "import pytest\n\n@pytest.mark.design_gates(kind='numeric')\ndef test_d():\n    pass\n"
    host = make_host(tmp_path / "plain", {"tests/test_plain.py": tests})
    _, output = run_pytest(host, None, "tests", covers=[])
    assert "1 passed" in output and "design-gates evidence" not in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


def test_gate_check_run_suites_judges_the_hosts_suite(host, capsys):
    from gates.frontends.cli import main

    design = host / "docs" / "design"
    design.mkdir(parents=True)
    (design / "tinyops-scaled-sum.md").write_text(RECORD, encoding="utf-8")
    (design / "tinyops-too-tight.md").write_text(
        RECORD.replace("id: tinyops-scaled-sum", "id: tinyops-too-tight")
              .replace("dtype: bf16, max: 1.0e-2}", "dtype: bf16, max: 1.0e-9}"), encoding="utf-8")
    code = main([str(design), "--repo-root", str(host), "--gate", "G3,G4", "--run-suites", "--suite-timeout", "120",
                 "--format", "json"])  # one run per suite and kind, shared by both records
    report = {record["id"]: record["gates"] for record in json.loads(capsys.readouterr().out)["records"]}
    passing, too_tight = report["tinyops-scaled-sum"], report["tinyops-too-tight"]
    assert (passing["G3"]["status"], passing["G4"]["status"]) == ("pass", "pass"), passing
    assert too_tight["G3"]["status"] == "fail" and code == 1
    message = too_tight["G3"]["findings"][0]["message"]
    assert "bf16 rel_l2 = " in message and "exceeds the declared max 1e-09 (the run of tests/test_ops.py)" in message


def test_the_worst_value_is_kept_per_metric_and_dtype():
    collector = EvidenceCollector()
    for case, (rel_l2, cosine) in enumerate([(1e-3, 0.9999), (4e-3, 0.9990), (2e-3, 0.9995)]):
        collector.record_metric("rel_l2", rel_l2, dtype="bf16", case=str(case))
        collector.record_metric("min_cosine", cosine, dtype="bf16", case=str(case))
    collector.measuring("t", "numeric")
    collector.outcome("t", "call", "passed")
    results = collector.results("numeric", 0, "cpu")
    assert results["per_dtype"] == {"bf16": {"min_cosine": 0.9990, "rel_l2": 4e-3, "cases": 3}}
    assert results["passed"] is True


def test_a_nan_metric_and_a_metric_of_unknown_direction_are_refused():
    collector = EvidenceCollector()
    collector.record_metric("rel_l2", float("nan"), dtype="fp16", case="c")
    collector.measuring("t", "numeric")
    collector.outcome("t", "call", "passed")
    results = collector.results("numeric", 0, "cpu")
    assert results["passed"] is False and "metric rel_l2 for fp16 is nan in c" in results["errors"]
    assert "rel_l2" not in results["per_dtype"]["fp16"]
    assert not any("nan" in error for error in collector.results("bitwise", 0, "cpu")["errors"])
    with pytest.raises(ValueError, match="name it min_... or max_..., or pass worst="):
        worst_direction("snr_db")
    assert worst_direction("snr_db", worst="min") == "min"


def test_installed_through_its_entry_point_the_plugin_needs_no_option(tmp_path, monkeypatch):
    (entry,) = [line for line in (DESIGN_GATES_ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines()
                if line.startswith("design_gates_evidence = ")]
    dist = tmp_path / "site" / "design_gates_installed-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: design-gates-installed\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[pytest11]\n{entry.replace(chr(34), '')}\n")
    tests = ("import pytest\nfrom plainops import double\n\n@pytest.mark.design_gates(kind='numeric')\n"
             "def test_double(record_metric):\n    record_metric('max_abs', abs(double(0.5) - 1.0), dtype='fp32')\n")
    host = make_host(tmp_path / "plain", {"plainops/__init__.py": PLAIN_OPS, "tests/test_plain.py": tests})
    path = os.pathsep.join([str(DESIGN_GATES_ROOT), str(tmp_path / "site")])
    environ = dict(os.environ, PYTHONPATH=path, DESIGN_GATES_EVIDENCE_OUT=str(tmp_path / "evidence.json"),
                   DESIGN_GATES_COVERS='["plainops/**"]')
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=host,
                          env=environ, capture_output=True, text=True, timeout=120)
    assert artifact(tmp_path / "evidence.json")["results"]["passed"] is True, done.stdout + done.stderr

    from gates.evidence.suite_run import run_suite

    monkeypatch.setenv("PYTHONPATH", path)
    run = run_suite("tests", host, 120, ["plainops/**"], "numeric")  # gate-check's own copy, not twice
    assert (run.returncode, run.problem, run.data["results"]["passed"]) == (0, None, True), run.output_tail
    assert "warning" not in run.output_tail


HIDING_INIT = '''\
import tinyops

_exact = tinyops.scaled_sum
tinyops.scaled_sum = lambda x, scale: _exact(x, scale)  # code that runs inside the judge
del __file__  # and would drop out of a scan of sys.modules at the end of the run
'''


def test_a_module_that_deletes_its_file_attribute_is_still_bound(tmp_path):
    host = make_host(tmp_path / "host", {"tinyops/__init__.py": OPS, "tests/__init__.py": HIDING_INIT,
                                         "tests/test_ops.py": NUMERIC_TESTS})
    out = tmp_path / "evidence.json"
    _, output = run_pytest(host, out, "tests", DESIGN_GATES_EVIDENCE_KIND="numeric")
    sources = artifact(out)["sources"]
    assert sources.get("tests/__init__.py") == sha256_bytes((host / "tests/__init__.py").read_bytes()), output


def test_the_import_recorder_notes_a_file_before_the_module_runs(tmp_path, monkeypatch):
    from gates.evidence.import_origins import record_import_origins, recorded_origins

    (tmp_path / "vanishing_mod.py").write_text("del __file__\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    record_import_origins()
    import vanishing_mod  # noqa: F401

    assert not hasattr(vanishing_mod, "__file__")
    assert str(tmp_path / "vanishing_mod.py") in recorded_origins()


def test_the_metric_not_the_test_says_which_end_is_worst():
    collector = EvidenceCollector()
    with pytest.raises(ValueError, match="its worst value is its largest .*worst='min' would keep its best case"):
        collector.record_metric("rel_l2", 1e-3, dtype="bf16", case="c", worst="min")
    with pytest.raises(ValueError, match="its worst value is its smallest"):
        collector.record_metric("min_cosine", 0.99, dtype="bf16", case="c", worst="max")
    collector.record_metric("rel_l2", 1e-3, dtype="bf16", case="c", worst="max")  # saying what it is: fine
    collector.record_metric("snr_db", 40.0, dtype="bf16", case="c", worst="min")  # a name that says neither
    collector.measuring("t", "numeric")
    collector.outcome("t", "call", "passed")
    assert collector.results("numeric", 0, "cpu")["worst_of"] == {"rel_l2": "max", "snr_db": "min"}
