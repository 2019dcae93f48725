"""The claim vocabulary is searched only in texts that hold a piece every match needs, with the same matches."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

from gates.checks import claim_detection
from gates.checks.required_text import required_pieces
from gates.checks.term_pattern import FOLDS_TO_ASCII, Prefiltered, TermPattern

sys.path.insert(0, str(Path(__file__).parent / "claims_corpus"))
from evaluate import cases  # noqa: E402


def test_only_ascii_letters_and_the_four_folding_letters_match_an_ascii_letter_ignoring_case():
    every_character = "".join(map(chr, range(sys.maxunicode + 1)))
    folding = set(re.findall("[a-z]", every_character, re.IGNORECASE)) - set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    assert folding == set(FOLDS_TO_ASCII.pattern.strip("[]"))


@pytest.mark.parametrize("pattern, pieces", [
    (r"\bTTFTs?\b", "ttft"),
    (r"(?:ab|cd)e", ("all", (("any", ("ab", "cd")), "e"))),
    (r"x(?:abc|de)y", ("all", (("any", ("abc", "de")), "x", "y"))),
    (r"(?:a|b)?cd", "cd"),
    (r"a+bc", ("all", ("bc", "a"))),
    (r"(?=abc)x", "x"),
    (r"(?=abc)\w", None),
    (r"ab|\d", None),
    (r"(?:ab|)c", "c"),
    (r"é", None),
    (r"吞\s*吐", ("all", ("吞", "吐"))),
    (r"x[uU]t|y[aAb]c", ("any", ("xut", "yac", "ybc"))),
    (r"tok\s*/\s*s", ("all", ("tok", "/", "s"))),
], ids=["word", "branch", "sequence", "optional", "repeat", "lookahead", "nothing", "class", "empty-alternative",
        "cased-non-ascii", "cjk", "small-class", "sequence-of-runs"])
def test_required_pieces(pattern, pieces):
    assert required_pieces(pattern, re.IGNORECASE) == pieces


def _texts():
    texts = [text for part in ("dev", "heldout", "heldout2") for _, _, text in cases(part)]
    pieces = ["TTFT", "İTL", "tok/ſ", "Kelvin", "\u212a", "ı", "users", "Llama-3-8B", "latency", " ", "延迟", "é", "x"]
    rng = random.Random(23)
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(600)]
    return texts


def test_the_prefiltered_vocabulary_finds_what_the_whole_pattern_finds():
    texts = _texts()
    words = claim_detection.vocabulary(("serving gain",), ())
    checked = [(words.metrics, re.compile(words.metrics.pattern, re.IGNORECASE)),
               (words.scopes, re.compile(words.scopes.pattern, re.IGNORECASE))]
    for prefiltered in (claim_detection._SUBJECT, claim_detection._MEASURE):
        checked.append((prefiltered, prefiltered.compiled))
    for pattern, whole in checked:
        assert pattern.pieces, pattern.pattern[:40]
        for text in texts:
            assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in whole.finditer(text)], text
            assert bool(pattern.search(text)) == bool(whole.search(text)), text


def test_a_pattern_without_pieces_is_always_searched():
    assert TermPattern(r"\d+|ms", re.IGNORECASE).pieces is None
    assert Prefiltered(re.compile(r"\d+")).search("a 12") is not None
