"""G3 refuses tolerances that bound nothing, and holds records to the policy's ceilings.

The records are copies of the golden example under tests/examples (fp32, rel_l2 max
1.0e-6, min_cosine min 0.9999, measured on 48 cases); a policy written into the copy
supplies the ceilings.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from gates.checks.runner import check_records, make_context
from gates.checks.tolerance_bounds import ceilings_of, tolerance_problems
from gates.frontends.cli import main
from gates.model.findings import Status
from gates.model.policy import Policy

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G3/positive/numeric-within-tolerance.md"
POLICY = """\
schema_version: 1
rules: []
ceilings:
  tolerances:
{ceilings}
"""


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def write_policy(repo: Path, *ceilings: str) -> None:
    (repo / ".design-gates").mkdir(exist_ok=True)
    (repo / ".design-gates" / "policy.yaml").write_text(
        POLICY.format(ceilings="\n".join(f"    - {c}" for c in ceilings)), encoding="utf-8")


def g3(repo: Path):
    report = check_records([repo / RECORD], repo, gates=["G3"])
    assert not report.input_errors, report.input_errors
    return report.records[0].gates["G3"]


def messages(result) -> str:
    return "\n".join(f.format_text() for f in result.findings)


@pytest.mark.parametrize("tolerance, words", [
    ({"metric": "rel_l2", "dtype": "bf16", "max": 1.0}, "holds for an all-zero output"),
    ({"metric": "rel_l2", "dtype": "bf16", "max": float("inf")}, "max = inf is not a finite number"),
    ({"metric": "rel_l2", "dtype": "bf16", "max": float("nan")}, "max = nan is not a finite number"),
    ({"metric": "rel_l2", "dtype": "bf16", "max": 0}, "it must be > 0"),
    ({"metric": "max_abs", "dtype": "bf16", "max": -1e-3}, "it must be > 0"),
    ({"metric": "rel_l2", "dtype": "bf16", "min": 0.0}, "rel_l2 is bounded by max, not min"),
    ({"metric": "min_cosine", "dtype": "bf16", "min": -1.0}, "outside (0, 1]"),
    ({"metric": "min_cosine", "dtype": "bf16", "min": 0.0}, "outside (0, 1]"),
    ({"metric": "min_cosine", "dtype": "bf16", "min": 1.5}, "outside (0, 1]"),
    ({"metric": "min_cosine", "dtype": "bf16", "max": 1.0}, "min_cosine is bounded by min, not max"),
    ({"metric": "snr_db", "dtype": "bf16", "min": 0.0}, "does not know which way 'snr_db' improves"),
    ({"metric": "rel_l2", "dtype": "bf16", "max": 10 ** 400}, "is not a finite number"),
])
def test_a_tolerance_that_bounds_nothing_is_refused(tolerance, words):
    problems = tolerance_problems(tolerance, [], ".design-gates/policy.yaml")
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("tolerance", [
    {"metric": "rel_l2", "dtype": "bf16", "max": 1.5625e-2},
    {"metric": "max_abs", "dtype": "fp16", "max": 8},
    {"metric": "min_cosine", "dtype": "bf16", "min": 1},
])
def test_a_sound_tolerance_is_accepted(tolerance):
    assert tolerance_problems(tolerance, [], ".design-gates/policy.yaml") == []


def test_a_metric_the_policy_bounds_takes_the_ceiling_s_direction():
    policy = Policy(sections={"ceilings": {"tolerances": [{"metric": "snr_db", "min": 40}]}})
    ceilings = ceilings_of(policy)
    assert tolerance_problems({"metric": "snr_db", "dtype": "bf16", "min": 45}, ceilings, "p.yaml") == []
    assert tolerance_problems({"metric": "snr_db", "dtype": "bf16", "min": 30}, ceilings, "p.yaml") == [
        "bf16 snr_db min = 30 is looser than the ceiling snr_db ≥ 40 in p.yaml"]


def test_an_infinite_tolerance_fails_g3_at_its_line(repo):
    edit(repo / RECORD, "max: 1.0e-6}", "max: .inf}")
    result = g3(repo)
    assert result.status is Status.FAIL
    assert ":24:1: G3 error: fp32 rel_l2 max = inf is not a finite number" in messages(result)


def test_a_negative_cosine_bound_fails_g3(repo):
    edit(repo / RECORD, "min: 0.9999}", "min: -1.0}")
    result = g3(repo)
    assert result.status is Status.FAIL
    assert "fp32 min_cosine min = -1 is outside (0, 1]" in messages(result)


def test_a_tolerance_looser_than_the_ceiling_fails_naming_both_and_the_policy(repo):
    write_policy(repo, "{metric: rel_l2, dtype: fp32, max: 1.0e-6}")
    assert g3(repo).status is Status.PASS
    edit(repo / RECORD, "max: 1.0e-6}", "max: 1.0e-3}")
    result = g3(repo)
    assert result.status is Status.FAIL
    assert ("fp32 rel_l2 max = 0.001 is looser than the ceiling fp32 rel_l2 ≤ 1e-06 in .design-gates/policy.yaml"
            in messages(result))


def test_a_cosine_bound_below_the_ceiling_fails(repo):
    write_policy(repo, "{metric: min_cosine, min: 0.99999}")
    result = g3(repo)
    assert result.status is Status.FAIL
    assert "fp32 min_cosine min = 0.9999 is looser than the ceiling min_cosine ≥ 0.99999" in messages(result)


def test_a_ceiling_for_another_dtype_does_not_apply(repo):
    write_policy(repo, "{metric: rel_l2, dtype: bf16, max: 1.0e-9}")
    assert g3(repo).status is Status.PASS


def test_a_ceiling_holds_the_results_even_for_a_metric_the_record_leaves_out(repo):
    write_policy(repo, "{metric: max_abs, dtype: fp32, max: 1.0e-6}")
    result = g3(repo)
    assert result.status is Status.FAIL
    assert "fp32 max_abs = 1.95876e-05 breaks the ceiling fp32 max_abs ≤ 1e-06" in messages(result)


def test_results_over_no_cases_fail(repo):
    artifact = repo / "evidence" / "numeric-cpu.json"
    data = json.loads(artifact.read_text(encoding="utf-8"))
    data["results"]["per_dtype"]["fp32"]["cases"] = 0
    artifact.write_text(json.dumps(data), encoding="utf-8")
    edit_pin(repo, "numeric-cpu")
    result = g3(repo)
    assert result.status is Status.FAIL
    assert "measured no fp32 cases (cases = 0)" in messages(result)


def edit_pin(repo: Path, evidence_id: str) -> None:
    digest = hashlib.sha256((repo / "evidence" / f"{evidence_id}.json").read_bytes()).hexdigest()
    record = repo / RECORD
    text = record.read_text(encoding="utf-8")
    text = re.sub(rf"(id: {evidence_id}, path: evidence/{evidence_id}\.json, sha256: )[0-9a-f]{{64}}", rf"\g<1>{digest}", text)
    record.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("number", ["1" + "0" * 4000, "1." + "0" * 4000 + "1"])
def test_a_four_thousand_digit_tolerance_is_an_input_error_naming_file_and_line(repo, capsys, monkeypatch, number):
    edit(repo / RECORD, "max: 1.0e-6}", f"max: {number}}}")
    monkeypatch.chdir(repo)
    assert main([RECORD]) == 2
    out = capsys.readouterr()
    kind = "int" if "." not in number else "float"
    assert (f"{RECORD}:24:42: error: bad {kind} value: a number written with {len(number)} characters (at most 100)"
            in out.out + out.err)


def test_this_repository_s_ceilings_hold_its_own_records():
    repo = Path(__file__).resolve().parents[1]
    report = check_records([], repo, gates=["G3"])
    assert report.records and not report.input_errors
    assert [f.format_text() for r in report.records for f in r.findings() if f.severity == "error"] == []
    assert {(c.metric, c.dtype) for c in ceilings_of(make_context([], repo).policy)} >= {
        ("rel_l2", "bf16"), ("rel_l2", "fp16"), ("min_cosine", "bf16")}
