"""Brackets that start nothing are read as text in one step, so a line of them costs linear time.

A record with one 900,000-character line of `[` took 19 s: the Markdown parser tried a
link label at every bracket. These tests count the link rule's calls rather than time a
run, so they say the same on a busy machine.
"""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from gates.checks.claim_detection import find_claims_in_text, shown_attributes
from gates.model import markdown_prose
from gates.model.markdown_prose import MAX_LINK_OPENERS, markdown_parser, parser_reads, prose_blocks


def _link_rule_calls(text: str, name: str = "link") -> int:
    md = markdown_parser()
    rule = md.inline.ruler.__rules__[md.inline.ruler.__find__(name)]
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


@pytest.mark.parametrize("text, rule", [("<" * 100_000, "html_inline"), ("&" * 100_000, "entity"),
                                         ("1%" * 50_000, "emphasis"), (":#$@=" * 20_000, "emphasis")])
def test_a_run_of_markup_that_starts_nothing_reaches_the_other_rules_once(text, rule):
    assert _link_rule_calls(text, rule) == 1


SAME_TOKENS = ["a <<<b>> c", "x &&&amp; y", "see <<https://example.org>", "a <<<!-- c --> d", "[a] [b]: x",
               "see [the profile](ncu.json) [[[ here", "![alt](x.png) !! [[x]](y) ]]] [", "**[** [`]`] x",
               "50% of 1:2 #3 $4 @x =y {z} ^w +v -u", "a%*b*% `c:d` ~~e#~~ [f:g](h) <i:j> k\\:l", "x:  \ny"]


@pytest.mark.parametrize("text", SAME_TOKENS)
def test_the_parser_reads_tags_entities_links_and_code_as_commonmark_does(text):
    def tokens(md):
        return [(child.type, child.content) for token in md.parse(text) for child in token.children or []]

    plain = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    merged = [(kind, content) for kind, content in tokens(markdown_parser())]
    assert _joined(merged) == _joined(tokens(plain))


def _joined(tokens):
    """Adjacent text tokens as one (reading a run in one step may split text differently)."""
    out = []
    for kind, content in tokens:
        if out and kind == "text" and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + content)
        else:
            out.append((kind, content))
    return out


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


def test_the_record_with_a_900000_character_line_of_brackets_is_checked(tmp_path, capsys):
    """Checked, not timed (speed is measured by benchmarks): the tests above show that no bracket
    reaches the link rule, which is what made such a line take 19 s."""
    from pathlib import Path

    from gates.frontends.cli import main

    good = (Path(__file__).parent / "examples" / "G0" / "positive" / "form-complete-en.md").read_text(encoding="utf-8")
    front_matter = good[: good.index("\n---\n", 4) + 5].replace("id: form-complete-en", "id: brackets")
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "brackets.md").write_text(front_matter + "\n## §1 Why\n" + "[" * 900_000 + "\n",
                                                              encoding="utf-8")
    code = main(["--repo-root", str(tmp_path)])
    assert "docs/design/brackets.md:" in capsys.readouterr().out and code == 1
