"""A public API break a reviewer accepted: under `api.breaks: reviewed` in the base policy, a break merges when an
approved record covering the changed file lists the broken name in `api.changes` (or `api.removes`) and names in
`api.break_question` a question whose decision is `accepted`. Without that policy, or without any part of the
declaration, the break fails as before.

The change in every test renames a parameter of `kernels.decode_attention.api.attention_decode` (`scale` becomes
`softmax_scale`), which breaks every caller that passes `scale=`.
"""

from __future__ import annotations

import pytest

from gates.checks.runner import check_records
from gates.model.policy import parse_policy
from gitrepo_builder import ADA, MAX, POLICY, RITA, g5_of, record_text, seeded_repo

REVIEWED = POLICY + "  breaks: reviewed\n"
BROKEN = "kernels.decode_attention.api.attention_decode"
RECORD = "docs/design/rename-scale.md"
SCHEMA_COMPLETION = {"unknowns": [], "claim_level": "kernel", "independence": {"defect": False},
                     "self_check": {f"G{n}": "n/a" for n in range(9)}}


def declaring_record(*, status="approved", changes=(BROKEN,), question="Q1", decided=True, covers=None) -> str:
    api = {"packages": ["kernels"], "changes": list(changes), "default_route_unchanged": True}
    if question:
        api["break_question"] = question
    return record_text("rename-scale", stage="D", status=status, questions_decided=decided,
                       reviewers=((RITA, "approved" if status == "approved" else "pending"),),
                       covers=covers or ("kernels/decode_attention/**",), extra={"api": api, **SCHEMA_COMPLETION})


def g5_of_the_rename(tmp_path, policy: str, record: str | None) -> list[tuple[str, str, str]]:
    repo = seeded_repo(tmp_path / "repo", policy=policy)
    repo.branch("rename")
    text = repo.read("kernels/decode_attention/api.py")
    repo.write("kernels/decode_attention/api.py", text.replace("scale=None", "softmax_scale=None"))
    if record is not None:
        repo.write(RECORD, record)
    repo.commit("Rename scale to softmax_scale", who=ADA)
    return g5_of(repo.check())


def severities(found, path="kernels/decode_attention/api.py") -> list[str]:
    return [severity for where, severity, message in found if where == path and "public API break" in message]


def test_an_approved_record_with_its_break_question_accepted_lets_the_break_merge_with_a_warning(tmp_path):
    found = g5_of_the_rename(tmp_path, REVIEWED, declaring_record())
    assert severities(found) == ["warning"], found
    [message] = [m for _, _, m in found if "public API break" in m]
    assert "accepted by rename-scale (Q1, accepted)" in message and "parameter 'scale' removed" in message


def test_without_api_breaks_reviewed_in_the_base_policy_the_break_fails(tmp_path):
    found = g5_of_the_rename(tmp_path, POLICY, declaring_record())
    assert severities(found) == ["error"], found
    assert any("the public API may only grow" in message for _, _, message in found)


@pytest.mark.parametrize("record", [
    None,
    declaring_record(status="in-review"),
    declaring_record(changes=("kernels.decode_attention.api.other_function",)),
    declaring_record(question=None),
    declaring_record(decided=False),
    declaring_record(covers=("kernels/decode_layer.py",)),
], ids=["no-record", "not-approved", "another-name", "no-question", "question-not-accepted", "covers-another-file"])
def test_a_break_without_the_whole_declaration_fails_and_says_what_accepts_it(tmp_path, record):
    found = g5_of_the_rename(tmp_path, REVIEWED, record)
    assert severities(found) == ["error"], found
    assert any(f"lists '{BROKEN}' in api.changes or api.removes" in message for _, _, message in found)


def test_the_policy_that_accepts_reviewed_breaks_is_a_loosening():
    assert parse_policy(POLICY).loosenings(parse_policy(REVIEWED)) == ["api breaks: never -> reviewed"]
    assert parse_policy(REVIEWED).loosenings(parse_policy(POLICY)) == []


def record_g5(tmp_path, policy: str, record: str) -> list[tuple[str, str]]:
    repo = seeded_repo(tmp_path / "repo", policy=policy)
    repo.write(RECORD, record)
    repo.commit("The record", who=MAX)
    [result] = check_records([str(repo.root / RECORD)], repo.root, gates=["G5"]).records
    return [(f.severity, f.message) for f in result.gates["G5"].findings if not f.message.startswith("self-check")]


def test_the_record_check_refuses_a_declared_break_where_the_policy_keeps_the_api_growing(tmp_path):
    found = record_g5(tmp_path, POLICY, declaring_record())
    assert found == [("error", f"the design changes public name '{BROKEN}'; the public API may only grow "
                               "(add a new entry point instead)")]


@pytest.mark.parametrize("record, expected", [
    (declaring_record(), []),
    (declaring_record(question=None), ["a declared API break names the reviewer question that accepts it"]),
    (declaring_record(decided=False), ["question Q1 must be accepted before the break merges (decision: not made)"]),
    (declaring_record(changes=("torch.nn.functional.pad",)), ["'torch.nn.functional.pad' is in no declared package"]),
], ids=["complete", "no-question", "not-accepted", "outside-the-packages"])
def test_the_record_check_reads_a_declared_break_under_api_breaks_reviewed(tmp_path, record, expected):
    errors = [message for severity, message in record_g5(tmp_path, REVIEWED, record) if severity == "error"]
    assert len(errors) == len(expected) and all(e in m for e, m in zip(expected, errors)), errors


def test_a_declaration_merged_before_accepts_no_later_break_of_the_same_name(tmp_path):
    repo = seeded_repo(tmp_path / "repo", policy=REVIEWED)
    repo.branch("rename")
    api = "kernels/decode_attention/api.py"
    repo.write(api, repo.read(api).replace("scale=None", "softmax_scale=None"))
    repo.write(RECORD, declaring_record())
    repo.commit("Rename scale to softmax_scale", who=ADA)
    assert severities(g5_of(repo.check())) == ["warning"]
    repo.merge("rename")
    repo.branch("drop-out")
    repo.write(api, repo.read(api).replace(", out=None", ""))
    repo.write(RECORD, repo.read(RECORD).replace("Text.", "Text, reworded.", 1))  # the record is edited, not re-declared
    repo.commit("Drop the out parameter", who=ADA)
    found = g5_of(repo.check())
    assert severities(found) == ["error"], found
    assert any("parameter 'out' removed" in message for _, _, message in found)
