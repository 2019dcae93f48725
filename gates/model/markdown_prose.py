"""The prose a reader sees when a Markdown text is rendered, mapped back to its source.

A gate that judges what a record *says* must read what the record *renders to*, not its
source lines: `T**T**FT` reads "TTFT", `&#70;` reads "F", a sentence wrapped after
`end-to-` reads "end-to-end", and a one-line ```` ```x``` ```` is an inline code span
followed by prose, not a fence. This module asks the CommonMark parser (markdown-it-py,
with GitHub's tables and strikethrough) what is prose and what is code:

- Prose: paragraphs, headings, list items, block quotes, table rows (cells joined by
  " | "; a body row remembers its table's header row), image alt text, and the text of raw
  HTML blocks outside tags and comments (text after `-->` on a comment's closing line
  renders, so it is prose).
- The indented bodies of admonitions (`!!! note "Title"`), collapsible details (`??? tip`)
  and content tabs (`=== "Tab"`) are prose as the site renders them, not indented code; their
  titles are prose too (`unwrap_containers`).
- A text nested deeper than the parser reads (`MAX_NESTING` levels), or with more `[` before
  a `]` than it reads in linear time (`MAX_LINK_OPENERS`), is read line by line, every line
  prose, so that nothing past the limit goes unread and a hostile line costs linear time.
- Inline code spans are prose: a reader reads "`TTFT -35%`" in a sentence as words, set
  apart by a space on either side.
- Not prose: fenced and indented code blocks, HTML comments and tags, link destinations and
  titles, autolinked URLs. But what a code block shows as results is read, line by line as
  blocks of kind "code output" or as a table's rows (`gates.model.code_prose`); its commands
  and configuration keys are not.
- Emphasis and links are flattened; soft line breaks read as one space, except after a
  word that ends in a hyphen (`end-to-` + newline + `end` reads `end-to-end`).
- HTML entities and backslash escapes are decoded; then each character is NFKC-normalised
  (fullwidth letters become ASCII), and format characters (Unicode category Cf: zero-width
  spaces and joiners, soft hyphens) and combining marks (Mn) are dropped, Cyrillic or
  Greek letters drawn like Latin ones read as those Latin letters, and digits of other
  scripts (Arabic-Indic ٣٠, Devanagari …) with the Arabic percent sign and decimal
  separator read as ASCII digits, `%` and `.`.

Each character of a `ProseBlock` remembers the (line, column) of the source character it
came from, so a finding points at the line and column the author wrote.
"""

from __future__ import annotations

import html
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from functools import lru_cache

from markdown_it import MarkdownIt

from gates.model.code_prose import code_pieces

MAX_NESTING = 20  # markdown-it's CommonMark default; parsing costs grow with it
# Link labels a text may open before a `]` for the parser to read it: each such `[` costs the
# parser a label scan (up to MAX_NESTING deep). A design record holds a few hundred.
MAX_LINK_OPENERS = 10_000
_INLINE_TAGS = frozenset("a abbr b bdi bdo cite code data dfn em i kbd mark q s samp small span strong sub sup "
                         "time u var del ins".split())
_HTML_PIECE = re.compile(r"<!--.*?(?:-->|\Z)|<[A-Za-z/!?][^>]*>?"
                         r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});", re.DOTALL)
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")


@dataclass(frozen=True)
class ProseBlock:
    """One rendered block of prose (a paragraph, heading, table row ...).

    `text` is the normalised rendered text; `offsets[i]` is the offset in the source of the
    character that produced `text[i]`, and `position(i)` its 1-based (line, column).
    `heading` is the rendered text of the nearest heading above the block; `header` is, for a
    row of a table's body, the rendered text of the table's header row.
    """

    kind: str
    text: str
    offsets: tuple[int, ...]
    line_starts: tuple[int, ...] = field(repr=False)
    first_line: int = 1
    heading: str = ""
    header: str = ""

    def position(self, index: int) -> tuple[int, int]:
        """(line, column) in the source of `text[index]`."""
        offset = self.offsets[min(index, len(self.offsets) - 1)]
        line = bisect_right(self.line_starts, offset) - 1
        return self.first_line + line, offset - self.line_starts[line] + 1


def markdown_parser(**options) -> MarkdownIt:
    """The CommonMark parser with GitHub's tables and strikethrough, reading a run of markup
    characters that start nothing (brackets no `]` closes ...) in one step
    (`_markup_that_starts_nothing`)."""
    md = MarkdownIt("commonmark", options).enable(["table", "strikethrough"])
    md.inline.ruler.before("link", "markup_that_starts_nothing", _markup_that_starts_nothing)
    return md


_BRACKET_RUN = re.compile(r"[\[!\]]*")
# What may start an inline construct of CommonMark with GitHub's strikethrough; the other
# characters the parser stops its text at start nothing here.
_STARTS_MARKUP = "\n\\`*_~[]!<&"
_INERT_TEXT = re.compile(r"[^\n\\`*_~\[\]!<&]*")


def _markup_that_starts_nothing(state, silent: bool) -> bool:
    """Markup characters that start nothing are text, read a run at a time:

    - after the last `]` of the inline text no link or image can start, so its `[` and `!`
      read as text up to the next other markup character;
    - a `]` outside a link label and a `!` before no `[` start nothing either;
    - a `<` before another `<` starts no tag or autolink, and an `&` before another `&` no
      entity: a run of them is text but for its last one;
    - the parser stops its text at characters that start nothing in CommonMark (`#`, `$`,
      `%`, `:`, `=`, `@` ...: plugins' markup); they read as text up to the next character
      that may start something.

    The parser would try every inline rule, and a link label, at each such character; a
    line of 900,000 `[` took seconds per parse. Inside a label scan (`silent`) each `]`
    still counts, so `]` runs are left to the parser there.
    """
    src, pos, end = state.src, state.pos, state.pos
    char = src[pos]
    if char in "[!" and pos > _last_close(state):
        while end < state.posMax and src[end] in "[!]":
            end = _BRACKET_RUN.match(src, end, state.posMax).end()
            found = state.md.inline.terminator_re.search(src, end, state.posMax)
            end = found.start() if found else state.posMax
    elif char == "]" and not silent:
        while end < state.posMax and src[end] == "]":
            end += 1
    elif char == "!":
        while end < state.posMax and src[end] == "!":
            end += 1
        if end < state.posMax and src[end] == "[":
            end -= 1  # the last one may start an image
    elif char in "<&":
        while end + 1 < state.posMax and src[end + 1] == char:
            end += 1
    elif char not in _STARTS_MARKUP:
        end = _INERT_TEXT.match(src, pos, state.posMax).end()
    if end == pos:
        return False
    if not silent:
        append = getattr(state, "append_pending", None)
        if append is not None:
            append(src[pos:end])
        else:  # markdown-it-py 3
            state.pending += src[pos:end]
    state.pos = end
    return True


def _last_close(state) -> int:
    """The offset of the last `]` before the inline text's end (-1 when none); remembered per end."""
    known = state.__dict__.setdefault("_last_close_by_end", {})
    if state.posMax not in known:
        known[state.posMax] = state.src.rfind("]", 0, state.posMax)
    return known[state.posMax]


def _parser() -> MarkdownIt:
    md = markdown_parser(maxNesting=MAX_NESTING)
    md.disable("text_join")
    return md


_MD = _parser()


@lru_cache(maxsize=1)
def parsed_tokens(text: str) -> tuple:
    """The block tokens of Markdown `text` (line endings as `\\n`), parsed once for the prose and
    for the attributes a reader sees (`gates.model.shown_text.shown_attributes`), which
    read the same text one after the other. Read-only: callers must not change them."""
    return tuple(_MD.parse(text))


# Cyrillic and Greek letters drawn like Latin ones ("ТTFT" with a Cyrillic Т reads as TTFT).
_LOOKALIKES = str.maketrans(
    "АВЕКМНОРСТХаеорсхуіјѕԁ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοτν",
    "ABEKMHOPCTXaeopcxyijsd" "ABEZHIKMNOPTYXotv",
)


# The Arabic percent sign, decimal separator and thousands separator, as the ASCII they mean.
_NUMBER_MARKS = str.maketrans({"\u066a": "%", "\u066b": ".", "\u066c": ","})


def _ascii_digit(c: str) -> str:
    return str(unicodedata.decimal(c)) if unicodedata.category(c) == "Nd" and not c.isascii() else c


@lru_cache(maxsize=8192)
def normalise_char(char: str) -> str:
    """The characters that `char` matches as: NFKC, look-alike letters as Latin, digits of any
    script as ASCII, no format characters or marks."""
    return "".join(_ascii_digit(c) for c in unicodedata.normalize("NFKC", char).translate(_LOOKALIKES)
                   .translate(_NUMBER_MARKS) if unicodedata.category(c) not in ("Cf", "Mn"))


class _Source:
    """The source text as the parser reads it (containers unwrapped), with offsets back to the original.

    `text` is what the parser reads; `original_offsets([i])` holds the offset in the source the author
    wrote of `text[i]`, and `original_line_starts` the line starts of that source.
    """

    def __init__(self, text: str, first_line: int):
        original = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
        self.first_line = first_line
        self.original_line_starts = tuple([0] + [m.end() for m in re.finditer("\n", original)])
        self.text, self._kept = unwrap_containers(original)
        self._kept_in_place = self._kept == list(range(len(self._kept)))  # no container moved a character
        self.line_starts = tuple([0] + [m.end() for m in re.finditer("\n", self.text)])

    def offset_of_line(self, line_index: int) -> int:
        """Offset of the first character of a 0-based line; the end of the text past the last line."""
        return self.line_starts[line_index] if line_index < len(self.line_starts) else len(self.text)

    def original_offsets(self, offsets: list[int]) -> tuple[int, ...]:
        """The offset in the source the author wrote of `text[i]` for each i of `offsets`."""
        kept = self._kept
        if not kept:
            return (0,) * len(offsets)
        last = len(kept) - 1
        if self._kept_in_place and (not offsets or (min(offsets) >= 0 and max(offsets) <= last)):
            return tuple(offsets)
        return tuple(kept[offset if offset < last else last] for offset in offsets)


# Blocks whose indented body the site renders as prose: admonitions (`!!! note "Title"`), collapsible
# details (`??? tip`, `???+ info`) and content tabs (`=== "Tab"`), as Python-Markdown's admonition,
# pymdownx.details and pymdownx.tabbed (mkdocs-material) write them.
_CONTAINER = re.compile(r'^(?P<indent>[ \t]*)(?:!!!|\?\?\?\+?|===\+?)[ \t]*(?P<kind>[\w-]*)[ \t]*'
                        r'(?:"(?P<title>[^"\n]*)")?[ \t]*$')


def unwrap_containers(text: str) -> tuple[str, list[int]]:
    """`text` with each container's marker line replaced by its title (a block of its own) and its body
    dedented by four spaces (nested containers too), and the original offset of every character kept."""
    if "!!!" not in text and "???" not in text and "===" not in text:
        return text, list(range(len(text) + 1))
    out: list[str] = []
    kept: list[int] = []
    bodies: list[int] = []  # the indentation of each open container's body
    at = 0
    for line in text.split("\n"):
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        if stripped:
            while bodies and indent < bodies[-1]:
                bodies.pop()
        cut = min(indent, bodies[-1]) if bodies else 0
        marker = _CONTAINER.match(line[cut:])
        if marker:
            title = marker.group("title")
            start = line.find(title, cut) if title else len(line)
            piece = title or ""
            out.append(piece + "\n")  # the title is a block of its own
            kept.extend(range(at + start, at + start + len(piece)))
            kept.append(at + len(line))
            bodies.append(cut + len(marker.group("indent")) + 4)
        else:
            out.append(line[cut:])
            kept.extend(range(at + cut, at + len(line)))
        out.append("\n")
        kept.append(at + len(line))
        at += len(line) + 1
    kept.append(at)
    return "".join(out)[:-1], kept[:-1] if kept else [0]


class _Builder:
    """Collects rendered text as (text, source offset, spread) pieces."""

    def __init__(self):
        self.pieces: list[tuple[str, int, bool]] = []
        self.tail = ""

    def add(self, text: str, offset: int, spread: bool = True) -> None:
        """Append `text`; with `spread`, its character i comes from source offset + i, else all from `offset`."""
        if text:
            self.pieces.append((text, offset, spread))
            self.tail = (self.tail + text)[-2:]

    def ends_with_hyphenated_word(self) -> bool:
        return len(self.tail) == 2 and self.tail[-1] in "-\u2010\u2011" and self.tail[0].isalpha()

    def line_break(self, offset: int) -> None:
        if self.pieces and not self.ends_with_hyphenated_word():
            self.add(" ", offset)


class _InlineReader:
    """Walks the children of inline tokens in source order, keeping a cursor into the source."""

    def __init__(self, source: _Source):
        self.source = source
        self.cursor = 0
        self.limit = len(source.text)

    def enter_block(self, start: int, end: int) -> None:
        """Read the next inline content from the block that spans source offsets [start, end)."""
        self.cursor, self.limit = start, end

    def find(self, needle: str) -> int | None:
        if not needle:
            return None
        index = self.source.text.find(needle, self.cursor, self.limit)
        return None if index < 0 else index

    def read(self, children, out: _Builder) -> None:
        link_kinds = []
        for child in children:
            kind = child.type
            if kind == "text" and link_kinds and link_kinds[-1] == "autolink":
                index = self.find(child.content)
                if index is not None:
                    self.cursor = index + len(child.content)
            elif kind == "text":
                self._literal(child.content, out)
            elif kind == "text_special":
                index = self.find(child.markup)
                at = self.cursor if index is None else index
                out.add(child.content, at, spread=False)
                if index is not None:
                    self.cursor = index + len(child.markup)
            elif kind in ("softbreak", "hardbreak"):
                newline = self.source.text.find("\n", self.cursor)
                if newline >= 0:
                    self.cursor = newline + 1
                out.line_break(self.cursor)
            elif kind == "code_inline":
                opening = self.find(child.markup)
                if opening is None:
                    out.add(f" {child.content} ", self.cursor, spread=False)
                    continue
                closing = self.source.text.find(child.markup, opening + len(child.markup), self.limit)
                inside = self.source.text.find(child.content, opening + len(child.markup),
                                               self.limit if closing < 0 else closing)
                out.add(" ", opening)
                if child.content and inside >= 0:
                    out.add(child.content, inside)
                else:
                    out.add(child.content, opening, spread=False)
                self.cursor = opening + len(child.markup) if closing < 0 else closing + len(child.markup)
                out.add(" ", self.cursor)
            elif kind == "html_inline":
                index = self.find(child.content)
                if index is not None:
                    self.cursor = index + len(child.content)
                match = _TAG_NAME.match(child.content)
                if match and match.group(1).lower() not in _INLINE_TAGS:
                    out.add(" ", self.cursor)
            elif kind == "link_open":
                link_kinds.append(child.markup)
                if child.markup == "autolink":
                    index = self.find("<")
                    if index is not None:
                        self.cursor = index + 1
            elif kind == "link_close":
                if link_kinds and link_kinds.pop() == "autolink":
                    index = self.find(">")
                    if index is not None:
                        self.cursor = index + 1
                else:
                    self._skip_link_tail()
            elif kind == "image":
                index = self.find("![")
                if index is not None:
                    self.cursor = index + 2
                self.read(child.children or [], out)
                self._skip_link_tail()
            elif child.markup:
                index = self.find(child.markup)
                if index is not None:
                    self.cursor = index + len(child.markup)

    def _literal(self, content: str, out: _Builder) -> None:
        index = self.find(content)
        if index is None:
            out.add(content, self.cursor, spread=False)
            return
        out.add(content, index)
        self.cursor = index + len(content)

    def _skip_link_tail(self) -> None:
        """Move past `](destination "title")`, `][label]` or `]` after a link's text."""
        text, pos = self.source.text, self.cursor
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos >= len(text) or text[pos] != "]":
            return
        pos += 1
        if pos < len(text) and text[pos] == "(":
            depth, pos = 1, pos + 1
            while pos < len(text) and depth:
                char = text[pos]
                if char == "\\":
                    pos += 1
                elif char == "(":
                    depth += 1
                elif char == ")":
                    depth -= 1
                pos += 1
        elif pos < len(text) and text[pos] == "[":
            closing = text.find("]", pos)
            pos = len(text) if closing < 0 else closing + 1
        self.cursor = pos


def _html_prose(content: str, start: int, out: _Builder) -> None:
    """The text of a raw HTML block outside comments and tags, entities decoded."""
    kept = 0
    for match in _HTML_PIECE.finditer(content):
        _html_text(content[kept:match.start()], start + kept, out)
        piece = match.group(0)
        if piece.startswith("&"):
            out.add(html.unescape(piece), start + match.start(), spread=False)
        elif not piece.startswith("<!--"):
            name = _TAG_NAME.match(piece)
            if not name or name.group(1).lower() not in _INLINE_TAGS:
                out.add(" ", start + match.start())
        kept = match.end()
    _html_text(content[kept:], start + kept, out)


def _html_text(text: str, start: int, out: _Builder) -> None:
    for index, char in enumerate(text):
        if char == "\n":
            out.line_break(start + index)
        else:
            out.add(char, start + index)


def _finish(kind: str, raw: _Builder, source: _Source) -> ProseBlock | None:
    chars: list[str] = []
    offsets: list[int] = []
    for text, offset, spread in raw.pieces:
        if text.isascii():
            chars.append(text)
            offsets.extend(range(offset, offset + len(text)) if spread else [offset] * len(text))
            continue
        for index, char in enumerate(text):
            normal = normalise_char(char)
            chars.append(normal)
            offsets.extend([offset + index if spread else offset] * len(normal))
    text = "".join(chars)
    if not text.strip():
        return None
    return ProseBlock(kind, text, source.original_offsets(offsets), source.original_line_starts, source.first_line)


def parser_reads(text: str) -> bool:
    """False for a text with more than `MAX_LINK_OPENERS` `[` before its last `]` (the ones
    after it cost nothing: `_markup_that_starts_nothing`); such a text is read line by line."""
    return text.count("[", 0, max(text.rfind("]"), 0)) <= MAX_LINK_OPENERS


def _deepest(tokens) -> int:
    return max((max([token.level] + [child.level for child in token.children or []]) for token in tokens), default=0)


def _lines_as_prose(source: _Source) -> list[ProseBlock]:
    """Every non-blank line as one block of prose, read without Markdown."""
    blocks = []
    for index, start in enumerate(source.line_starts):
        end = source.line_starts[index + 1] - 1 if index + 1 < len(source.line_starts) else len(source.text)
        out = _Builder()
        out.add(source.text[start:end], start)
        block = _finish("line", out, source)
        if block:
            blocks.append(block)
    return blocks


def prose_blocks(text: str, first_line: int = 1) -> list[ProseBlock]:
    """The rendered prose of Markdown `text` (whose first line is `first_line`), block by block.

    A text nested `MAX_NESTING` levels deep (block quotes, lists, images in links), or one
    with more than `MAX_LINK_OPENERS` link labels opened, is more than the parser reads; rather than lose what lies deeper, every line of such a text is
    read as prose, Markdown and all.
    """
    source = _Source(text, first_line)
    if not parser_reads(source.text):
        return _lines_as_prose(source)
    tokens = parsed_tokens(source.text)
    if _deepest(tokens) >= MAX_NESTING - 1:
        return _lines_as_prose(source)
    reader = _InlineReader(source)
    blocks: list[ProseBlock] = []
    row: _Builder | None = None
    kind, in_head, header = "paragraph", False, ""
    for token in tokens:
        if token.map is not None and token.type != "inline":
            reader.enter_block(source.offset_of_line(token.map[0]), source.offset_of_line(token.map[1]))
        if token.type == "heading_open":
            kind = "heading"
        elif token.type == "paragraph_open":
            kind = "paragraph"
        elif token.type == "tr_open":
            row = _Builder()
        elif token.type == "thead_open":
            in_head, header = True, ""
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_close" and row is not None:
            block = _finish("table row", row, source)
            if block and in_head:
                header = block.text
            elif block and header:
                block = replace(block, header=header)
            if block:
                blocks.append(block)
            row = None
        elif token.type == "inline":
            if row is not None:
                if row.pieces:
                    row.add(" | ", reader.cursor, spread=False)
                reader.read(token.children or [], row)
            else:
                out = _Builder()
                reader.read(token.children or [], out)
                block = _finish(kind, out, source)
                if block:
                    blocks.append(block)
        elif token.type in ("fence", "code_block") and token.map is not None:
            blocks.extend(_code_blocks(token.map, source))
        elif token.type == "html_block":
            start = source.offset_of_line(token.map[0])
            out = _Builder()
            _html_prose(source.text[start:source.offset_of_line(token.map[1])], start, out)
            block = _finish("html", out, source)
            if block:
                blocks.append(block)
    return _with_headings(blocks)


def _code_blocks(line_span: list[int], source: _Source) -> list[ProseBlock]:
    """What a reader reads in the code block on source lines [line_span): pasted results, as blocks of prose
    (`gates.model.code_prose`)."""
    lines = []
    for index in range(line_span[0], line_span[1]):
        start = source.offset_of_line(index)
        lines.append((start, source.text[start:source.offset_of_line(index + 1)].rstrip("\n")))
    blocks = []
    for piece in code_pieces(lines):
        out = _Builder()
        last = 0
        for text, offset in piece.parts:
            out.add(text, last if offset < 0 else offset, spread=offset >= 0)
            last = offset if offset >= 0 else last
        block = _finish(piece.kind, out, source)
        if block:
            blocks.append(replace(block, header=piece.header) if piece.header else block)
    return blocks


def _with_headings(blocks: list[ProseBlock]) -> list[ProseBlock]:
    heading = ""
    for index, block in enumerate(blocks):
        if block.kind == "heading":
            heading = block.text
        else:
            blocks[index] = replace(block, heading=heading)
    return blocks
