"""G7's end-to-end evidence: how an e2e artifact must have been measured, and quoting it faithfully."""

from __future__ import annotations

import copy

import pytest

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gates.checks.context import GateContext
from gates.checks.e2e_evidence import (
    Candidate, artifact_issues, backing_problems, claim_paragraph, claim_problems, unmatched_numbers,
)
from gates.checks.cited_values import CitedValues
from gates.checks.runner import judging_policy
from gates.evidence.artifacts import EvidenceArtifact, file_sha256
from gates.evidence.attestation import public_key_text, sign
from gates.model.record import Record

MEASURED = {
    "schema_version": 1, "id": "e2e-decode", "kind": "e2e", "created": "2026-12-01T12:00:00Z",
    "command": "python -m gates.ab ...", "environment": {"backend": "cuda", "device": "NVIDIA H200"},
    "commit": None, "sources": {}, "fixtures": {"prompt": "a" * 64, "weights": "b" * 64},
    "results": {
        "metric": "tokens_per_s", "unit": "tok/s", "variable": {"kind": "env", "name": "SPLITKV"},
        "arms": {
            "baseline": {"value": "0", "samples": [34.7, 34.71, 34.69], "median": 34.7, "fresh_process": True,
                         "pids": [11, 13, 15], "warmup_discarded": 1},
            "split-kv": {"value": "1", "samples": [137.1, 137.2, 137.13], "median": 137.13, "fresh_process": True,
                         "pids": [12, 14, 16], "warmup_discarded": 1},
        },
    },
}


def artifact(edit=None) -> EvidenceArtifact:
    data = copy.deepcopy(MEASURED)
    if edit:
        edit(data)
    return EvidenceArtifact("docs/evidence/e2e-decode.json", data, "0" * 64)


def test_an_artifact_measured_by_the_harness_backs_a_claim():
    assert artifact_issues(artifact()) == []


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["results"]["arms"]["baseline"].update(samples=[34.7, 34.7], pids=[11, 13]), "2 sample(s)"),
    (lambda d: d["results"]["arms"]["split-kv"].update(pids=[12, 12, 16]), "warm process"),
    (lambda d: d["results"]["arms"]["split-kv"].update(pids=[11, 14, 16]), "warm process"),
    (lambda d: d["results"]["arms"]["split-kv"].pop("pids"), "process of each sample"),
    (lambda d: d["results"]["arms"]["split-kv"].update(fresh_process=False), "not from fresh processes"),
    (lambda d: d["results"]["arms"]["split-kv"].pop("warmup_discarded"), "no discarded warm-up"),
    (lambda d: d.update(fixtures={}), "no fixture identities"),
    (lambda d: d["results"].update(arms={}), "no arms"),
    (lambda d: d["results"]["arms"]["split-kv"].update(median=140.0),
     "arm 'split-kv' says its median is 140.0, but the median of its samples is 137.13"),
    (lambda d: d["results"]["arms"]["split-kv"].update(value="0"),
     "arms 'baseline' and 'split-kv' measure the same setting (SPLITKV=0): they compare nothing"),
    (lambda d: d["results"]["arms"]["split-kv"].pop("value"), "arm 'split-kv' does not record the setting it measured"),
], ids=["two-samples", "one-process-twice", "process-shared-by-arms", "no-pids", "not-fresh", "no-warm-up",
        "no-fixtures", "no-arms", "median-not-of-its-samples", "same-setting-twice", "no-setting"])
def test_an_artifact_that_was_not_measured_properly_backs_nothing(edit, expected):
    assert any(expected in issue for issue in artifact_issues(artifact(edit)))


@pytest.mark.parametrize("sentence", [
    "Decode throughput with split-kv is 137.1 tok/s against 34.7 tok/s for the baseline.",
    "End to end, split-kv decodes 3.95x faster than the baseline.",
    "Tokens per second rise by 295 % (split-kv over baseline).",
])
def test_a_claim_that_quotes_the_artifact_passes(sentence):
    assert unmatched_numbers(sentence, [artifact()]) == []


@pytest.mark.parametrize("sentence, number", [
    ("Decode throughput with split-kv is 140 tok/s.", "140 tok/s"),
    ("End to end, split-kv decodes 4.2x faster.", "4.2x"),
    ("The baseline reaches 137.1 tok/s.", "137.1 tok/s"),
])
def test_a_claim_that_misquotes_the_artifact_fails(sentence, number):
    problems = unmatched_numbers(sentence, [artifact()])
    assert problems and problems[0].startswith(number)
    assert "split-kv 137.13" in problems[0]


# --- the rule G7 (and lint-pr, and results pages) apply to one claim ---------------------------------------------

def cited(edit=None, pin=None) -> list[Candidate]:
    """The record cites one e2e artifact; `pin` says why its pin does not verify (None: it verifies)."""
    return [Candidate("e2e-decode", artifact(edit), pin)]


GOOD_CLAIM = "End to end, split-kv decodes at 137.1 tok/s against 34.7 tok/s for the baseline (3.95x)."


def test_a_claim_quoting_a_properly_measured_pinned_artifact_is_backed():
    assert claim_problems(GOOD_CLAIM, "e2e", cited()) == []


@pytest.mark.parametrize("claim_level, candidates, expected", [
    ("e2e", [], "no e2e artifact is cited"),
    ("kernel", cited(), "claim_level is kernel"),
    ("e2e", cited(pin="docs/evidence/e2e-decode.json has SHA-256 1111, the record pins 0000"), "the record pins"),
    ("e2e", cited(lambda d: d["results"]["arms"]["baseline"].update(samples=[34.7, 34.7], pids=[11, 13])),
     "has 2 sample(s), fewer than 3"),
    ("e2e", cited(lambda d: d["results"]["arms"]["split-kv"].update(pids=[12, 12, 16])), "warm process"),
    ("e2e", cited(lambda d: d.update(fixtures={})), "no fixture identities"),
], ids=["missing-artifact", "kernel-level-record", "wrong-pin", "two-samples", "warm-process", "no-fixtures"])
def test_a_claim_without_proper_e2e_evidence_is_not_backed(claim_level, candidates, expected):
    problems = claim_problems(GOOD_CLAIM, claim_level, candidates)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize("sentence, number", [
    ("End to end, split-kv decodes at 140 tok/s.", "140 tok/s"),
    ("End to end, split-kv is 4.5x faster than the baseline.", "4.5x"),
    ("End to end, the baseline decodes at 137.1 tok/s.", "137.1 tok/s"),
], ids=["wrong-value", "wrong-ratio", "value-of-another-arm"])
def test_a_claim_that_misquotes_a_good_artifact_is_not_backed(sentence, number):
    problems = claim_problems(sentence, "e2e", cited())
    assert len(problems) == 1 and problems[0].startswith(number), problems


def test_a_claim_about_a_metric_the_artifact_does_not_measure_is_not_backed():
    problems = claim_problems("End to end, split-kv cuts TTFT.", "e2e", cited())
    assert problems and "TTFT" in problems[0] and "tokens_per_s" in problems[0]
    assert claim_problems("End to end, split-kv raises throughput.", "e2e", cited()) == []


def test_the_claim_paragraph_spans_wrapped_lines_and_stops_at_blocks():
    text = ("Intro.\n\nKernel time is 36.55 us. End to end, split-kv\ndecodes at 137.1 tok/s "
            "([artifact](../evidence/e2e-decode.json)).\n\n| a | 2 ms |\n- item 9 ms\n  wrapped")
    assert claim_paragraph(text, 10, 13) == ("Kernel time is 36.55 us. End to end, split-kv decodes at 137.1 tok/s "
                                             "([artifact](../evidence/e2e-decode.json)).")
    assert claim_paragraph(text, 10, 15) == "| a | 2 ms |"
    assert claim_paragraph(text, 10, 17) == "- item 9 ms   wrapped"


KERNEL = {"bench-h200": {"rows": [{"visible_tokens": 2048, "splitkv_us": 9.8}]}}


def test_a_number_elsewhere_in_the_claims_paragraph_must_be_backed_too():
    paragraph = "End to end, split-kv decodes at 137.1 tok/s. That is 4.5x faster."
    problems = claim_problems(paragraph, "e2e", cited())
    assert len(problems) == 1 and problems[0].startswith("4.5x matches no arm"), problems


def test_a_kernel_number_in_the_paragraph_may_name_its_own_artifact_value():
    paragraph = ("The split kernel takes 9.8 us (`bench-h200:rows[visible_tokens=2048].splitkv_us`). "
                 "End to end, split-kv decodes at 137.1 tok/s.")
    named = CitedValues(KERNEL)
    assert claim_problems(paragraph, "e2e", cited(), named) == []
    problems = claim_problems(paragraph.replace("9.8 us", "8.9 us"), "e2e", cited(), named)
    assert len(problems) == 2 and "is not the value it names" in problems[0], problems
    assert claim_problems(paragraph, "e2e", cited()) != [], "without the reference the kernel time backs nothing"


# --- whether the artifact can be trusted at all: attested, and measured on the code as it is ----------------------

RUNNER = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
POLICY_WITHOUT_E2E = f"""schema_version: 1
default_level: L1
rules: []
attestation:
  keys:
    - {{id: h200-runner, public_key: "{public_key_text(RUNNER.public_key())}"}}
  required:
    L1: [numeric, bitwise]
"""


def trust_setup(tmp_path, edit=None, *, signed: bool = True):
    """A repository whose policy attests numeric and bitwise evidence only (not e2e), a record covering
    `kernel.py`, and an e2e artifact measured on it: (record, ctx, artifact)."""
    (tmp_path / ".design-gates").mkdir()
    (tmp_path / ".design-gates" / "policy.yaml").write_text(POLICY_WITHOUT_E2E, encoding="utf-8")
    (tmp_path / "kernel.py").write_text("def decode():\n    return 1\n", encoding="utf-8")
    data = copy.deepcopy(MEASURED)
    data["sources"] = {"kernel.py": file_sha256(tmp_path / "kernel.py")}
    if edit:
        edit(data)
    if signed:
        data = sign(data, "h200-runner", RUNNER)
    ctx = GateContext(tmp_path)
    ctx.policy = judging_policy(ctx.repo_root, None, ctx.settings)
    record = Record(path=tmp_path / "docs/design/r.md", rel_path="docs/design/r.md", repo_root=tmp_path,
                    front_matter={"covers": ["kernel.py"]}, body="", body_start_line=1)
    return record, ctx, EvidenceArtifact("docs/evidence/e2e-decode.json", data, "0" * 64)


def test_an_attested_artifact_of_the_covered_code_as_it_is_can_be_trusted(tmp_path):
    assert backing_problems(*trust_setup(tmp_path)) == []


def test_an_unsigned_e2e_artifact_backs_no_claim_even_where_the_policy_does_not_require_e2e_attestation(tmp_path):
    problems = backing_problems(*trust_setup(tmp_path, signed=False))
    assert problems == ["is not attested; it must be signed by a trusted runner key (h200-runner) (an end-to-end "
                        "claim needs attested e2e evidence, whatever the policy's attestation.required lists)"]
    assert "is not attested" in claim_problems(GOOD_CLAIM, "e2e", [Candidate("e2e-decode", artifact(), None,
                                                                             tuple(problems))])[0]


def test_an_e2e_artifact_measured_on_older_code_backs_no_claim(tmp_path):
    record, ctx, measured = trust_setup(tmp_path)
    (tmp_path / "kernel.py").write_text("def decode():\n    return 2\n", encoding="utf-8")
    assert backing_problems(record, ctx, measured) == ["is stale: kernel.py changed since it was measured"]


def test_an_e2e_artifact_that_never_measured_the_covered_code_backs_no_claim(tmp_path):
    problems = backing_problems(*trust_setup(tmp_path, lambda d: d.update(sources={"bench.py": "0" * 64})))
    assert "does not bind kernel.py, a file the record covers: it did not measure this file as it is" in problems


def test_an_e2e_artifact_need_not_bind_the_tests_the_record_covers(tmp_path):
    record, ctx, measured = trust_setup(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_kernel.py").write_text("def test_decode():\n    pass\n", encoding="utf-8")
    record.front_matter["covers"] = ["kernel.py", "tests/test_kernel.py"]
    assert backing_problems(record, ctx, measured) == []
