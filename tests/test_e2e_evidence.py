"""G7's end-to-end evidence: how an e2e artifact must have been measured, and quoting it faithfully."""

from __future__ import annotations

import copy

import pytest

from gates.checks.e2e_evidence import Candidate, artifact_issues, claim_paragraph, claim_problems, unmatched_numbers
from gates.checks.number_trace import CitedValues
from gates.evidence.artifacts import EvidenceArtifact

MEASURED = {
    "schema_version": 1, "id": "e2e-decode", "kind": "e2e", "created": "2026-12-01T12:00:00Z",
    "command": "python -m gates.ab ...", "environment": {"backend": "cuda", "device": "NVIDIA H200"},
    "commit": None, "sources": {}, "fixtures": {"prompt": "a" * 64, "weights": "b" * 64},
    "results": {
        "metric": "tokens_per_s", "unit": "tok/s",
        "arms": {
            "baseline": {"samples": [34.7, 34.71, 34.69], "median": 34.7, "fresh_process": True,
                         "pids": [11, 13, 15], "warmup_discarded": 1},
            "split-kv": {"samples": [137.1, 137.2, 137.13], "median": 137.13, "fresh_process": True,
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
], ids=["two-samples", "one-process-twice", "process-shared-by-arms", "no-pids", "not-fresh", "no-warm-up",
        "no-fixtures", "no-arms"])
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
