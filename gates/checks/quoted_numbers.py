"""Numbers as a reviewer reads them in prose: value, precision and unit.

A quoted number matches a measured one at the quoted precision: "8.33" matches
8.3312 but not 8.34; "2.486e-4" matches 2.4861e-4; "39" matches 39.4 but not 39.6.
The precision must reach the measured value's first significant digit: "0.000", "0."
and "0e0" do not match 2.1e-4 (a measured error is not zero), nor "0.000001" 5e-7.
A number is read where it touches CJK text ("降低30%", "耗时12ms", "加速2倍"), not
inside a Latin word or name ("fp16", "sm_90", "v1.2").
Thousands may be grouped with a comma, a space, a thin space (U+2009) or a narrow
no-break space (U+202F): "1 064 704" is 1064704. Scientific notation is read in
its usual spellings: "5e-9", "5.0×10^-9", "5.0·10⁻⁹" (the mantissa gives the
precision).

Units are handled here and nowhere else (`in_quoted_unit`):

- a value stored as a percentage (its key says `pct`, `percent` or `%`, or the
  artifact declares the unit `%`) is compared as it is; any other value quoted
  with `%` is a fraction and is multiplied by 100 ("89 %" never matches a stored
  0.89 % but "6.1 %" matches a fraction 0.061);
- `‰` is per mille: a tenth of a stored percentage, a thousandth of a fraction;
- ns, µs, ms and s convert into one another (also spelled out: microseconds,
  usec, msec, seconds …), as do B, KB, MB, GB, KiB, MiB, GiB and MB/s, GB/s,
  TB/s (毫秒, 微秒, 纳秒 and 秒 too); `x`, `×`, `倍`, `-fold` and "N times faster" quote a
  ratio as it is;
- a value whose key names a count (`cases`, `count`, `samples`, `n_…`, `num_…`)
  takes no unit;
- a number quoted without a unit is compared as stored; a unit that cannot be the
  stored one (µs for a `%` value, `x` for bytes, ms for a count) does not match.

`holds` also checks bounds (`≤ ≥ < >`) in the quoted unit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from gates.model.markdown_body import iter_links

GROUP_SEPARATORS = ", \u2009\u202f\u00a0"
# A character of a word in an alphabetic script. A number touching one is part of that word ("fp16",
# "sm_90", "H200", "v4"); CJK characters, word characters to `\w`, stand between words: "降低30%",
# "耗时12ms" and "加速2倍" quote 30%, 12 ms and 2x.
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
WORD_CHAR = rf"[^\W{_CJK}]"
NUMBER_START = rf"(?<!{WORD_CHAR})(?<![.,§/#-])"  # not inside a word, a decimal, a section or issue number, a path
UNIT_END = rf"(?!{WORD_CHAR}|/)"
_SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_POWER_OF_TEN = rf"10(?:(?:\^|\*\*)[-+−]?\d+|[⁻⁺]?[{_SUPERSCRIPT_DIGITS}]+)"
NUMBER = (r"[-+−]?(?:(?:\d{1,3}(?:(?:,|[ \u2009\u202f\u00a0])\d{3})+(?![\d])|\d+)"
          rf"(?:\.\d+)?(?:[eE][-+]?\d+|[ \t]?[×x·*⋅][ \t]?{_POWER_OF_TEN})?|{_POWER_OF_TEN})(?!,\d)")
COMPARATIVES = (r"faster|slower|higher|lower|more|less|fewer|larger|smaller|bigger|better|worse|quicker|"
                 r"greater|shorter|longer|as|the")  # `12 times faster`: the words that make `times` a ratio
UNITS = (
    r"microseconds?|microsecs?|µsecs?|μsecs?|usecs?|nanoseconds?|nsecs?|milliseconds?|msecs?|seconds?|secs?|"
    r"µs|μs|us|ms|ns|s|TB/s|GB/s|GiB/s|MB/s|TFLOP/s|TFLOPS|GFLOP/s|tok/s|tokens/s|token/s|it/s|"
    r"percent|per cent|pct|%|‰|[-‐]?fold|"
    rf"[-‐]?times(?=[ \t]+(?:{COMPARATIVES})\b)|x|X|×|倍|GiB|MiB|KiB|GB|MB|KB|B|W|MHz|GHz|毫秒|微秒|纳秒|秒"
)
_NUMBER_WITH_UNIT = re.compile(rf"{NUMBER_START}({NUMBER})[ \t]?({UNITS}){UNIT_END}")
_DECIMAL = re.compile(rf"{NUMBER_START}({NUMBER})[ \t]?(%)?(?!{WORD_CHAR}|\.\d)")
_FIRST_NUMBER = re.compile(rf"{NUMBER_START}({NUMBER})[ \t]?({UNITS})?{UNIT_END}")
_SEPARATOR = re.compile(r"[,\s\u2009\u202f\u00a0]")
_DIGIT = re.compile(r"\d")  # every `NUMBER` holds a decimal digit
_CODE_SPAN = re.compile(r"`[^`]*`")

_SCALES = {
    "time": {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0},
    "size": {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3},
    "rate": {"MB/s": 1e6, "GB/s": 1e9, "GiB/s": 1024.0 ** 3, "TB/s": 1e12},
}
_SPELLINGS = {"µs": "us", "μs": "us", "×": "x", "X": "x", "byte": "B", "bytes": "B", "%": "%", "pct": "%",
              "percent": "%", "per cent": "%", "TBps": "TB/s", "GBps": "GB/s", "sec": "s", "secs": "s",
              "second": "s", "seconds": "s", "nsecond": "ns", "usecond": "us", "msecond": "ms",
              "microsecond": "us", "microseconds": "us", "microsec": "us", "microsecs": "us", "usec": "us",
              "usecs": "us", "µsec": "us", "µsecs": "us", "μsec": "us", "μsecs": "us", "nanosecond": "ns",
              "nanoseconds": "ns", "nsec": "ns", "nsecs": "ns", "millisecond": "ms", "milliseconds": "ms",
              "msec": "ms", "msecs": "ms", "fold": "x", "-fold": "x", "‐fold": "x", "times": "x", "-times": "x",
              "‐times": "x",
              "倍": "x", "毫秒": "ms", "微秒": "us", "纳秒": "ns", "秒": "s",
              "count": "count", "‰": "‰"}
COUNT = "count"
_COUNT_KEY = re.compile(r"(?:^|_)(?:cases|count|counts|samples|n_\w+|num_\w+)$|^n$", re.IGNORECASE)
_SUPERSCRIPT = str.maketrans(_SUPERSCRIPT_DIGITS + "⁻⁺", "0123456789-+")
_POWER = rf"(?:\^|\*\*)[-+]?\d+|[⁻⁺]?[{_SUPERSCRIPT_DIGITS}]+"
_SCIENTIFIC = re.compile(rf"^(.*?)[ \t]?[×x·*⋅][ \t]?10({_POWER})$|^()10({_POWER})$")
_PERCENT_KEY = re.compile(r"pct|percent|%", re.IGNORECASE)
_KEY_SUFFIX_UNITS = (("_us", "us"), ("_ms", "ms"), ("_ns", "ns"), ("_sec", "s"), ("_tbps", "TB/s"),
                     ("_gbps", "GB/s"), ("_bytes", "B"))


def _is_fractional(token: str) -> bool:
    """A number written with a decimal point or a power of ten (not a count, an index or a size)."""
    return "." in token or _plain_exponent(token) != token or re.search(r"\d[eE][-+]?\d", token) is not None


def _well_formed(token: str) -> bool:
    """A single number: at most one decimal point."""
    return token.count(".") <= 1


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

    def shown(self) -> str:
        """The number as the record wrote it, with its unit."""
        if self.unit in ("", "%", "‰", "x", "×", "倍") or self.unit[:1] in "-‐":
            return f"{self.text}{self.unit}"
        return f"{self.text} {self.unit}"


def _plain_exponent(text: str) -> str:
    """`5.0×10^-9`, `5.0·10⁻⁹` and `10⁻⁹` written as `5.0E-9` and `1E-9` (the mantissa keeps its precision)."""
    match = _SCIENTIFIC.match(text)
    if not match:
        return text
    mantissa, power = match.group(1, 2) if match.group(2) is not None else match.group(3, 4)
    power = power.translate(_SUPERSCRIPT).lstrip("^*")
    return f"{mantissa.strip() or '1'}E{power}"


def parse_quoted(text: str, unit: str = "", col: int = 1) -> Quoted | None:
    cleaned = _plain_exponent(_SEPARATOR.sub("", text).replace("−", "-")).lstrip("+")
    try:
        number = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not number.is_finite() or not -300 < number.adjusted() < 300:
        return None
    exponent = number.as_tuple().exponent
    half_step = 0.5 * 10.0 ** exponent
    return Quoted(text, float(number), half_step, unit or "", col)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _agrees(quoted: Quoted, value: float) -> bool:
    """`value` rounds to the quoted number, and the quoted precision keeps its first significant digit."""
    tolerance = quoted.half_step * (1 + 1e-9) + 1e-12 * abs(quoted.value)
    return abs(value - quoted.value) <= tolerance and _keeps_a_digit(quoted, value)


def _keeps_a_digit(quoted: Quoted, value: float) -> bool:
    """Whether the quoted precision reaches the first significant digit of `value`.

    "0.000", "0." or "0e0" for 2.1e-4 round a measured error to zero, and "0.0001" for 6e-5 says
    nothing of its digits; "0.0002", "2e-4" and "1.0" for 0.96 keep one.
    """
    if value == 0:
        return True
    leading = 10.0 ** math.floor(math.log10(abs(value)))
    return 2 * quoted.half_step <= leading * (1 + 1e-9)


def matches(quoted: Quoted, measured: float) -> bool:
    """Whether `measured` rounds to the quoted number (for % also as a fraction).

    The loose, unit-blind comparison; gates that know which value a number names
    use `matches_value`, which knows how the value is stored.
    """
    if not _is_number(measured):
        return False
    if _agrees(quoted, measured):
        return True
    return quoted.is_percent and _agrees(quoted, measured * 100)


def canonical_unit(unit: str | None) -> str:
    """One spelling per unit: µs/μs/us -> us, × -> x, byte -> B; '' for none."""
    unit = (unit or "").strip()
    return _SPELLINGS.get(unit, unit)


def stored_unit(key: str, declared: str | None = None) -> str:
    """The unit a value is stored in: the artifact's declaration, else what its key says.

    `key` is the value's last key (`dram__throughput.avg.pct_of_peak_sustained_elapsed`,
    `ours_us`); a key naming `pct`, `percent` or `%` is a percentage, `_us`/`_ms`/`_ns`
    a time, `TBps` a rate, `_bytes` a size. Anything else has no known unit ('').
    """
    if declared:
        return canonical_unit(declared)
    if _COUNT_KEY.search(key):
        return COUNT
    if _PERCENT_KEY.search(key):
        return "%"
    lowered = key.lower()
    if lowered in ("ns", "us", "ms"):
        return lowered
    if lowered in ("tbps", "gbps"):
        return "TB/s" if lowered == "tbps" else "GB/s"
    for suffix, unit in _KEY_SUFFIX_UNITS:
        if lowered.endswith(suffix):
            return unit
    return ""


def _family(unit: str) -> str | None:
    for family, scales in _SCALES.items():
        if unit in scales:
            return family
    return None


def in_quoted_unit(quoted: Quoted, value: float, unit: str) -> float | None:
    """`value`, stored in `unit`, expressed in the quoted number's unit; None if it cannot be.

    The one place where percentages, fractions, ratios and unit prefixes are decided.
    """
    said, stored = canonical_unit(quoted.unit), canonical_unit(unit)
    if said == "%":
        return value if stored == "%" else (value * 100 if stored in ("", "x") else None)
    if said == "‰":
        return value * 10 if stored == "%" else (value * 1000 if stored in ("", "x") else None)
    if said == "" or said == stored:
        return value
    if stored in ("%", COUNT):
        return None
    if said == "x":
        return value if stored == "" else None
    family = _family(said)
    if stored == "":
        return value
    if family is not None and family == _family(stored):
        return value * _SCALES[family][stored] / _SCALES[family][said]
    return None


def matches_value(quoted: Quoted, value, unit: str = "") -> bool:
    """Whether the stored `value` (in `unit`) rounds to the quoted number in the quoted unit."""
    if not _is_number(value):
        return False
    converted = in_quoted_unit(quoted, float(value), unit)
    return converted is not None and _agrees(quoted, converted)


UPPER_BOUNDS = ("≤", "<=", "<")
LOWER_BOUNDS = ("≥", ">=", ">")
STRICT = ("<", ">")


def holds(quoted: Quoted, value, unit: str = "", relation: str = "=") -> bool:
    """Whether the stored `value` is what the record says of it: equal at the quoted precision
    (`relation` "="), or on the stated side of a bound (`≤ <= < ≥ >= >`, checked in the quoted unit).

    A non-strict bound also holds when the value rounds to the bound.
    """
    if relation not in UPPER_BOUNDS + LOWER_BOUNDS:
        return matches_value(quoted, value, unit)
    if not _is_number(value):
        return False
    converted = in_quoted_unit(quoted, float(value), unit)
    if converted is None:
        return False
    if relation in STRICT:
        return converted < quoted.value if relation == "<" else converted > quoted.value
    if _agrees(quoted, converted):
        return True
    return converted <= quoted.value if relation in UPPER_BOUNDS else converted >= quoted.value


def numbers_with_units(line: str) -> list[Quoted]:
    """Numbers followed by a measurement unit (µs, ms, GB/s, %, x, tok/s ...)."""
    found = []
    if not _DIGIT.search(line):
        return found
    for match in _NUMBER_WITH_UNIT.finditer(line):
        if _well_formed(match.group(1)):
            quoted = parse_quoted(match.group(1), match.group(2), match.start() + 1)
            if quoted:
                found.append(quoted)
    return found


def decimals(line: str) -> list[Quoted]:
    """Numbers with a fractional part or a power of ten (2.5, 1.96e-5, 1e-12, 5×10⁻⁹, 8.33%), unit or not."""
    found = []
    if not _DIGIT.search(line):
        return found
    for match in _DECIMAL.finditer(line):
        token = match.group(1)
        if _is_fractional(token) and _well_formed(token):
            quoted = parse_quoted(token, match.group(2) or "", match.start() + 1)
            if quoted:
                found.append(quoted)
    return found


def first_number(text: str, col: int = 1) -> Quoted | None:
    """The first number of `text` with the unit after it; `col` is the column of text[0]."""
    if not _DIGIT.search(text):
        return None
    for match in _FIRST_NUMBER.finditer(text):
        if _well_formed(match.group(1)):
            return parse_quoted(match.group(1), match.group(2) or "", col + match.start())
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
    if "`" not in line and "](" not in line:  # no code span, no link target
        return line
    line = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    pieces, kept = [], 0
    for start, end, text, _ in iter_links(line):
        target_start = start + 1 + len(text) + 1
        pieces.append(line[kept:target_start])
        pieces.append(" " * (end - target_start))
        kept = end
    pieces.append(line[kept:])
    return "".join(pieces)


# --- numbers as a reader reads them -----------------------------------------------------------------------------

_EMPHASIS_IN_NUMBER = re.compile(r"(?<![\w*])(?:\*{1,3}|_{1,3})?\d(?:[\d.,]|(?:\*{1,3}|_{1,3})(?=[\d.,]))*(?:\*{1,3}|_{1,3})?")
_DECIMAL_COMMA = re.compile(rf"(?<![\d,.])(\d+),(\d{{1,2}}|\d{{4,}})(?![\d,])(?=[ \t]?(?:{UNITS}){UNIT_END})")
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                 "twenty": 20, "hundred": 100}
_WORD_RATIO = re.compile(rf"(?<![\w-])({'|'.join(_NUMBER_WORDS)})(?=[-‐]?fold\b|[ \t]+times[ \t]+(?:{COMPARATIVES})\b)",
                         re.IGNORECASE)
_ZH_NUMERALS = {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_ZH_RATIO = re.compile(r"(?<![一二三四五六七八九十百千万两\d])([两二三四五六七八九十])(?=倍)")


def as_written_numbers(line: str) -> str:
    """The line with every number in the form the tracer reads, each column kept where it was.

    A reader reads `9.**9** µs` as 9.9 µs, `9,9 µs` (a decimal comma before a unit) as 9.9 µs,
    "four-fold" and "three times faster" as 4-fold and 3 times, 四倍 as 4倍. Emphasis markers
    inside a number move before it as spaces; a word number becomes its digits, right-aligned
    in the word's place.
    """
    def unemphasised(match: re.Match) -> str:
        token = match.group(0)
        bare = token.replace("*", "").replace("_", "")
        return token if bare == token else " " * (len(token) - len(bare)) + bare

    line = _EMPHASIS_IN_NUMBER.sub(unemphasised, line)
    line = _DECIMAL_COMMA.sub(lambda m: f"{m.group(1)}.{m.group(2)}", line)
    line = _WORD_RATIO.sub(lambda m: str(_NUMBER_WORDS[m.group(1).lower()]).rjust(len(m.group(1))), line)
    return _ZH_RATIO.sub(lambda m: str(_ZH_NUMERALS[m.group(1)]) if _ZH_NUMERALS[m.group(1)] < 10 else m.group(1), line)
