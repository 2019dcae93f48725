"""A quoted number written anew for a new measured value, as the author wrote the old one.

After an evidence refresh a record may quote "36.95 µs" where its artifact now holds
37.104. `requoted` gives "37.10": the value in the quoted unit (µs, %, x ...), with the
same number of decimals (or, in scientific notation, the same digits of mantissa), the
same thousands separator and the same minus sign. `number_fix` turns a mismatching tie
into a `Fix` for `gate-check refresh --fix`; a bound (`≤ 2 %`), a tie with several
candidate values, or a value that cannot be put in the quoted unit gets none: a person
decides those.
"""

from __future__ import annotations

import math
import re

from gates.checks.quoted_numbers import Quoted, holds, in_quoted_unit, parse_quoted
from gates.model.findings import Fix

_SCIENTIFIC = re.compile(r"^([-+−]?)(\d+)(?:\.(\d+))?([eE])([-+]?)(\d+)$")
_PLAIN = re.compile(r"^([-+−]?)(\d{1,3}(?:([, \u2009\u202f\u00a0])\d{3})+|\d+)(?:\.(\d+))?$")


def requoted(quoted: Quoted, value, unit: str) -> str | None:
    """The text `quoted.text` would be for `value` (stored in `unit`); None when it cannot be written so."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    converted = in_quoted_unit(quoted, float(value), unit)
    if converted is None:
        return None
    text = quoted.text
    scientific = _SCIENTIFIC.match(text)
    if scientific:
        sign, _, fraction, marker, _, _ = scientific.groups()
        digits = len(fraction or "")
        mantissa, exponent = f"{abs(converted):.{digits}e}".split("e")
        power = int(exponent)
        written = f"{mantissa}{marker}{'-' if power < 0 else ''}{abs(power)}"
        return _signed(written, converted, sign)
    plain = _PLAIN.match(text)
    if not plain:
        return None  # `5.0×10⁻⁹` and other spellings: left to a person
    sign, _, separator, fraction = plain.groups()
    digits = len(fraction or "")
    written = f"{abs(converted):,.{digits}f}" if separator else f"{abs(converted):.{digits}f}"
    if separator and separator != ",":
        written = written.replace(",", separator)
    return _signed(written, converted, sign)


def _signed(written: str, value: float, sign: str) -> str:
    if value < 0 and float(written.replace(",", "").replace(" ", "") or 0) != 0:
        return ("−" if sign == "−" else "-") + written
    return ("+" if sign == "+" else "") + written


def number_fix(tie) -> Fix | None:
    """The edit that makes a mismatching `=` tie quote its value again (None where a person must decide)."""
    if tie.target is None or tie.relation != "=" or len(tie.alternatives) > 1:
        return None
    new = requoted(tie.quoted, tie.target.value, tie.target.unit)
    if new is None or new == tie.quoted.text:
        return None
    again = parse_quoted(new, tie.quoted.unit, tie.quoted.col)
    if again is None or not holds(again, tie.target.value, tie.target.unit):
        return None
    return Fix(tie.line, tie.quoted.col, tie.quoted.text, new)
