"""The body of a design record: § sections, fenced code, Markdown links.

Scanners here are written to take linear time on hostile input (a record is
untrusted): no regular expression that can backtrack across a whole line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+§[ \t]*(\d+(?:\.\d+)*)(.*)$")
_LINK_TARGET = re.compile(r"[ \t]*<?([^)\s>]+)>?(?:[ \t]+\"[^\"]*\")?[ \t]*\)")
_TARGET_RUN = re.compile(r"[ \t]*<?[^)\s>]*")
MAX_LINK_TEXT = 500


def iter_links(line: str):
    """(start, end, text, target) of each inline Markdown link `[text](target "title")` in a line.

    A scanner rather than one regular expression, so that hostile lines (thousands
    of brackets) cost linear time.
    """
    pos = 0
    while True:
        index = line.find("](", pos)
        if index < 0:
            return
        opening = line.rfind("[", max(0, index - MAX_LINK_TEXT), index)
        match = _LINK_TARGET.match(line, index + 2)
        if match and opening >= 0:
            yield opening, match.end(), line[opening + 1:index], match.group(1)
            pos = match.end()
        else:
            pos = max(index + 2, _TARGET_RUN.match(line, index + 2).end())


_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]{1,999}\]:[ \t]*<?([^\s>]+)>?")
_HTML_LINK = re.compile(r"""(?:href|src)[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def link_targets(line: str):
    """(col, target) of every link on a line, in every form a reader can follow: inline links,
    reference definitions (`[label]: target`, which reference-style links use) and HTML `href`/`src`."""
    for start, _, _, target in iter_links(line):
        yield start + 1, target
    definition = _LINK_DEFINITION.match(line)
    if definition:
        yield definition.start(1) + 1, definition.group(1)
    for match in _HTML_LINK.finditer(line):
        group = 1 if match.group(1) is not None else 2
        yield match.start(group) + 1, match.group(group)


@dataclass(frozen=True)
class Section:
    """A top-level `§n` section of the body; `text` includes its sub-sections."""

    number: int
    title: str
    start_line: int
    end_line: int
    text: str

    def lines(self):
        """(absolute line number, line text) for every line of the section."""
        for offset, line in enumerate(self.text.split("\n")):
            yield self.start_line + offset, line


@dataclass(frozen=True)
class Link:
    """A Markdown link in the body: its target as written and the line it is on."""

    text: str
    target: str
    line: int
    col: int


def prose_lines(text: str, first_line: int):
    """(line number, line) for lines outside fenced code blocks and HTML comments."""
    fence = None
    in_comment = False
    for offset, line in enumerate(text.split("\n")):
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            in_comment = True
            continue
        yield first_line + offset, line


def split_sections(body: str, first_line: int) -> list[Section]:
    lines = body.split("\n")
    starts = []
    for line_no, line in prose_lines(body, first_line):
        match = _HEADING.match(line)
        if match and "." not in match.group(2):
            title = match.group(3).strip().rstrip("#").strip()
            title = title[1:].strip() if title.startswith(".") else title
            starts.append((line_no - first_line, int(match.group(2)), title))
    sections = []
    for index, (offset, number, title) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        text = "\n".join(lines[offset:end])
        sections.append(Section(number, title, first_line + offset, first_line + end - 1, text))
    return sections
