"""Numbers as a reviewer reads them in prose: value, precision and unit.

A quoted number matches a measured one at the quoted precision: "8.33%" matches
8.3312 (a percentage) or 0.083312 (a fraction); "2.486e-4" matches 2.4861e-4;
"39" matches 39.4 but not 39.6.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from gates.markdown_body import iter_links

NUMBER = r"[-+−]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?"
UNITS = (
    r"µs|μs|us|ms|ns|s|TB/s|GB/s|GiB/s|MB/s|TFLOP/s|TFLOPS|GFLOP/s|tok/s|tokens/s|token/s|it/s|"
    r"%|x|×|GiB|MiB|KiB|GB|MB|KB|B|W|MHz|GHz"
)
_START = r"(?<![\w.,§/#-])"
_NUMBER_WITH_UNIT = re.compile(rf"{_START}({NUMBER})[ \t]?({UNITS})(?![\w/])")
_DECIMAL = re.compile(rf"{_START}({NUMBER})[ \t]?(%)?(?![\w]|\.\d)")
_FIRST_NUMBER = re.compile(rf"({NUMBER})[ \t]?(%)?")
_THOUSANDS = re.compile(r"[-+−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _well_formed(token: str) -> bool:
    """A single number: at most one decimal point, commas only as thousands separators."""
    if token.count(".") > 1:
        return False
    return "," not in token or bool(_THOUSANDS.fullmatch(token))


@dataclass(frozen=True)
class Quoted:
    text: str
    value: float
    half_step: float
    unit: str
    col: int

    @property
    def is_percent(self) -> bool:
        return self.unit == "%"


def parse_quoted(text: str, unit: str = "", col: int = 1) -> Quoted | None:
    cleaned = text.replace(",", "").replace("−", "-").lstrip("+")
    try:
        number = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    exponent = number.as_tuple().exponent
    half_step = 0.5 * 10.0 ** exponent
    return Quoted(text, float(number), half_step, unit, col)


def matches(quoted: Quoted, measured: float) -> bool:
    """Whether `measured` rounds to the quoted number (for % also as a fraction)."""
    if not isinstance(measured, (int, float)) or isinstance(measured, bool) or not math.isfinite(measured):
        return False
    tolerance = quoted.half_step * (1 + 1e-9) + 1e-12 * abs(quoted.value)
    if abs(measured - quoted.value) <= tolerance:
        return True
    return quoted.is_percent and abs(measured * 100 - quoted.value) <= tolerance


def numbers_with_units(line: str) -> list[Quoted]:
    """Numbers followed by a measurement unit (µs, ms, GB/s, %, x, tok/s ...)."""
    found = []
    for match in _NUMBER_WITH_UNIT.finditer(line):
        if _well_formed(match.group(1)):
            quoted = parse_quoted(match.group(1), match.group(2), match.start() + 1)
            if quoted:
                found.append(quoted)
    return found


def decimals(line: str) -> list[Quoted]:
    """Numbers with a fractional part (2.5, 1.96e-5, 8.33%), unit or not."""
    found = []
    for match in _DECIMAL.finditer(line):
        token = match.group(1)
        if "." in token and _well_formed(token):
            quoted = parse_quoted(token, match.group(2) or "", match.start() + 1)
            if quoted:
                found.append(quoted)
    return found


def first_number(text: str) -> Quoted | None:
    for match in _FIRST_NUMBER.finditer(text):
        if _well_formed(match.group(1)):
            return parse_quoted(match.group(1), match.group(2) or "", match.start() + 1)
    return None


def numeric_leaves(data) -> list[float]:
    """Every number inside a JSON document (booleans excluded)."""
    found: list[float] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, (int, float)):
            found.append(float(item))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def strip_code_spans(line: str) -> str:
    """The line with `inline code` and link targets blanked (kept the same length)."""
    line = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)
    pieces, kept = [], 0
    for start, end, text, _ in iter_links(line):
        target_start = start + 1 + len(text) + 1
        pieces.append(line[kept:target_start])
        pieces.append(" " * (end - target_start))
        kept = end
    pieces.append(line[kept:])
    return "".join(pieces)
