"""The suite a record declares is the suite its evidence ran.

G3 and G4 judge a change by the results of `numeric_contract.suite` / `bitwise.suite`; the
edits that judge the change are looked for along that suite. So the artifact must show that
the declared suite ran: its measuring tests (`results.tests`) lie in the declared suite, else its
command names the suite (or a folder holding it), else (a runner module that names no path) it
binds the suite as a test module. The repository is a copy of the golden examples.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from gates.evidence.artifacts import file_sha256
from gates.model.findings import Status

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G3/positive/numeric-within-tolerance.md"
NODE = "suites/suite_numeric.py::test_split_sum_within_tolerance_of_fp64_oracle"


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def declare_suite(repo: Path, section: str, suite: str) -> None:
    record = repo / RECORD
    text = record.read_text(encoding="utf-8")
    old = {"numeric_contract": "suite: suites/suite_numeric.py", "bitwise": "suite: suites/suite_bitwise.py"}[section]
    assert old in text
    record.write_text(text.replace(old, f"suite: {suite}"), encoding="utf-8")


def rewrite_artifact(repo: Path, evidence_id: str, change) -> None:
    """Change what an artifact says ran, and re-pin it in the record (so only the rule under test fails)."""
    path = repo / "evidence" / f"{evidence_id}.json"
    old_pin = file_sha256(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    record = repo / RECORD
    record.write_text(record.read_text(encoding="utf-8").replace(old_pin, file_sha256(path)), encoding="utf-8")


def list_tests(*nodeids: str):
    def change(data):
        data["results"]["tests"] = {nodeid: "passed" for nodeid in nodeids}
    return change


def gate(repo: Path, name: str):
    report = check_records([repo / RECORD], repo, gates=[name])
    assert not report.input_errors, report.input_errors
    return report.records[0].gates[name]


def messages(result) -> str:
    return "\n".join(f.message for f in result.findings)


def test_the_examples_evidence_shows_the_declared_suites(repo):
    assert gate(repo, "G3").status is Status.PASS
    assert gate(repo, "G4").status is Status.PASS


def test_a_declared_suite_that_is_not_what_the_command_ran_fails(repo):
    declare_suite(repo, "numeric_contract", "suites/cases.py")
    result = gate(repo, "G3")
    assert result.status is Status.FAIL
    assert ("evidence 'numeric-cpu' does not show that the declared suite suites/cases.py ran: its command "
            "(python -m pytest suites/suite_numeric.py) ran suites/suite_numeric.py") in messages(result)


def test_a_declared_bitwise_suite_that_is_not_what_ran_fails_g4(repo):
    declare_suite(repo, "bitwise", "examplepkg/ops.py")
    assert ("evidence 'bitwise-cpu' does not show that the declared suite examplepkg/ops.py ran: its command "
            "(python -m pytest suites/suite_bitwise.py) ran suites/suite_bitwise.py") in messages(gate(repo, "G4"))


def test_measuring_tests_in_another_file_than_the_declared_suite_fail(repo):
    rewrite_artifact(repo, "numeric-cpu", list_tests("tests/test_rows.py::test_sum[4]"))
    result = gate(repo, "G3")
    assert result.status is Status.FAIL
    assert ("evidence 'numeric-cpu' does not show that the declared suite suites/suite_numeric.py ran: the "
            "measuring tests it lists ran tests/test_rows.py") in messages(result)


def test_measuring_tests_outside_the_declared_suite_as_well_fail(repo):
    rewrite_artifact(repo, "numeric-cpu", list_tests(f"{NODE}[1]", "suites/suite_extra.py::test_more"))
    assert ("evidence 'numeric-cpu' lists measuring tests outside the declared suite suites/suite_numeric.py: "
            "suites/suite_extra.py") in messages(gate(repo, "G3"))


def test_measuring_tests_of_the_declared_suite_pass(repo):
    rewrite_artifact(repo, "numeric-cpu", list_tests(f"{NODE}[1]", f"{NODE}[4]"))
    assert gate(repo, "G3").status is Status.PASS


def test_node_ids_relative_to_a_rootdir_below_the_repository_resolve_to_the_bound_suite(repo):
    rewrite_artifact(repo, "numeric-cpu", list_tests("suite_numeric.py::test_split_sum_within_tolerance_of_fp64_oracle[1]"))
    assert gate(repo, "G3").status is Status.PASS


def test_a_runner_module_that_names_no_path_shows_the_test_modules_it_binds(repo):
    def run_by_module(data):
        data["command"] = "python -m examplepkg.runner numeric"
        data["sources"]["suites/test_numeric.py"] = data["sources"].pop("suites/suite_numeric.py")
    shutil.move(repo / "suites" / "suite_numeric.py", repo / "suites" / "test_numeric.py")
    rewrite_artifact(repo, "numeric-cpu", run_by_module)
    declare_suite(repo, "numeric_contract", "suites/test_numeric.py")
    assert gate(repo, "G3").status is Status.PASS
    record = repo / RECORD
    record.write_text(record.read_text(encoding="utf-8").replace("suite: suites/test_numeric.py", "suite: suites/cases.py"),
                      encoding="utf-8")
    assert ("evidence 'numeric-cpu' does not show that the declared suite suites/cases.py ran: the test modules it "
            "binds (its command names no test path) are suites/test_numeric.py") in messages(gate(repo, "G3"))


def test_a_declared_suite_folder_holding_the_suite_that_ran_passes(repo):
    rewrite_artifact(repo, "numeric-cpu", lambda data: data.update(command="python -m pytest suites"))
    declare_suite(repo, "numeric_contract", "suites")
    assert gate(repo, "G3").status is Status.PASS
