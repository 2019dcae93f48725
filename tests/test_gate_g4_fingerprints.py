"""G4: anchors that compared nothing, fingerprint files that are not files, and changes judged against base.

The repositories are copies of the golden example repository (tests/examples):
its bitwise artifact produces `splits1` (unchanged) and `splits4` (changed on
purpose; question Q3 accepts that one new value). For `--base` the copy is committed on main and
the change is made on a branch, the way a pull request is.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from gates.history.git_repo import load_change_set
from gates.model.findings import Status
from gitrepo_builder import ADA, MAX, GitRepo

EXAMPLES = Path(__file__).parent / "examples"
ACCEPTED = "G4/positive/accepted-fingerprint-change.md"
UNDECLARED = "G4/negative/fingerprint-change-undeclared.md"
WITHOUT_VALUE = "G4/negative/fingerprint-acceptance-without-value.md"
RECORD = "docs/design/split-sums.md"


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def g4(repo: Path, record: str, change=None):
    report = check_records([repo / record], repo, gates=["G4"], change=change)
    assert not report.input_errors, report.input_errors
    result = report.records[0].gates["G4"]
    return result, "\n".join(f.format_text() for f in result.findings)


def g4_of_change(repo: Path, record: str, change):
    """`g4` with `--base` (the change set of `branch_with`), closing the change set afterwards."""
    try:
        return g4(repo, record, change)
    finally:
        change.close()


def rewrite_bitwise(repo: Path, record: str, change) -> None:
    """Edit evidence/bitwise-cpu.json with `change(results)` and pin `record` to the new bytes."""
    artifact = repo / "evidence" / "bitwise-cpu.json"
    data = json.loads(artifact.read_text(encoding="utf-8"))
    change(data["results"])
    artifact.write_text(json.dumps(data, indent=2), encoding="utf-8")
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    text = re.sub(r"(id: bitwise-cpu, path: evidence/bitwise-cpu\.json, sha256: )[0-9a-f]{64}", rf"\g<1>{digest}",
                  (repo / record).read_text(encoding="utf-8"))
    (repo / record).write_text(text, encoding="utf-8")


def produced(repo: Path) -> dict:
    return json.loads((repo / "evidence" / "bitwise-cpu.json").read_text(encoding="utf-8"))["results"]["fingerprints"]


def test_an_anchor_that_compared_no_cases_fails(repo):
    rewrite_bitwise(repo, ACCEPTED, lambda r: r["anchors"]["A1-splits1-vs-single-pass"].update(cases=0))
    result, text = g4(repo, ACCEPTED)
    assert result.status is Status.FAIL
    assert "anchor A1-splits1-vs-single-pass in evidence 'bitwise-cpu' compared no outputs (cases = 0)" in text


def test_an_anchor_without_a_case_count_fails(repo):
    rewrite_bitwise(repo, ACCEPTED, lambda r: r["anchors"]["A1-splits1-vs-single-pass"].pop("cases"))
    result, text = g4(repo, ACCEPTED)
    assert result.status is Status.FAIL
    assert "compared no outputs (cases = None)" in text


def test_an_anchor_the_record_does_not_declare_is_a_warning(repo):
    rewrite_bitwise(repo, ACCEPTED, lambda r: r["anchors"].update({"A7-extra": {"passed": True, "cases": 3}}))
    result, text = g4(repo, ACCEPTED)
    assert result.status is Status.PASS
    assert "G4 warning: evidence 'bitwise-cpu' reports anchor A7-extra, which this record does not declare" in text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_as_the_fingerprint_file_is_an_error_not_a_hang(repo):
    (repo / "fingerprints.json").unlink()
    os.mkfifo(repo / "fingerprints.json")
    result, text = g4(repo, ACCEPTED)
    assert result.status is Status.FAIL
    assert "fingerprint file fingerprints.json is not a regular file" in text


def test_a_fingerprint_file_outside_the_repository_is_refused(repo, tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text((repo / "fingerprints.json").read_text(encoding="utf-8"), encoding="utf-8")
    (repo / "fingerprints.json").unlink()
    (repo / "fingerprints.json").symlink_to(outside)
    result, text = g4(repo, ACCEPTED)
    assert result.status is Status.FAIL
    assert "fingerprint file fingerprints.json leads outside the repository" in text


def branch_with(repo_root: Path, record_source: str, *, edit_fingerprints=None, edit_record=None):
    """main: the example repository with `record_source` as docs/design/split-sums.md;
    branch `change`: the edits, committed by the record's author. Returns the ChangeSet."""
    repo = GitRepo(repo_root)
    repo.write(RECORD, (repo_root / record_source).read_text(encoding="utf-8"))
    repo.commit("Seed the examples", who=MAX)
    repo.branch("change")
    if edit_fingerprints is not None:
        data = json.loads(repo.read("fingerprints.json"))
        edit_fingerprints(data)
        repo.write("fingerprints.json", json.dumps(data, indent=2) + "\n")
    if edit_record is not None:
        repo.write(RECORD, edit_record(repo.read(RECORD)))
    repo.commit("Re-record the fingerprints", who=ADA)
    return load_change_set(repo_root, "main", "HEAD")


def record_artifact(repo: Path):
    """Make the committed file hold what the artifact produced."""
    return lambda data: data["cpu"].update(produced(repo))


def test_a_fingerprint_re_recorded_in_the_change_fails_with_base(repo):
    change = branch_with(repo, UNDECLARED, edit_fingerprints=record_artifact(repo))
    try:
        assert g4(repo, RECORD)[0].status is Status.PASS  # without --base the re-recorded file looks unchanged
        result, text = g4(repo, RECORD, change)
    finally:
        change.close()
    assert result.status is Status.FAIL
    assert "fingerprint cpu/splits4 in fingerprints.json changed since the merge base" in text
    assert "no accepted question allows it" in text
    assert "splits1" not in text


def test_a_re_recorded_fingerprint_with_an_accepted_question_passes_with_base(repo):
    change = branch_with(repo, ACCEPTED, edit_fingerprints=record_artifact(repo))
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.PASS, text


def test_a_rejected_question_does_not_allow_the_change_with_base(repo):
    reject = lambda text: text.replace("stays within tolerance., decision: accepted", "stays within tolerance., decision: rejected")
    change = branch_with(repo, ACCEPTED, edit_fingerprints=record_artifact(repo), edit_record=reject)
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL
    assert "fingerprint cpu/splits4 changed; it is listed under question Q3, whose decision is rejected" in text


def test_with_base_the_committed_file_must_hold_the_artifact_s_fingerprints(repo):
    change = branch_with(repo, ACCEPTED)
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL
    assert "fingerprint cpu/splits4 from evidence 'bitwise-cpu'" in text
    assert "the committed file must hold the judged artifact's fingerprints" in text


def test_a_backend_removed_in_the_change_fails_with_base(repo):
    (repo / "fingerprints.json").write_text(json.dumps({"cpu": produced(repo), "cuda": {"splits1": "ab" * 32}}),
                                            encoding="utf-8")
    change = branch_with(repo, ACCEPTED, edit_fingerprints=lambda data: data.pop("cuda"))
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL
    assert "fingerprint cuda/splits1 was removed from fingerprints.json since the merge base" in text


def test_a_fingerprint_file_moved_by_the_record_is_judged_against_the_old_one(repo):
    def move(data):
        data["cpu"].update(produced(repo))
        (repo / "fingerprints-new.json").write_text(json.dumps(data), encoding="utf-8")
    change = branch_with(repo, UNDECLARED, edit_fingerprints=move,
                         edit_record=lambda text: text.replace("path: fingerprints.json", "path: fingerprints-new.json"))
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL
    assert "fingerprint cpu/splits4 in fingerprints-new.json (at the merge base fingerprints.json) changed" in text


def test_an_acceptance_holds_for_the_value_it_names_only(repo):
    """An earlier accepted change of splits4 is on main; the change alters splits4 again."""
    (repo / "fingerprints.json").write_text(json.dumps({"cpu": produced(repo)}), encoding="utf-8")
    again = "ab" * 32
    rewrite_bitwise(repo, ACCEPTED, lambda r: r["fingerprints"].update(splits4=again))
    change = branch_with(repo, ACCEPTED, edit_fingerprints=record_artifact(repo))
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL
    assert (f"fingerprint cpu/splits4 changed (342509638fb9… → abababababab…); the accepted change under "
            f"question Q3 is for 342509638fb9…, not for the new value {again}") in text


def test_a_second_decision_naming_the_new_value_accepts_it(repo):
    (repo / "fingerprints.json").write_text(json.dumps({"cpu": produced(repo)}), encoding="utf-8")
    again = "ab" * 32
    rewrite_bitwise(repo, ACCEPTED, lambda r: r["fingerprints"].update(splits4=again))

    def decide_again(text):
        text = text.replace("unknowns:", "  - {id: Q5, question: Accept splits4 again?, recommendation: Accept., "
                            "decision: accepted, blast_radius: high}\nunknowns:", 1)
        return re.sub(r"(      - \{key: splits4, question: Q3, [^}]*\}\n)",
                      rf"\g<1>      - {{key: splits4, question: Q5, to: {again}}}\n", text)
    change = branch_with(repo, ACCEPTED, edit_fingerprints=record_artifact(repo), edit_record=decide_again)
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.PASS, text


def test_an_accepted_change_that_names_no_value_accepts_nothing(repo):
    new = produced(repo)["splits4"]
    result, text = g4(repo, WITHOUT_VALUE)
    assert result.status is Status.FAIL
    assert ("fingerprint cpu/splits4 changed (e430bc28c7df… → 342509638fb9…); the accepted change under "
            "question Q3 names no value (`to:`), and an acceptance holds for one value only: review the new value "
            f"and name it: `to: {new}`") in text
    change = branch_with(repo, WITHOUT_VALUE, edit_fingerprints=record_artifact(repo))
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL and f"`to: {new}`" in text


def test_an_accepted_change_from_another_value_does_not_match(repo):
    other = "cd" * 32
    wrong_from = lambda text: re.sub(r"from: [0-9a-f]{64}", f"from: {other}", text)
    change = branch_with(repo, ACCEPTED, edit_fingerprints=record_artifact(repo), edit_record=wrong_from)
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.FAIL
    assert ("the accepted change under question Q3 is from cdcdcdcdcdcd…, but the value before is "
            "e430bc28c7df…") in text


def test_a_removed_fingerprint_is_accepted_as_removed(repo):
    (repo / "fingerprints.json").write_text(json.dumps({"cpu": produced(repo), "cuda": {"splits1": "ab" * 32}}),
                                            encoding="utf-8")
    remove = lambda text: re.sub(r"(      - \{key: splits4, question: Q3, [^}]*\}\n)",
                                 r"\g<1>      - {key: cuda/splits1, question: Q3, to: removed}\n", text)
    change = branch_with(repo, ACCEPTED, edit_fingerprints=lambda data: data.pop("cuda"), edit_record=remove)
    result, text = g4_of_change(repo, RECORD, change)
    assert result.status is Status.PASS, text


def test_an_accepted_value_that_is_not_a_sha256_is_a_form_error(repo):
    record = repo / ACCEPTED
    record.write_text(re.sub(r"to: [0-9a-f]{64}", "to: 342509638fb9", record.read_text(encoding="utf-8")),
                      encoding="utf-8")
    report = check_records([record], repo, gates=["G0"])
    messages = [f.message for f in report.records[0].gates["G0"].findings] + [e.message for e in report.input_errors]
    assert any("342509638fb9" in m for m in messages), messages
