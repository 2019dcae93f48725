"""G3/G4 with --run-suites: the declared suite runs in a fresh pytest process and writes its artifact.

The suites are the small torch-free ones under tests/examples/suites/; gate-check loads its
evidence plugin into every run, and a failed run is explained (exit status, missing module).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from gates.model.findings import Status

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G3/positive/numeric-within-tolerance.md"


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def run_suites(repo: Path, record: str = RECORD, timeout: float = 120.0):
    report = check_records([repo / record], repo, gates=["G3", "G4"], run_suites=True, suite_timeout_s=timeout)
    (result,) = report.records
    return result.gates["G3"], result.gates["G4"]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def messages(result) -> str:
    return "\n".join(f.message for f in result.findings)


def test_declared_suites_pass_when_run(repo):
    g3, g4 = run_suites(repo)
    assert (g3.status, g4.status) == (Status.PASS, Status.PASS), messages(g3) + messages(g4)


def test_a_tolerance_the_run_does_not_meet_fails_g3(repo):
    edit(repo / RECORD, "max: 1.0e-6}", "max: 1.0e-8}")
    g3, _ = run_suites(repo)
    assert g3.status is Status.FAIL
    assert "fp32 rel_l2 = " in messages(g3) and "exceeds the declared max 1e-08 (the run of suites/suite_numeric.py)" in messages(g3)


def test_a_broken_anchor_fails_g4_and_the_run(repo):
    edit(repo / "examplepkg" / "ops.py", "    acc = partials[0]\n", "    acc = f32(partials[0] + 1e-7)\n")
    g3, g4 = run_suites(repo)
    assert g4.status is Status.FAIL
    assert "suite suites/suite_bitwise.py failed (pytest exit 1)" in messages(g4)
    assert "anchor A1-splits1-vs-single-pass failed in the run of suites/suite_bitwise.py" in messages(g4)


def test_a_fingerprint_change_not_accepted_fails_g4(repo):
    edit(repo / RECORD, "decision: accepted, blast_radius: high", "decision: deferred, blast_radius: high")
    _, g4 = run_suites(repo)
    assert g4.status is Status.FAIL
    assert "fingerprint cpu/splits4 changed; it is listed under question Q3, whose decision is deferred" in messages(g4)


def test_a_suite_that_measures_nothing_fails_with_the_plugins_error_artifact(repo):
    (repo / "suites" / "suite_numeric.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    (repo / "suites" / "conftest.py").unlink()
    g3, _ = run_suites(repo)
    assert g3.status is Status.FAIL
    assert ("the run of suites/suite_numeric.py reports: no test marked @pytest.mark.design_gates(kind='numeric') "
            "or recording numeric evidence ran") in messages(g3)
    assert "the run of suites/suite_numeric.py reports passed = False" in messages(g3)


def test_a_usage_error_from_the_repositorys_addopts_is_explained(repo):
    (repo / "pytest.ini").write_text("[pytest]\naddopts = --cov=examplepkg\n", encoding="utf-8")
    g3, _ = run_suites(repo)
    assert g3.status is Status.FAIL
    text = messages(g3)
    assert "suite suites/suite_numeric.py failed (pytest exit 4)" in text
    assert "pytest exit 4 is a usage error" in text and "addopts in pytest.ini" in text
    assert "--cov" in text  # pytest's own complaint, from the output tail


def test_a_suite_that_collects_no_tests_is_explained(repo):
    (repo / "suites" / "suite_numeric.py").write_text("def helper():\n    pass\n", encoding="utf-8")
    g3, _ = run_suites(repo)
    assert "suite suites/suite_numeric.py failed (pytest exit 5)" in messages(g3)
    assert "pytest exit 5: no tests were collected from suites/suite_numeric.py" in messages(g3)


def test_a_module_missing_from_the_interpreter_is_named(repo):
    (repo / "suites" / "suite_numeric.py").write_text("import not_installed_anywhere\n\ndef test_x():\n    pass\n",
                                                       encoding="utf-8")
    g3, _ = run_suites(repo)
    assert "the run could not import 'not_installed_anywhere' in " in messages(g3)


def test_missing_pytest_is_explained_and_a_passing_run_is_not():
    from gates.evidence.suite_run import explain_failure

    output = "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named 'pytest'\n"
    (note,) = explain_failure("suites/s.py", 1, output, python="/opt/py/bin/python")
    assert note.startswith("pytest is not installed in /opt/py/bin/python")
    assert explain_failure("suites/s.py", 1, "1 failed in 0.1s") == ()


def test_a_suite_past_its_time_limit_fails(repo):
    (repo / "suites" / "suite_numeric.py").write_text("import time\n\ndef test_slow():\n    time.sleep(30)\n",
                                                       encoding="utf-8")
    g3, _ = run_suites(repo, timeout=1.0)
    assert g3.status is Status.FAIL
    assert "ran past the 1 s limit" in messages(g3)


def test_static_mode_reads_the_evidence_without_running(repo, monkeypatch):
    import gates.evidence.suite_run

    monkeypatch.setattr(gates.evidence.suite_run, "run_suite", lambda *a, **k: pytest.fail("static mode ran a suite"))
    report = check_records([repo / RECORD], repo, gates=["G3"])
    assert report.records[0].gates["G3"].status is Status.PASS


def test_the_suite_that_measured_is_bound_to_the_evidence(repo):
    (repo / "suites" / "suite_numeric.py").unlink()
    report = check_records([repo / RECORD], repo, gates=["G3"])
    g3 = report.records[0].gates["G3"]
    assert g3.status is Status.FAIL
    assert "evidence 'numeric-cpu' is stale: 1 bound file changed since it was measured" in messages(g3)
    assert "(1 of them gone): suites/suite_numeric.py;" in messages(g3)


def test_the_output_tail_is_the_last_lines_whole():
    from gates.evidence.suite_run import output_tail

    text = "".join(f"line {i} says something\n" for i in range(500))
    tail = output_tail(text)
    assert tail.startswith("... (440 earlier lines left out)\nline 440 says something\n")
    assert tail.endswith("line 499 says something")
    assert output_tail("short\n") == "short"


def test_an_overlong_output_tail_keeps_whole_lines_and_words():
    from gates.evidence.suite_run import output_tail

    tail = output_tail("".join(f"line {i} says something\n" for i in range(100)), limit=100)
    assert tail.splitlines()[1] == "line 96 says something"
    assert output_tail("word " * 100, limit=30) == "... word word word word word word"
