"""G3 and G4 accept only evidence of the whole declared suite.

A run that deselects some of the suite's measuring tests (`-k`, `addopts` in the pytest
configuration, node ids of the passing cases) is not evidence that the suite passes. An artifact
from a current writer records what pytest collected, deselected and ran (`results.collection`);
one without that record is read for what its command and the pytest configuration show. The
repository is a copy of the golden examples, whose numeric evidence ran `python -m pytest
suites/suite_numeric.py`.
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
SUITE = "suites/suite_numeric.py"
NODE = f"{SUITE}::test_split_sum_within_tolerance_of_fp64_oracle"


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def rewrite_artifact(repo: Path, change, evidence_id: str = "numeric-cpu") -> None:
    """Change the artifact and re-pin it in the record, so that only the rule under test can fail."""
    path = repo / "evidence" / f"{evidence_id}.json"
    old_pin = file_sha256(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    record = repo / RECORD
    record.write_text(record.read_text(encoding="utf-8").replace(old_pin, file_sha256(path)), encoding="utf-8")


def collection(**changes) -> dict:
    """A `results.collection` of a whole run of the suite, with `changes`."""
    whole = {"scheme": "pytest-collection/1", "args": [SUITE], "keyword": "", "markexpr": "", "deselect": [],
             "ignore": [], "collected": 48, "deselected": 0, "deselected_ids": [], "dropped": 0,
             "collection_errors": 0, "not_run": 0, "outcomes": {"passed": 48}}
    return dict(whole, **changes)


def recorded(**changes):
    return lambda data: data["results"].update(collection=collection(**changes))


def with_command(command: str):
    return lambda data: data.update(command=command)


def g3(repo: Path):
    report = check_records([repo / RECORD], repo, gates=["G3"])
    assert not report.input_errors, report.input_errors
    return report.records[0].gates["G3"]


def messages(result) -> str:
    return "\n".join(f.message for f in result.findings)


PARTIAL = f"evidence 'numeric-cpu' does not show the whole declared suite {SUITE} ran: "


# --- evidence that records what pytest collected ---------------------------------------------------

def test_a_recorded_whole_run_of_the_suite_passes(repo):
    rewrite_artifact(repo, recorded())
    assert g3(repo).status is Status.PASS


def test_a_recorded_run_of_a_folder_holding_the_suite_passes(repo):
    rewrite_artifact(repo, recorded(args=["suites"]))
    assert g3(repo).status is Status.PASS


def test_a_recorded_run_that_skipped_a_case_passes(repo):
    rewrite_artifact(repo, recorded(outcomes={"passed": 47, "skipped": 1}))
    assert g3(repo).status is Status.PASS


def test_deselecting_cases_with_k_fails(repo):
    rewrite_artifact(repo, recorded(keyword="not 7", deselected=1, deselected_ids=[f"{NODE}[7]"]))
    result = g3(repo)
    assert result.status is Status.FAIL
    assert (PARTIAL + f"pytest deselected 1 of 48 collected tests (-k 'not 7'), e.g. {NODE}[7]; the gate judges "
            "the whole suite, so measure it without a selection") in messages(result)


def test_cases_a_conftest_deselects_fail(repo):
    rewrite_artifact(repo, recorded(deselected=24))
    assert (PARTIAL + "pytest deselected 24 of 48 collected tests (by a plugin or conftest, e.g. a tier option)"
            in messages(g3(repo)))


def test_node_ids_of_the_passing_cases_fail(repo):
    rewrite_artifact(repo, recorded(args=[f"{NODE}[1]", f"{NODE}[2]"], collected=2, outcomes={"passed": 2}))
    assert (PARTIAL + f"pytest collected from {NODE}[1], {NODE}[2], which does not hold the whole suite"
            in messages(g3(repo)))


@pytest.mark.parametrize("ignore", ["suites/suite_numeric.py", "suites", "*suite_numeric*"])
def test_ignoring_the_suite_or_a_file_of_it_fails(repo, ignore):
    rewrite_artifact(repo, recorded(args=["."], ignore=[ignore]))
    assert PARTIAL + f"the run ignored {ignore}" in messages(g3(repo))


def test_ignoring_a_file_outside_the_suite_passes(repo):
    rewrite_artifact(repo, recorded(args=["suites"], ignore=["suites/cases_slow.py"]))
    assert g3(repo).status is Status.PASS


@pytest.mark.parametrize("changes, what", [
    ({"not_run": 20, "outcomes": {"passed": 28}}, "20 selected tests never ran"),
    ({"dropped": 3}, "3 collected tests left the run without being deselected"),
    ({"collection_errors": 1}, "1 files or classes of the run failed to collect"),
    ({"collected": 0, "outcomes": {}}, "pytest collected no test"),
    ({"scheme": "mine/1"}, "has a results.collection that cannot be read (scheme 'mine/1'"),
], ids=["stopped-early", "dropped", "collection-error", "nothing", "unknown-scheme"])
def test_a_run_that_did_not_run_every_collected_test_fails(repo, changes, what):
    rewrite_artifact(repo, recorded(**changes))
    assert what in messages(g3(repo))


# --- evidence without that record: what its command and the pytest configuration show -------------

@pytest.mark.parametrize("command", [
    f"python -m pytest {SUITE} -k 'not 7'",
    f"pytest {SUITE} -qk 'not 7'",
    f"pytest {SUITE} --lf",
    f"python -m pytest {SUITE} --deselect={NODE}[7]",
    f"python -m validation.run_suite numeric --out x.json -- -m fast",
])
def test_a_command_that_selects_tests_fails(repo, command):
    rewrite_artifact(repo, with_command(command))
    assert PARTIAL + "its command selects tests" in messages(g3(repo))


def test_a_command_naming_node_ids_of_some_cases_fails(repo):
    rewrite_artifact(repo, with_command(f"python -m pytest {NODE}[1] {NODE}[2]"))
    assert PARTIAL + f"its command names node ids ({NODE}[1], {NODE}[2])" in messages(g3(repo))


@pytest.mark.parametrize("command", [
    f"python -m pytest {SUITE} -q -rfE -p no:cacheprovider",
    f"python -m suites.runner numeric --out x.json -- {SUITE} -q -rfE -p no:cacheprovider",
    f"python -m pytest -W ignore::DeprecationWarning {SUITE}",
    f"python -m pytest -x --maxfail=1 {SUITE}",
])
def test_a_command_without_a_selection_passes(repo, command):
    rewrite_artifact(repo, with_command(command))
    assert g3(repo).status is Status.PASS


@pytest.mark.parametrize("path, text", [
    ("pytest.ini", "[pytest]\naddopts = -ra -k 'not 7'\n"),
    ("suites/pytest.ini", "[pytest]\naddopts = --deselect suites/suite_numeric.py::test_a\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = [\"-m\", \"fast\"]\n"),
    ("setup.cfg", "[tool:pytest]\naddopts = --ignore suites/suite_numeric.py\n"),
])
def test_a_selection_in_the_pytest_configuration_fails(repo, path, text):
    (repo / path).write_text(text, encoding="utf-8")
    assert f"addopts in {path} selects tests" in messages(g3(repo))


def test_a_pytest_configuration_without_a_selection_passes(repo):
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -ra -q -x -p no:cacheprovider\n", encoding="utf-8")
    assert g3(repo).status is Status.PASS


# --- which end of the cases an error metric keeps --------------------------------------------------

def test_an_error_metric_kept_at_its_best_case_fails(repo):
    rewrite_artifact(repo, lambda data: data["results"].update(worst_of={"rel_l2": "min", "min_cosine": "min"}))
    result = g3(repo)
    assert result.status is Status.FAIL
    assert ("evidence 'numeric-cpu' keeps the smallest rel_l2 of its cases, but the tolerance bounds its largest "
            "(a max): that value is the best case, not the worst") in messages(result)


def test_metrics_kept_at_their_worst_case_pass(repo):
    rewrite_artifact(repo, lambda data: data["results"].update(worst_of={"rel_l2": "max", "min_cosine": "min"}))
    assert g3(repo).status is Status.PASS
