"""Text a reader sees beside the flow of a rendered page: tooltips, captions, placeholders.

Link and image titles (tooltips, also from a reference definition), and the attributes of raw
HTML that a browser shows: `title`, `alt`, `aria-label`, an input's `placeholder`, a button's or
an input's `value`, an option's or a track's `label`, and `data-tooltip`. HTML comments are not
read. Each value is one `ProseBlock`, its characters mapped to where they stand in the source.
"""

from __future__ import annotations

import re

from gates.model.markdown_prose import ProseBlock, normalise_char, parsed_tokens, parser_reads

SHOWN_ATTRIBUTES = ("title", "alt", "aria-label", "placeholder", "value", "label", "data-tooltip")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HTML_ATTRIBUTE = re.compile(rf"""(?<![\w-])(?:{'|'.join(SHOWN_ATTRIBUTES)})\s*=\s*(?:"([^"]*)"|'([^']*)')""",
                             re.IGNORECASE)


def shown_attributes(text: str, first_line: int = 1) -> list[ProseBlock]:
    """Text a reader sees beside the flow of the page: link and image titles (tooltips, also from a
    reference definition) and the shown attributes (`SHOWN_ATTRIBUTES`) of raw HTML; each one block."""
    source = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    line_starts = tuple([0] + [match.end() for match in re.finditer("\n", source)])
    if not parser_reads(source):
        return []  # read line by line by `prose_blocks`, titles and attributes included
    seen, blocks = set(), []
    for value, block_start in _attribute_values(parsed_tokens(source), line_starts):
        at = source.find(value, block_start)
        key = (value, at)
        if not value.strip() or key in seen:
            continue
        seen.add(key)
        blocks.append(_attribute_block(value, at if at >= 0 else block_start, at >= 0, line_starts, first_line))
    return blocks


def _attribute_values(tokens, line_starts: tuple[int, ...]):
    """(value, source offset of its block) of every link title and shown HTML attribute."""
    for token in tokens:
        block_start = line_starts[min(token.map[0], len(line_starts) - 1)] if token.map else 0
        if token.type == "html_block":
            yield from ((value, block_start) for value in _html_attributes(token.content))
        for child in token.children or []:
            if child.type in ("link_open", "image") and child.attrGet("title"):
                yield str(child.attrGet("title")), block_start
            elif child.type == "html_inline":
                yield from ((value, block_start) for value in _html_attributes(child.content))


def _html_attributes(html_text: str) -> list[str]:
    """The values of the shown attributes (`SHOWN_ATTRIBUTES`) of the tags in raw HTML (comments are not read)."""
    return [match.group(1) if match.group(1) is not None else match.group(2)
            for match in _HTML_ATTRIBUTE.finditer(_HTML_COMMENT.sub("", html_text))]


def _attribute_block(value: str, offset: int, spread: bool, line_starts: tuple[int, ...],
                     first_line: int) -> ProseBlock:
    """An attribute's text as one block of prose; with `spread`, its characters map to `offset` onwards."""
    chars, offsets = [], []
    for index, char in enumerate(value):
        normal = normalise_char(char)
        chars.append(normal)
        offsets.extend([offset + index if spread else offset] * len(normal))
    return ProseBlock("attribute", "".join(chars), tuple(offsets or [offset]), line_starts, first_line)


