"""Brackets that start nothing are read as text in one step, so a line of them costs linear time.

A record with one 900,000-character line of `[` took 19 s: the Markdown parser tried a
link label at every bracket. These tests count the link rule's calls rather than time a
run, so they say the same on a busy machine.
"""

from __future__ import annotations

import pytest

from gates.checks.claim_detection import find_claims_in_text, shown_attributes
from gates.model import markdown_prose
from gates.model.markdown_prose import MAX_LINK_OPENERS, markdown_parser, parser_reads, prose_blocks


def _link_rule_calls(text: str) -> int:
    md = markdown_parser()
    rule = md.inline.ruler.__rules__[md.inline.ruler.__find__("link")]
    calls = []
    original = rule.fn

    def counting(state, silent):
        calls.append(state.pos)
        return original(state, silent)

    rule.fn = counting
    md.inline.ruler.__compile__()
    md.parse(text)
    return len(calls)


@pytest.mark.parametrize("text", ["[" * 100_000, "[(" * 50_000, "![" * 50_000, "see [a](b) then " + "[" * 50_000])
def test_brackets_that_no_bracket_closes_never_reach_the_link_rule(text):
    assert _link_rule_calls(text) <= 1


def test_a_run_of_closing_brackets_never_reaches_the_link_rule():
    assert _link_rule_calls("]" * 100_000) == 0


@pytest.mark.parametrize("text, rendered", [
    ("see [the profile](ncu.json) [[[ here", "see the profile [[[ here"),
    ("an image ![alt text](x.png) and ! marks!!", "an image alt text and ! marks!!"),
    ("[[nested] label] and ]]] closers", "[[nested] label] and ]]] closers"),
    ("[a] [b]: not a link", "[a] [b]: not a link"),
    ("**bold [** still", "bold [ still"),
])
def test_links_and_brackets_render_as_before(text, rendered):
    (block,) = prose_blocks(text)
    assert block.text == rendered


def test_a_claim_after_a_run_of_unclosed_brackets_is_found_at_its_column():
    text = "[" * 1000 + " TTFT improves by 20%"
    [(line, col, _term)] = list(find_claims_in_text(text))
    assert (line, col) == (1, 1002)


def test_a_text_that_opens_more_labels_than_the_parser_reads_is_read_line_by_line():
    text = "[a]" * (MAX_LINK_OPENERS + 1) + "\n\nTTFT improves by 20% [a](x \"tok/s up\")"
    assert not parser_reads(text)
    blocks = prose_blocks(text)
    assert [block.kind for block in blocks] == ["line", "line"]
    assert shown_attributes(text) == []  # the title is prose of its line
    assert [(line, term) for line, _, term in find_claims_in_text(text)] == [(3, "TTFT")]


def test_an_ordinary_text_is_read_by_the_parser():
    assert parser_reads("[a](b) " * 100 + "[" * (MAX_LINK_OPENERS + 5))
    assert markdown_prose.MAX_LINK_OPENERS >= 1000
