"""The claim vocabulary's patterns (`TermPattern`) find exactly what their ASCII-class word boundaries find."""

from __future__ import annotations

import random
import re

import pytest

from gates.checks import claim_vocabulary
from gates.checks.claim_detection import vocabulary
from gates.checks.term_pattern import ASCII_BOUNDARY, TermPattern, sharing_assertion, top_level_alternatives

_PIECES = ["TTFT", "ttfts", "İTL", "TTFTı", "tok/s", "tok/ſ", "e2e", "E2Eſ", "end-to-end", "Kelvin", "\u212a", "ſ",
           "ı", "İ", "x", "_", "9", "é", "端到端", "吞吐", " ", "-", "/", "\t"]


def _texts(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        yield "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 8)))


@pytest.mark.parametrize("flags", [0, re.IGNORECASE], ids=["case-sensitive", "ignorecase"])
def test_the_boundary_holds_where_the_class_boundary_holds(flags):
    fast, by_class = TermPattern(ASCII_BOUNDARY, flags), re.compile(ASCII_BOUNDARY, flags)
    for text in _texts(3000, seed=7):
        for pos in range(len(text) + 1):
            assert bool(fast.match(text, pos)) == bool(by_class.match(text, pos)), (text, pos)


@pytest.mark.parametrize("name", ["METRIC_TERMS", "SCOPE_TERMS"])
def test_the_terms_match_as_with_the_class_boundary(name):
    pattern = getattr(claim_vocabulary, name)
    fast, by_class = TermPattern(pattern, re.IGNORECASE), re.compile(pattern, re.IGNORECASE)
    for text in _texts(3000, seed=11):
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in by_class.finditer(text)], text


def test_a_configured_term_matches_as_with_the_class_boundary():
    words = vocabulary(("serving gain", "x2e"), ())
    by_class = re.compile(words.metrics.pattern, words.metrics.flags)
    for text in _texts(2000, seed=13):
        for probe in (text, f"x2e{text}serving gain", f"ıserving-gain{text}"):
            assert [m.span() for m in words.metrics.finditer(probe)] == [m.span() for m in by_class.finditer(probe)]


def test_alternatives_split_at_the_top_level_only():
    assert top_level_alternatives(r"a|(?:b|c)|[|]|\||[]|]x|d") == ["a", "(?:b|c)", "[|]", r"\|", "[]|]x", "d"]


@pytest.mark.parametrize("name", ["SERVING_SUBJECTS", "SERVING_MEASURES", "METRIC_TERMS"])
def test_alternatives_sharing_their_lookbehind_match_as_before(name):
    pattern = getattr(claim_vocabulary, name)
    shared = sharing_assertion(pattern, claim_vocabulary.LATIN_WORD_START)
    assert len(top_level_alternatives(shared)) < len(top_level_alternatives(pattern)) or name == "METRIC_TERMS"
    before, after = re.compile(pattern, re.IGNORECASE), re.compile(shared, re.IGNORECASE)
    pieces = _PIECES + ["users", "user-facing", "the model", "Llama-3-8B", "latency", "throughput", "served", "per request",
                        "in production", "每个请求", "延迟", "ä", "replies", "generation", "x"]
    rng = random.Random(17)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        assert [m.span() for m in after.finditer(text)] == [m.span() for m in before.finditer(text)], text
