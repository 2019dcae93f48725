"""Which artifact value a quoted number claims to be, and whether it is that value.

A measured number in a record is tied to one named value of one cited artifact.
A number that names no value is not checked against "whatever the artifacts
happen to contain": that would let 35.02 pass for 36.55 because some raw sample
was 35.02. The ways a number names its value:

1. An explicit reference in inline code, `` `ARTIFACT-ID:KEY.PATH` `` (the path
   is under the artifact's `results`; `results.` may be written or not):
   - right after the number, optionally in brackets:
     ``36.55 µs (`bench-splitkv-h200:summary.llama8b-b1-32k.ours_us`)``;
   - or before it with an operator: ``…:metrics.launch__grid_size` = 256``.
   A path steps through objects by key (keys may hold dots:
   `metrics.dram__bytes_read.sum`) and through lists by index, `rows[3]`, or by
   the one element whose field has a value, `rows[visible_tokens=2048]`.
2. A metric name, a key of a cited artifact's `results.metrics`, with an
   operator: `name = v`, `name ≈ v`, `name ~ v`, `name is v`, `name: v`, with the
   name bare, in `code` or in **bold**. A name that several cited artifacts
   measure is resolved by the artifact the same line links; if that does not
   single it out, write the reference form.
3. In a table:
   - a header cell holding a reference template maps its column: with
     ``| shape | split route `bench-splitkv-h200:summary.{row}.ours_us` |`` the
     first number of each row's cell in that column is
     `summary.<row>.ours_us`, where <row> is the row's first cell (without
     backticks or bold);
   - a cell naming a metric (as in 2.) is a name whose value is in the column
     headed `value` (值, 数值, measured), else the first later cell holding a
     number; `a / b` names pair with `x / y` values.

`trace_lines` returns every tie it finds (`Tie`) and every measured number it
finds untied; `Tie.problem` says why a tie cannot be checked (unknown artifact,
no such key, ambiguous name), `Tie.mismatch()` whether the value differs.
Units and percentages are decided in `gates.quoted_numbers.in_quoted_unit`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

from gates.markdown_body import iter_links
from gates.quoted_numbers import (
    NUMBER, UNITS, Quoted, decimals, first_number, matches_value, numbers_with_units, parse_quoted, stored_unit,
    strip_code_spans,
)

ROW = "{row}"
VALUE_HEADERS = ("value", "values", "measured", "值", "数值", "测量值")
_REFERENCE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*):(\S+)$")
_CODE = r"`([^`\n]+)`"
_BOLD = r"\*\*`?([^*`\n]+?)`?\*\*"
_OPERATOR = r"(?:=|≈|~|≃|:|＝|：|\bis\b)"
_QUANTITY = rf"({NUMBER})(?:[ \t]?({UNITS})(?![\w/]))?"
_AFTER_NUMBER = re.compile(rf"(?<![\w.,§/#-]){_QUANTITY}[ \t]*[(\[（]?[ \t]*{_CODE}")
_SELECTOR = re.compile(r"\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]")
_DELIMITER_CELL = re.compile(r":?-{2,}:?")


class TraceError(ValueError):
    """A reference that names no value."""


@dataclass(frozen=True)
class NamedValue:
    artifact_id: str
    key: str
    value: object
    unit: str

    def shown(self) -> str:
        return f"{self.artifact_id}:{self.key} = {self.value}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class Tie:
    """A quoted number and the value it names (or why that value cannot be found)."""

    line: int
    quoted: Quoted
    name: str
    target: NamedValue | None = None
    problem: str | None = None

    def mismatch(self) -> bool:
        return self.target is not None and not matches_value(self.quoted, self.target.value, self.target.unit)


@dataclass
class Trace:
    ties: list[Tie] = field(default_factory=list)
    untied: list[tuple[int, Quoted]] = field(default_factory=list)


class CitedValues:
    """The values of the artifacts a check may use, by reference or by metric name.

    `artifacts` maps artifact id to its `results`; `declared` is every evidence id
    the record declares (a reference to one of those that is not usable is an error,
    not prose).
    """

    def __init__(self, artifacts: dict[str, dict], declared=()):
        self.artifacts = artifacts
        self.declared = set(declared) | set(artifacts)
        self._metrics: dict[str, list[NamedValue]] = {}
        for artifact_id, results in artifacts.items():
            metrics = results.get("metrics") if isinstance(results, dict) else None
            units = results.get("units") if isinstance(results, dict) else None
            units = units if isinstance(units, dict) else {}
            for name, value in (metrics or {}).items() if isinstance(metrics, dict) else ():
                unit = stored_unit(str(name), _declared_unit(units, name))
                self._metrics.setdefault(str(name), []).append(NamedValue(artifact_id, f"metrics.{name}", value, unit))

    @property
    def metric_names(self) -> set[str]:
        return set(self._metrics)

    def is_reference(self, text: str) -> bool:
        match = _REFERENCE.match(text)
        return bool(match) and match.group(1) in self.declared

    def resolve(self, reference: str) -> NamedValue:
        """The value `ARTIFACT-ID:PATH` names; TraceError says why there is none."""
        match = _REFERENCE.match(reference)
        if not match:
            raise TraceError(f"{reference!r} is not a reference: write `ARTIFACT-ID:KEY.PATH`")
        artifact_id, path = match.groups()
        if artifact_id not in self.artifacts:
            usable = ", ".join(sorted(self.artifacts)) or "none"
            raise TraceError(f"{artifact_id!r} is not an artifact this check reads (usable here: {usable})")
        results = self.artifacts[artifact_id]
        if path.startswith("results."):
            path = path[len("results."):]
        value, last_key = _walk(results, path, reference)
        if isinstance(value, (dict, list, bool, str)) or value is None:
            raise TraceError(f"{reference} is not a number (it is {type(value).__name__})")
        units = results.get("units") if path.startswith("metrics.") else None
        return NamedValue(artifact_id, path, value, stored_unit(last_key, _declared_unit(units, last_key)))

    def metric(self, name: str, linked_ids=()) -> NamedValue:
        """The one value a bare metric name names; TraceError when none or several."""
        found = self._metrics.get(name, [])
        if len(found) > 1 and linked_ids:
            narrowed = [value for value in found if value.artifact_id in linked_ids]
            found = narrowed or found
        if not found:
            raise TraceError(f"{name} is not a metric of any cited artifact")
        if len(found) > 1:
            sources = ", ".join(value.artifact_id for value in found)
            raise TraceError(f"{name} is a metric of several cited artifacts ({sources}): write "
                             f"`{found[0].artifact_id}:metrics.{name}` to say which")
        return found[0]

    def name(self, text: str, linked_ids=()) -> NamedValue | None:
        """The value `text` names (a reference or a metric name), None if it names none."""
        if self.is_reference(text):
            return self.resolve(text)
        if text in self._metrics:
            return self.metric(text, linked_ids)
        return None


def _declared_unit(units, key: str) -> str | None:
    """The unit an artifact's `results.units` declares for a metric key, if it declares one."""
    unit = units.get(key) if isinstance(units, dict) else None
    return unit if isinstance(unit, str) else None


def _walk(data, path: str, reference: str):
    """Follow `path` from `data`; keys may contain dots, so the longest key that fits wins."""
    node, rest, last_key = data, path, ""
    while rest:
        if isinstance(node, list):
            match = _SELECTOR.match(rest)
            if not match:
                raise TraceError(f"{reference}: {last_key or 'results'} is a list; index it as [n] or [field=value]")
            node = _select(node, match, reference)
            rest = rest[match.end():].removeprefix(".")
            continue
        if not isinstance(node, dict):
            raise TraceError(f"{reference}: {last_key} holds a value, not the key {rest!r}")
        keys = [key for key in node if rest == key or rest.startswith(key + ".") or rest.startswith(key + "[")]
        if not keys:
            raise TraceError(f"{reference}: there is no key {rest.split('.')[0]!r} under {last_key or 'results'}")
        last_key = max(keys, key=len)
        node = node[last_key]
        rest = rest[len(last_key):].removeprefix(".")
    return node, last_key


def _select(items: list, match: re.Match, reference: str):
    if match.group(1) is not None:
        index = int(match.group(1))
        if index >= len(items):
            raise TraceError(f"{reference}: index {index} is past the end of a list of {len(items)}")
        return items[index]
    name, wanted = match.group(2).strip(), match.group(3).strip()
    chosen = [item for item in items if isinstance(item, dict) and name in item and _same(item[name], wanted)]
    if len(chosen) != 1:
        raise TraceError(f"{reference}: {len(chosen)} elements have {name} = {wanted}; a selector must pick one")
    return chosen[0]


def _same(value, text: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value) == text
    quoted = parse_quoted(text)
    return quoted is not None and float(value) == quoted.value


def _first_number(text: str, col: int = 1) -> Quoted | None:
    """The first number of a cell outside its code spans (names like `m1` hold no value)."""
    return first_number(strip_code_spans(text), col)


def _clean_name(text: str) -> str:
    return text.strip().strip("*").strip("`").strip()


def _name_alternatives(names) -> str:
    bare = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True)) or r"(?!x)x"
    return "|".join([_CODE, _BOLD, rf"(?<![\w.`])({bare})(?![\w`]|\.\w)"])


class LineTracer:
    """Finds the ties of prose lines and table rows against `values`."""

    def __init__(self, values: CitedValues):
        self.values = values
        names = _name_alternatives(values.metric_names)
        self._before = re.compile(rf"(?:{names})[ \t]*{_OPERATOR}[ \t]*{_QUANTITY}")
        self._names = re.compile(names)

    def tie(self, line_no: int, quoted: Quoted, name: str, linked) -> Tie | None:
        """`quoted` tied to what `name` names; None when `name` is no name (plain code, a word)."""
        try:
            target = self.values.name(name, linked)
        except TraceError as exc:
            return Tie(line_no, quoted, name, problem=str(exc))
        return Tie(line_no, quoted, name, target) if target is not None else None

    def prose_ties(self, line_no: int, text: str, offset: int = 0, linked=()) -> list[Tie]:
        """Ties written inline: `name <op> number` and `number `reference``."""
        ties: dict[int, Tie] = {}
        for match in self._before.finditer(text):
            name = next(group for group in match.groups()[:3] if group is not None)
            quoted = parse_quoted(match.group(4), match.group(5) or "", offset + match.start(4) + 1)
            tie = quoted and self.tie(line_no, quoted, _clean_name(name), linked)
            if tie:
                ties.setdefault(quoted.col, tie)
        for match in _AFTER_NUMBER.finditer(text):
            if not self.values.is_reference(match.group(3)):
                continue
            quoted = parse_quoted(match.group(1), match.group(2) or "", offset + match.start(1) + 1)
            tie = quoted and self.tie(line_no, quoted, match.group(3), linked)
            if tie:
                ties.setdefault(quoted.col, tie)
        return list(ties.values())

    def cell_names(self, cell: str, linked=()) -> list[str]:
        """Metric names or references a table cell holds (the cell names a value)."""
        found = []
        for match in self._names.finditer(cell):
            name = _clean_name(next(group for group in match.groups() if group is not None))
            if name in self.values.metric_names or self.values.is_reference(name):
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
        for code in re.findall(_CODE, cell.text):
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
        for line_no, raw in lines:
            if not raw.lstrip().startswith("|"):
                header = None
                ties = self.lines.prose_ties(line_no, raw, linked=self.linked_ids(raw))
                self._collect(trace, line_no, raw, ties, measured(self._without_references(raw), False))
                continue
            cells = split_row(raw)
            if header is None:
                header, templates, value_column = cells, _templates(cells, self.values), _value_column(cells)
                self._collect(trace, line_no, raw, [], measured(self._without_references(raw), True))
                continue
            if _is_delimiter(cells):
                continue
            ties = self._row_ties(line_no, raw, header, cells, templates, value_column)
            self._collect(trace, line_no, raw, ties, measured(self._without_references(raw), True))
        return trace

    def _without_references(self, line: str) -> str:
        """The line as measured numbers are read from it: references and link targets blanked.

        Other inline code keeps its text (only the backticks go), so a number cannot hide from
        the check by being written as `35.02 µs`.
        """
        def blank(match: re.Match) -> str:
            if self.values.is_reference(match.group(1).replace(ROW, "x")):
                return " " * len(match.group(0))
            return f" {match.group(1)} "
        return strip_code_spans(re.sub(_CODE, blank, line))

    def _collect(self, trace: Trace, line_no: int, raw: str, ties: list[Tie], numbers: list[Quoted]) -> None:
        trace.ties.extend(ties)
        tied = {tie.quoted.col for tie in ties}
        trace.untied.extend((line_no, number) for number in numbers if number.col not in tied)

    def _row_ties(self, line_no, raw, header, cells, templates, value_column) -> list[Tie]:
        linked = self.linked_ids(raw)
        ties: dict[int, Tie] = {}
        for cell in cells:
            for tie in self.lines.prose_ties(line_no, cell.text, cell.col - 1, linked):
                ties.setdefault(tie.quoted.col, tie)
        row_id = _clean_name(cells[0].text) if cells else ""
        for index, template in templates.items():
            if index < len(cells):
                quoted = _first_number(cells[index].text, cells[index].col)
                if quoted is not None:
                    tie = self.lines.tie(line_no, quoted, template.replace(ROW, row_id), linked)
                    if tie:
                        ties[quoted.col] = tie
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
                tie = self.lines.tie(line_no, quoted, name, linked)
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


def measured_numbers(units_only: bool):
    """What a results section must trace: numbers with a unit, and in tables also decimals."""
    def measured(text: str, is_table: bool) -> list[Quoted]:
        found = numbers_with_units(text)
        if is_table and not units_only:
            taken = {number.col for number in found}
            found.extend(number for number in decimals(text) if number.col not in taken)
        return found
    return measured


def no_measured_numbers(text: str, is_table: bool) -> list[Quoted]:
    """For sections where only numbers tied to a name are checked (§1)."""
    return []
