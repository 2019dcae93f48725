"""Every development sentence of the labelled corpus keeps its verdict (`claims_corpus/labelled/dev.tsv`), and so
does every red-team claim (`claims_corpus/labelled/redteam.tsv`: sentences written to get an end-to-end claim past G7).

The held-out parts are not tested here: they are measured, with `tests/claims_corpus/evaluate.py heldout`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "claims_corpus"))
from evaluate import cases  # noqa: E402

from gates.checks.claim_detection import judge_text  # noqa: E402

DEV = cases("dev")
REDTEAM = cases("redteam")
# Red-team claims G7 still lets through, each with why; a case that starts being caught fails here (strict)
KNOWN_MISSES = {
    "The faster launch, in every serving A/B we ran, was the one with this PR.":
        "'serving' right after a launch reads as a launch's setting; the claim is in 'A/B' and 'the one with this PR'",
    "For Llama-3-8B shapes the kernel is 1.6x faster, which carries over one-for-one to the model since decode is all "
    "attention.": "'carries over … to the model' with the kernel's number, no number of its own, in a kernel's clause",
    "Kernel throughput went from 1.1M to 1.9M tokens/s.\n\nThat is what the server now sustains.":
        "a later paragraph says the kernel's number is the server's, with no number of its own",
    "Kernel throughput rises from 1.1M to 1.9M tokens/s, and that is the tokens/s the Llama-3-8B server delivers.":
        "the server's tokens/s is the kernel's, named in the same sentence",
    "The kernel alone is 1.6x faster; with everything else, it's still 1.4x.": "'everything else' is no subject",
    "Not only the kernel is faster: with everything around it, 1.4x.": "'everything around it' is no subject",
    "Kernel-level and end-to-end alike, this PR is 1.4x faster.": "a scope word beside 'kernel-level' reads as a kernel's",
    "Wouldn't you like TTFT 30% lower? This PR does exactly that.": "the answer states no number of its own",
    "How much faster is the server now? 1.4x.": "'the server' after a question word is no subject",
    "Run with `--goodput ttft:290` on this branch and every request meets it; on main only 61% do.":
        "'every request meets it' is no metric or subject",
    "The second half of the trace, which is where the prefill-heavy requests live, finished 30% sooner than on main.":
        "'the second half of the trace' is no subject",
    "We ran the model 3 times faster than main.": "'the model' as an object is no subject",
    "Requests slower than 1 s are now half as common as on main.": "'requests slower than 1 s' reads as a setting",
    "The 8B deployment now turns around a prompt in two-thirds the time.": "'turns around' is no result verb",
    "| phase | speedup |\n|---|---|\n| prefill | 2.0x |\n| decode | 1.4x |":
        "a table of phases and ratios with no arm or metric header reads like a kernel table",
    "- **Decode** — 1.4x\n- **Prefill** — 2.0x": "bare phase names with a ratio read like kernel results",
    "TL;DR: decode goes brrr — ~1.4x.": "'decode goes brrr' is no result",
    "The run finished 20% sooner with identical loss.": "'the run' alone is no training run",
    "> How much does this help TTFT?\n\nAbout 120 ms at p50.": "the quoted question does not lend its metric to the answer",
    "Serving benchmark after this change:\n\n```\n============ Serving Benchmark Result ============\nSuccessful requests:"
    "                     500\nBenchmark duration (s):                  40.3\n---------------Time to First Token"
    "----------------\nMean:                                    288.1\n(main Mean:                              412.3)\n```":
        "in a code block, a banner line names the metric and the lines under it give only 'Mean:'",
    "Serving benchmark, Llama-3-8B:\n\n```\n--- main ---\nMean TTFT (ms)\n412.3\n--- this PR ---\nMean TTFT (ms)\n288.1\n```":
        "in a code block, the metric and its value stand on separate lines",
    "| arm | p50 (ms) | p99 (ms) |\n|---|---|---|\n| main | 410 | 910 |\n| this PR | 290 | 540 |\n\nThese are "
    "time-to-first-token numbers from vllm bench serve.": "the metric is named only in a note after the table",
}


@pytest.mark.parametrize("kind, language, text", DEV, ids=[f"{kind}-{n}" for n, (kind, _, _) in enumerate(DEV, 1)])
def test_development_sentence_keeps_its_verdict(kind, language, text):
    verdicts = judge_text(text)
    assert any(verdict.claim for verdict in verdicts) is (kind == "claim"), [v.explain() for v in verdicts]


@pytest.mark.parametrize("text", [text for _, _, text in REDTEAM],
                         ids=[f"redteam-{n}" for n in range(1, len(REDTEAM) + 1)])
def test_a_red_team_claim_is_reported(text, request):
    if text in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_MISSES[text], strict=True))
    verdicts = judge_text(text)
    assert any(verdict.claim for verdict in verdicts), [v.explain() for v in verdicts]


def _open_red_team_claims() -> list[tuple[str, str]]:
    """(theme, text) of each claim of `labelled/redteam-open.tsv`: the theme is the `# ` line above it."""
    found, theme = [], ""
    path = Path(__file__).parent / "claims_corpus" / "labelled" / "redteam-open.tsv"
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.startswith("# "):
            theme = line[2:]
        elif line.strip():
            found.append((theme, line.split("\t", 2)[2].replace("\\n", "\n")))
    return found


@pytest.mark.parametrize("theme, text", _open_red_team_claims(),
                         ids=[f"open-{n}" for n in range(1, len(_open_red_team_claims()) + 1)])
def test_an_open_red_team_claim_is_reported(theme, text, request):
    # Claims the engine still lets through, grouped by what they exploit: each one fails (strictly expected) until the
    # engine reports it, and then moves to redteam.tsv
    request.applymarker(pytest.mark.xfail(reason=f"open: {theme}", strict=True))
    verdicts = judge_text(text)
    assert any(verdict.claim for verdict in verdicts), [v.explain() for v in verdicts]


def test_the_corpus_holds_at_least_400_sentences_in_three_kinds_and_two_languages():
    every = DEV + cases("heldout")
    assert len(every) >= 400
    assert {kind for kind, _, _ in every} == {"claim", "kernel", "mention"}
    assert {language for _, language, _ in every} >= {"en", "zh"}
