"""Which artifact value a quoted number claims to be, and whether it is that value.

A measured number in a record is tied to one named value of one cited artifact.
A number that names no value is not checked against "whatever the artifacts
happen to contain": that would let 35.02 pass for 36.55 because some raw sample
was 35.02. The ways a number names its value:

1. An explicit reference in inline code, `` `ARTIFACT-ID:KEY.PATH` `` (the path
   is under the artifact's `results`; `results.` may be written or not):
   - right after the number, optionally in brackets or after a comparative:
     ``36.55 µs (`bench-splitkv-h200:summary.llama8b-b1-32k.ours_us`)``,
     ``4.2x faster (`bench-h200:rows[0].speedup`)``;
   - or before it with an operator: ``…:metrics.launch__grid_size` = 256``.
   The words right before the number must not contradict the reference: a dtype or
   case that tells the key's values apart (`fp16 … (`…:per_dtype.fp32.rel_l2`)`), or
   a value's name with an operator (`rel_l2 = 2 (`…:per_dtype.fp16.cases`)`), make
   the tie `mislabelled` (`CitedValues.label_problem`).
   A path steps through objects by key (keys may hold dots:
   `metrics.dram__bytes_read.sum`) and through lists by index, `rows[3]`, or by
   the one element whose field has a value, `rows[visible_tokens=2048]`.
2. A metric name, a key of a cited artifact's `results.metrics` (also written
   with spaces or hyphens for `_`: `grid blocks`), with an operator: `name = v`,
   `≈ v`, `~ v`, `is v`, `was v`, `of v`, `equals v`, `→ v`, `(v)`, `: v`, hedged
   (`= ~v`, `is about v`), or right after the number (`14 grid_blocks`); bare, in
   `code` or in **bold**. `≥ ≤ < >` (and `at least`, `below` …) state a bound,
   which must hold rather than equal. A name that several cited artifacts
   measure is resolved by the artifact the text links; if that does not single
   it out, write the reference form.
3. With `key_names` (the results section), any key of the results holding a
   number ties the next number of its clause, whatever the words between
   (`fp32 rel_l2 is 1.0e-9`); names take the following numbers in order; a
   name right after a free number (`48 cases`) takes that one (any of its values
   may match). The
   dtype or case words of the clause (else the line) pick among the key's
   values; the number must equal one of those picked; values that differ with
   nothing to pick are a problem asking for the reference form.
4. In a table:
   - a header cell holding a reference template maps its column: with
     ``| shape | split route `bench-splitkv-h200:summary.{row}.ours_us` |`` the
     first number of each row's cell in that column is
     `summary.<row>.ours_us`, where <row> is the row's first cell (without
     backticks or bold);
   - a cell naming a metric (as in 2., or a key as in 3.) is a name whose value is
     in the column headed `value` (值, 数值, measured), else the first later cell
     holding a number; `a / b` names pair with `x / y` values.

A paragraph is read as one text (a name ending one line ties the number starting
the next); table rows line by line. `SectionTracer.trace` returns every tie it finds
(`Tie`) and every measured number it finds untied, and the numbers presented as a
limit (`≤ 1.0e-6`, `max 1.0e-6`, a column headed tolerance/limit/bound);
`Tie.problem` says why a tie cannot be checked (unknown artifact, no such key,
ambiguous name), `Tie.mismatch()` whether the value differs (or the bound fails).
Units and percentages are decided in `gates.checks.quoted_numbers.in_quoted_unit`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, replace

from gates.checks.cited_values import (
    HEDGE, NAME_END, NAME_START, OPERATOR, RELATION, RELATION_WORDS, CitedValues, Tie, Trace, TraceError, spelled,
)
from gates.checks.quoted_numbers import (
    COMPARATIVES, NUMBER, NUMBER_START, UNIT_END, UNITS, Quoted, decimals, first_number, holds, numbers_with_units,
    parse_quoted, strip_code_spans,
)
from gates.model.markdown_body import iter_links

ROW = "{row}"
VALUE_HEADERS = ("value", "values", "measured", "值", "数值", "测量值")
_CODE = r"`([^`\n]+)`"
_CODE_SPAN = re.compile(_CODE)
# Every number the tracer reads (`NUMBER`) holds a decimal digit: a text without one holds none
_DIGIT = re.compile(r"\d")
_BOLD = r"\*\*`?([^*`\n]+?)`?\*\*"
_QUANTITY = rf"({NUMBER})(?:[ \t]?({UNITS}){UNIT_END})?"
_LIMIT_WORDS = (r"max|maximum|tolerance|tolerances|limit|limits|bound|ceiling|upper bound|min|minimum|floor|"
                r"lower bound|容差|上限|下限|阈值")
# what ends the text right before a number presented as a bound: `≤ 1e-6`, `below 1e-6`, `max 1e-6`
_BOUND_BEFORE = re.compile(rf"(?:(?P<rel>{RELATION})|(?P<limit>{_LIMIT_WORDS})(?:[ \t]+(?:of|is|=|:))?)"
                           rf"[ \t:=]*(?:{HEDGE}[ \t]*)?$", re.IGNORECASE)
_BOUND_NUMBER = re.compile(rf"(?:(?P<rel>{RELATION})|(?<![A-Za-z])(?P<limit>{_LIMIT_WORDS})(?:[ \t]+(?:of|is|=|:))?)"
                           rf"[ \t:=]*(?:{HEDGE}[ \t]*)?{NUMBER_START}(?P<num>{NUMBER})", re.IGNORECASE)
_BOUND_REACH = 40  # how far before a number the words presenting it as a bound are looked for
_LOWER_LIMIT = re.compile(r"min|minimum|floor|lower bound|下限", re.IGNORECASE)
_LIMIT_HEADER = re.compile(rf"(?<![A-Za-z])(?:{_LIMIT_WORDS})(?![A-Za-z])", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[;!?；。，！？]|,(?!\d{3})|\.(?=\s|$)")
_NUMBER_NEXT = re.compile(rf"[ \t]*(?:{HEDGE}[ \t]*)?[-+−]?\d")
# `9.8 µs (`ref`)`, `4.2x faster (`ref`)`: a comparative may stand between a ratio and its reference
_BEFORE_REFERENCE = re.compile(rf"{NUMBER_START}{_QUANTITY}(?:[ \t]+(?:{COMPARATIVES})\b)?[ \t]*[(\[（]?[ \t]*$")
_REFERENCE_REACH = 80  # how far before a reference its number is looked for
_DELIMITER_CELL = re.compile(r":?-{2,}:?")


def _first_number(text: str, col: int = 1) -> Quoted | None:
    """The first number of a cell outside its code spans (names like `m1` hold no value)."""
    return first_number(strip_code_spans(text), col)


def _clean_name(text: str) -> str:
    return text.strip().strip("*").strip("`").strip()


def _name_alternatives(names) -> str:
    bare = "|".join(spelled(name) for name in sorted(names, key=len, reverse=True)) or r"(?!x)x"
    return "|".join([_CODE, _BOLD, rf"{NAME_START}((?i:{bare})){NAME_END}"])


_NAMED_QUANTITY = rf"(?P<num>{NUMBER})(?:[ \t]?(?P<unit>{UNITS}){UNIT_END})?"
_ANY_NUMBER = re.compile(rf"{NUMBER_START}{_NAMED_QUANTITY}")


def _relation_before(text: str) -> str:
    """The relation a number is presented in by the words right before it: `≤ v`, `below v`, `max v`."""
    match = _BOUND_BEFORE.search(text[-_BOUND_REACH:])
    if not match:
        return "="
    if match.group("rel"):
        return RELATION_WORDS[match.group("rel").lower()]
    return "≥" if _LOWER_LIMIT.fullmatch(match.group("limit")) else "≤"


_PHRASE_BREAK = re.compile(rf"[;!?。；！？|]|\.(?=\s|$)|{NUMBER_START}{NUMBER}")
_PHRASE_REACH = 120


def _phrase_before(text: str, end: int) -> str:
    """The words that present the number at `end`: back to the previous number, sentence end or table cell."""
    start = max(0, end - _PHRASE_REACH)
    breaks = [match.end() for match in _PHRASE_BREAK.finditer(text, start, end)]
    return text[breaks[-1] if breaks else start:end]


def readable(line: str, values: CitedValues) -> str:
    """The line as numbers are read from it, same length: references and link targets blanked.

    Other inline code keeps its text (only the backticks go), so a number cannot hide from
    the check by being written as `35.02 µs`, nor a name by being written as `rel_l2`.
    """
    def blank(match: re.Match) -> str:
        if values.is_reference(match.group(1).replace(ROW, "x")):
            return " " * len(match.group(0))
        return f" {match.group(1)} "
    if "`" not in line and "](" not in line:  # no code span and no link target: nothing to blank
        return line
    return strip_code_spans(_CODE_SPAN.sub(blank, line))


class LineTracer:
    """Finds the ties of prose lines and table rows against `values`.

    Metric names (keys of `results.metrics`, also spelled with spaces or hyphens for `_`) tie
    the number after an operator (`=`, `≈`, `~`, `:`, `is`, `was`, `of`, `equals`, `→`, `(`,
    and the bounds `≥ ≤ < >`) or the number right before them (`14 grid_blocks`). With
    `values.key_names`, a key name of the results ties the next number of its clause.
    """

    def __init__(self, values: CitedValues):
        self.values = values
        names = _name_alternatives(values.metric_names)
        self._before = re.compile(rf"(?:{names})[ \t]*{OPERATOR}[ \t]*{_NAMED_QUANTITY}")
        self._number_first = re.compile(rf"{NUMBER_START}{_NAMED_QUANTITY}[ \t]+(?:{names})")
        self._names = re.compile(_name_alternatives(values.metric_names | values.key_names))
        keys = sorted(values.key_names, key=len, reverse=True)
        self._keys = (re.compile(rf"{NAME_START}((?i:{'|'.join(map(spelled, keys))})){NAME_END}")
                      if keys else None)

    def tie(self, line_no: int, quoted: Quoted, name: str, linked, relation: str = "=", clause: str = "",
            around: str = "", any_value: bool = False) -> Tie | None:
        """`quoted` tied to what `name` names; None when `name` is no name (plain code, a word).

        `any_value`: a key name with several values that nothing picks among is compared with all of them.
        """
        try:
            target = self.values.name(name, linked)
            if target is None and name in self.values.key_names:
                found = self.values.key(name, clause, around, any_value)
                return Tie(line_no, quoted, name, found[0], relation=relation,
                           alternatives=found if len(found) > 1 else ())
        except TraceError as exc:
            return Tie(line_no, quoted, name, problem=str(exc), relation=relation)
        if target is None:
            return None
        return Tie(line_no, quoted, self.values.canonical(name), target, relation=relation)

    def prose_ties(self, line_no: int, text: str, offset: int = 0, linked=(), around: str = "") -> list[Tie]:
        """Ties written inline: `name <op> number`, `number name`, `number `reference``, and key names."""
        if not _DIGIT.search(text):  # every tie is a number's
            return []
        ties: dict[int, Tie] = {}
        for match in self._before.finditer(text):
            name = next(group for group in match.groups()[:3] if group is not None)
            relation = RELATION_WORDS.get((match.group("rel") or match.group("rel2") or "=").lower(), "=")
            quoted = parse_quoted(match.group("num"), match.group("unit") or "", offset + match.start("num") + 1)
            tie = quoted and self.tie(line_no, quoted, _clean_name(name), linked, relation)
            if tie:
                ties.setdefault(quoted.col, tie)
        for code in _CODE_SPAN.finditer(text):
            if not self.values.is_reference(code.group(1)):
                continue
            match = _BEFORE_REFERENCE.search(text, max(0, code.start() - _REFERENCE_REACH), code.start())
            if match is None:
                continue
            quoted = parse_quoted(match.group(1), match.group(2) or "", offset + match.start(1) + 1)
            tie = quoted and self.tie(line_no, quoted, code.group(1), linked)
            if tie and not tie.problem:
                mislabel = self.values.label_problem(code.group(1), _phrase_before(readable(text, self.values),
                                                                                   match.start(1)))
                tie = replace(tie, problem=mislabel, mislabelled=True) if mislabel else tie
            if tie:
                ties.setdefault(quoted.col, tie)
        for match in self._number_first.finditer(text):
            name = next(group for group in match.groups()[-3:] if group is not None)
            quoted = parse_quoted(match.group("num"), match.group("unit") or "", offset + match.start("num") + 1)
            tie = quoted and self.tie(line_no, quoted, _clean_name(name), linked)
            if tie:
                ties.setdefault(quoted.col, tie)
        if self._keys is not None:
            self._key_ties(line_no, readable(text, self.values), offset, linked, around or text, ties)
        return list(ties.values())

    def _key_ties(self, line_no: int, text: str, offset: int, linked, around: str, ties: dict[int, Tie]) -> None:
        """In each clause, key names take the numbers after them in order (`a and b are 1 and 2`).

        A clause ends at a sentence end, a semicolon or a comma, except a comma right before a
        number (`rel_l2, 1.0e-9`): there the name still takes it.
        """
        names = list(self._keys.finditer(text))
        name_starts = [match.start() for match in names]
        events = [(match.start(), 0, match) for match in names]
        events += [(match.start(), 1, match) for match in _CLAUSE_END.finditer(text)]
        for match in _ANY_NUMBER.finditer(text):
            inside = bisect_left(name_starts, match.start() + 1) - 1
            if match.group("num").count(".") > 1 or (inside >= 0 and names[inside].end() > match.start()):
                continue
            events.append((match.start("num"), 2, match))
        boundaries = [0] + [match.end() for _, kind, match in events if kind == 1]
        boundaries.sort()
        def clause_of(position: int) -> str:
            at = bisect_left(boundaries, position + 1) - 1
            return text[boundaries[at]:boundaries[at + 1] if at + 1 < len(boundaries) else len(text)]

        def tie_to(match: re.Match, name: str, relation: str, any_value: bool = False) -> None:
            begin = match.start("num")
            quoted = parse_quoted(match.group("num"), match.group("unit") or "", offset + begin + 1)
            if quoted is not None and quoted.col not in ties:
                tie = self.tie(line_no, quoted, name, linked, relation, clause_of(begin), around, any_value)
                if tie:
                    ties[quoted.col] = tie

        ordered = sorted(events, key=lambda event: (event[0], event[1]))
        pending: deque = deque()
        for at, (begin, kind, match) in enumerate(ordered):
            if kind == 0:
                previous = ordered[at - 1] if at else None
                if not (previous and previous[1] == 2 and self._count_of_next(text, previous[2], begin)):
                    pending.append((match.end(), self.values.canonical(match.group(1))))
                continue
            if kind == 1:
                if not (match.group(0) == "," and _NUMBER_NEXT.match(text, match.end())):
                    pending.clear()
                continue
            following = ordered[at + 1] if at + 1 < len(ordered) else None
            if following and following[1] == 0 and self._count_of_next(text, match, following[0]):
                # `48 cases`, `2048 visible tokens`, `1.0e-9 rel_l2`: the number right before a name is its own
                tie_to(match, self.values.canonical(following[2].group(1)), "=", any_value=True)
            elif pending:
                name_end, name = pending.popleft()
                tie_to(match, name, _relation_before(text[name_end:begin]))

    @staticmethod
    def _count_of_next(text: str, number: re.Match, name_start: int) -> bool:
        """Whether a number belongs to the name right after it: only spaces between, and the number
        not bound to what stands before it (`Hq=24 Hkv=4`: 24 is Hq's)."""
        begin = number.start("num")
        return (not text[number.end():name_start].strip()
                and not _OPERATOR_AT_END.search(text[max(0, begin - 4):begin]))

    def bounds(self, text: str, offset: int = 0) -> set[int]:
        """Columns of the numbers presented as a limit (`≤ 1.0e-6`, `max 1.0e-6`, `tolerance 1.0e-6`)."""
        if not _DIGIT.search(text):
            return set()
        return {offset + match.start("num") + 1 for match in _BOUND_NUMBER.finditer(readable(text, self.values))}

    def cell_names(self, cell: str, linked=()) -> list[str]:
        """Metric names, key names or references a table cell holds (the cell names a value)."""
        found = []
        for match in self._names.finditer(cell):
            name = _clean_name(next(group for group in match.groups() if group is not None))
            name = self.values.canonical(name)
            if name in self.values.metric_names or name in self.values.key_names or self.values.is_reference(name):
                found.append(name)
        return found


@dataclass(frozen=True)
class Cell:
    text: str
    col: int


def split_row(line: str) -> list[Cell]:
    """The cells of a Markdown table row, with the 1-based column where each starts (pipes in code stay)."""
    cells, in_code = [], False
    start = line.index("|") + 1
    index = start
    while index < len(line):
        char = line[index]
        if char == "`":
            in_code = not in_code
        elif char == "\\":
            index += 1
        elif char == "|" and not in_code:
            cells.append(Cell(line[start:index], start + 1))
            start = index + 1
        index += 1
    if line[start:].strip():
        cells.append(Cell(line[start:], start + 1))
    return cells


def _is_delimiter(cells: list[Cell]) -> bool:
    return all(_DELIMITER_CELL.fullmatch(cell.text.strip()) or not cell.text.strip() for cell in cells)


def _templates(header: list[Cell], values: CitedValues) -> dict[int, str]:
    templates = {}
    for index, cell in enumerate(header):
        for code in _CODE_SPAN.findall(cell.text):
            if values.is_reference(code.replace(ROW, "x")):
                templates[index] = code
    return templates


def _value_column(header: list[Cell]) -> int | None:
    for index, cell in enumerate(header):
        if _clean_name(cell.text).lower() in VALUE_HEADERS:
            return index
    return None


class SectionTracer:
    """Traces the lines of one section: tables by their header, prose line by line."""

    def __init__(self, values: CitedValues, linked_ids=lambda line: ()):
        self.values = values
        self.lines = LineTracer(values)
        self.linked_ids = linked_ids

    def trace(self, lines, measured) -> Trace:
        """Ties in `lines` ((line number, text) pairs), and the numbers `measured(text, is_table)` finds untied."""
        trace = Trace()
        header: list[Cell] | None = None
        templates: dict[int, str] = {}
        value_column = None
        paragraph: list[tuple[int, str]] = []
        for line_no, raw in lines:
            if not raw.lstrip().startswith("|"):
                header = None
                if paragraph and _starts_block(raw):
                    self._paragraph(trace, paragraph, measured)
                    paragraph = []
                if raw.strip():
                    paragraph.append((line_no, raw))
                if _HEADING_LINE.match(raw):
                    self._paragraph(trace, paragraph, measured)
                    paragraph = []
                continue
            self._paragraph(trace, paragraph, measured)
            paragraph = []
            cells = split_row(raw)
            if header is None:
                header, templates, value_column = cells, _templates(cells, self.values), _value_column(cells)
                self._collect(trace, line_no, raw, [], measured(readable(raw, self.values), True))
                continue
            if _is_delimiter(cells):
                continue
            ties = self._row_ties(line_no, raw, header, cells, templates, value_column)
            trace.limits.update((line_no, col) for col in self._row_bounds(header, cells))
            self._collect(trace, line_no, raw, ties, measured(readable(raw, self.values), True))
        self._paragraph(trace, paragraph, measured)
        return trace

    def _paragraph(self, trace: Trace, lines: list[tuple[int, str]], measured) -> None:
        """A paragraph's lines read as one text (a name may end one line and its number start the next)."""
        if not lines:
            return
        joined = " ".join(raw for _, raw in lines)
        starts, at = [], 0
        for _, raw in lines:
            starts.append(at)
            at += len(raw) + 1
        by_line: dict[int, list[Tie]] = {}
        for tie in self.lines.prose_ties(lines[0][0], joined, linked=self.linked_ids(joined)):
            index = bisect_left(starts, tie.quoted.col) - 1
            line_no = lines[index][0]
            moved = replace(tie, line=line_no, quoted=replace(tie.quoted, col=tie.quoted.col - starts[index]))
            by_line.setdefault(line_no, []).append(moved)
        for col in self.lines.bounds(joined):
            index = bisect_left(starts, col) - 1
            trace.limits.add((lines[index][0], col - starts[index]))
        for line_no, raw in lines:
            self._collect(trace, line_no, raw, by_line.get(line_no, []), measured(readable(raw, self.values), False))

    def _row_bounds(self, header: list[Cell], cells: list[Cell]) -> set[int]:
        """Numbers presented as limits in a row: in a column headed tolerance/limit/bound/max/min, or `≤ v`."""
        found = set()
        for index, cell in enumerate(cells):
            found |= self.lines.bounds(cell.text, cell.col - 1)
            if index < len(header) and _LIMIT_HEADER.search(strip_code_spans(header[index].text)):
                text = readable(cell.text, self.values)
                found |= {cell.col + match.start("num") for match in _ANY_NUMBER.finditer(text)}
        return found

    def _collect(self, trace: Trace, line_no: int, raw: str, ties: list[Tie], numbers: list[Quoted]) -> None:
        trace.ties.extend(ties)
        tied = {tie.quoted.col for tie in ties}
        trace.untied.extend((line_no, number) for number in numbers if number.col not in tied)

    def _header_names(self, header: list[Cell], templates: dict[int, str]) -> dict[int, list[str]]:
        """Columns (without a template) whose header cell is one metric or key name and nothing else."""
        found = {}
        for index, cell in enumerate(header):
            if index in templates or index == 0:
                continue
            names = self.lines.cell_names(cell.text)
            if len(names) == 1 and self.values.canonical(_clean_name(cell.text)) == names[0]:
                found[index] = names
        return found

    def _row_ties(self, line_no, raw, header, cells, templates, value_column) -> list[Tie]:
        linked = self.linked_ids(raw)
        around = " ".join(cell.text for cell in header) + " " + raw
        ties: dict[int, Tie] = {}
        for cell in cells:
            for tie in self.lines.prose_ties(line_no, cell.text, cell.col - 1, linked, around):
                ties.setdefault(tie.quoted.col, tie)
        row_id = _clean_name(cells[0].text) if cells else ""
        for index, template in templates.items():
            if index < len(cells):
                quoted = _first_number(cells[index].text, cells[index].col)
                if quoted is not None:
                    tie = self.lines.tie(line_no, quoted, template.replace(ROW, row_id), linked)
                    if tie:
                        ties[quoted.col] = tie
        for index, names in self._header_names(header, templates).items():
            if index < len(cells):  # `| dtype | rel_l2 |`: the column holds values of the name it is headed with
                quoted = _first_number(cells[index].text, cells[index].col)
                tie = quoted and self.lines.tie(line_no, quoted, names[0], linked, clause=raw, around=around)
                if tie:
                    ties.setdefault(quoted.col, tie)
        next_with_number: list[int | None] = [None] * (len(cells) + 1)
        for index in range(len(cells) - 1, -1, -1):
            has_number = _first_number(cells[index].text) is not None
            next_with_number[index] = index if has_number else next_with_number[index + 1]
        tied_cols = sorted(ties)
        for index, cell in enumerate(cells):
            names = self.lines.cell_names(cell.text, linked)
            if not names or _any_between(tied_cols, cell.col, cell.col + len(cell.text)):
                continue
            value_cell = self._value_cell(cells, index, value_column, next_with_number)
            if value_cell is None:
                continue
            for name, quoted in self._pairs(cell, value_cell, names):
                tie = self.lines.tie(line_no, quoted, name, linked, clause=raw, around=around)
                if tie:
                    ties.setdefault(quoted.col, tie)
        return list(ties.values())

    @staticmethod
    def _value_cell(cells: list[Cell], index: int, value_column: int | None, next_with_number) -> Cell | None:
        if value_column is not None and value_column != index and value_column < len(cells):
            if next_with_number[value_column] == value_column:
                return cells[value_column]
        later = next_with_number[index + 1]
        return cells[later] if later is not None else None

    def _pairs(self, name_cell: Cell, value_cell: Cell, names: list[str]):
        name_parts = re.split(r"\s/\s", name_cell.text)
        value_parts, offset, starts = [], 0, []
        for part in re.split(r"(\s/\s)", value_cell.text):
            if re.fullmatch(r"\s/\s", part):
                offset += len(part)
                continue
            value_parts.append(part)
            starts.append(offset)
            offset += len(part)
        if len(names) > 1 and len(name_parts) == len(value_parts):
            for name_part, value_part, start in zip(name_parts, value_parts, starts):
                inner = self.lines.cell_names(name_part)
                quoted = _first_number(value_part, value_cell.col + start)
                if inner and quoted:
                    yield inner[0], quoted
            return
        quoted = _first_number(value_cell.text, value_cell.col)
        if quoted:
            yield names[0], quoted


_HEADING_LINE = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}(?:[ \t]|$)|[-*+][ \t]|\d+[.)][ \t]|>)")
_OPERATOR_AT_END = re.compile(r"[=:≈~≤≥<>＝：][ \t]*$")


def _starts_block(line: str) -> bool:
    """Whether a line starts a new block rather than continuing a paragraph (blank, heading, list item, quote)."""
    return not line.strip() or _BLOCK_START.match(line) is not None


def _any_between(sorted_cols: list[int], start: int, end: int) -> bool:
    """Whether a tied column lies in [start, end) (the cell already ties its own number)."""
    at = bisect_left(sorted_cols, start)
    return at < len(sorted_cols) and sorted_cols[at] < end


def links_to_artifacts(record, entries):
    """A function giving the ids of the artifacts (among `entries`) that one line of `record` links."""
    id_by_path = {entry.path: entry.id for entry in entries}

    def linked(line: str) -> set[str]:
        return {id_by_path[rel] for _, _, _, target in iter_links(line)
                if (rel := record.link_target_rel(target)) in id_by_path}
    return linked


def measured_numbers(units_only: bool, prose_decimals: bool = False):
    """What a results section must trace: numbers with a unit, and (unless `units_only`) every number
    written with a decimal point or a power of ten in tables, and with `prose_decimals` in prose too
    ("the relative error is 0.00000001", "within 1e-12 of the oracle").

    Not measured: a number inside a word, name or path (`fp16`, `sm_90`, `v1.2`, `§7.1`, a reference,
    whose code is blanked), a software version (`CUDA 12.4`, `torch 2.11.0`), the numbering of a heading
    or list item (`### 7.1 Timing`, `1.`), and whole numbers without a unit (counts, sizes, shapes:
    `48 cases`, `B=1 Hq=32`, `(1, 32, 8, 128)`).
    """
    def measured(text: str, is_table: bool) -> list[Quoted]:
        if not _DIGIT.search(text):
            return []
        found = numbers_with_units(text)
        if not units_only and (is_table or prose_decimals):
            taken = {number.col for number in found}
            found.extend(number for number in decimals(text)
                         if number.col not in taken and not _is_label(text, number))
        return found
    return measured


_VERSION_BEFORE = re.compile(r"(?<![\w-])(?:v|version|release|python|py|cuda|cu|cudnn|nccl|torch|pytorch|triton|jax"
                             r"|numpy|driver|gcc|clang|llvm|nvcc|rocm|ubuntu|debian|sm|compute\s+capability"
                             r"|版本)[ \t:]*$", re.IGNORECASE)
_NUMBERING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+)?(?:§[ \t]*)?$")


def _is_label(text: str, number: Quoted) -> bool:
    """A number that labels rather than measures: a version after a software name, a heading's or item's numbering."""
    before = text[:number.col - 1]
    return bool(_VERSION_BEFORE.search(before[-40:]) or _NUMBERING.match(before))


_BAR_IN_NAME = re.compile(rf"(?:within[_ -]?|[<>]=?|[≤≥])[ \t]*({NUMBER})[ \t]*(pct|percent|%|x)?$", re.IGNORECASE)


def check_bars(artifacts) -> dict[str, tuple[float, ...]]:
    """The checks in the artifacts' results whose names state their bar, with the values the bar may be
    quoted as: `paged_within_1.1x` 1.1; `heuristic_within_10pct` 10 (%), 0.1 and 1.1 (a ratio);
    `read_ceiling_fraction>=0.85` 0.85."""
    bars: dict[str, tuple[float, ...]] = {}
    stack = list(artifacts)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
            for key in node:
                match = _BAR_IN_NAME.search(str(key))
                quoted = parse_quoted(match.group(1)) if match else None
                if quoted is not None:
                    percent = (match.group(2) or "").lower() in ("pct", "percent", "%")
                    bars[str(key)] = ((quoted.value, quoted.value / 100, 1 + quoted.value / 100) if percent
                                      else (quoted.value,))
    return bars


def restates_a_bar(line: str, quoted: Quoted, bars: dict[str, tuple[float, ...]]) -> bool:
    """Whether `quoted` is the bar of a check its line names (`heuristic_within_10pct` … "at most 1.1 times")."""
    lowered = line.lower()
    return any(name.lower() in lowered and any(holds(quoted, value) for value in values)
               for name, values in bars.items())


def no_measured_numbers(text: str, is_table: bool) -> list[Quoted]:
    """For sections where only numbers tied to a name are checked (§1)."""
    return []
