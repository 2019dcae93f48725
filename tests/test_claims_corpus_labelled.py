"""Every development sentence of the labelled corpus keeps its verdict (`claims_corpus/labelled/dev.tsv`).

The held-out part is not tested here: it is measured, with `tests/claims_corpus/evaluate.py heldout`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "claims_corpus"))
from evaluate import cases  # noqa: E402

from gates.checks.claim_detection import judge_text  # noqa: E402

DEV = cases("dev")


@pytest.mark.parametrize("kind, language, text", DEV, ids=[f"{kind}-{n}" for n, (kind, _, _) in enumerate(DEV, 1)])
def test_development_sentence_keeps_its_verdict(kind, language, text):
    verdicts = judge_text(text)
    assert any(verdict.claim for verdict in verdicts) is (kind == "claim"), [v.explain() for v in verdicts]


def test_the_corpus_holds_at_least_400_sentences_in_three_kinds_and_two_languages():
    every = DEV + cases("heldout")
    assert len(every) >= 400
    assert {kind for kind, _, _ in every} == {"claim", "kernel", "mention"}
    assert {language for _, language, _ in every} >= {"en", "zh"}
