"""What every match of a vocabulary pattern must contain, to skip the pattern where it cannot match.

The claim vocabulary's patterns have hundreds of case-insensitive alternatives, and Python's
`re` enters each of them at each position of a text (it skips an alternative quickly only when
it starts with a case-sensitive literal or class). Most prose blocks hold no term at all.
`required_pieces` reads a pattern's parse tree and returns pieces of literal text such that every
match contains at least one of them, lower-cased: a run of literal characters that a sequence
must match (the most selective run or group of one), and for an alternation the pieces of each
alternative. A text whose lower-cased form holds no piece holds no match.

That is exact: a case-insensitive ASCII letter matches only its two cases and the four letters
of `term_pattern.FOLDS_TO_ASCII` (İ ı ſ and the Kelvin sign), and a character without case
matches only itself, so a match's text, lower-cased, holds its piece unless the text holds one
of the four (where the pattern must be searched). A pattern the reading does not cover (a piece of a letter
with case outside ASCII, an alternative with no literal run) has no pieces and is always searched.

`gates.checks.term_pattern` applies the pieces (`TermPattern`, `Prefiltered`).
"""

from __future__ import annotations

import re

try:
    from re import _constants as _sre, _parser as _sre_parse  # Python 3.11+
except ImportError:  # Python 3.10
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_REPEATS = tuple(getattr(_sre, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_sre, name))


def required_pieces(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Lower-cased texts of which every match of `pattern` holds one, or None where none can be named."""
    if flags & re.LOCALE:
        return None
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except (re.error, RecursionError):
        return None
    pieces = _of_sequence(parsed.data, parsed.state.flags)
    return frozenset(pieces) if pieces and all(pieces) else None


def _char(code: int, flags: int) -> str | None:
    """The lower-cased form of a literal that the text's lower-cased form shows as that character, or None."""
    char = chr(code)
    if char.isascii() and char.isalpha():
        return char.lower()
    if char.lower() == char and char.upper() == char and char.casefold() == char:
        return char  # no case: matches only itself, and lower-casing leaves it
    return None


def _of_sequence(items, flags: int) -> set[str] | None:
    candidates: list[set[str]] = []
    run = ""
    for op, av in items:
        char = _char(av, flags) if op is _sre.LITERAL else None
        if char is not None:
            run += char
            continue
        if run:
            candidates.append({run})
            run = ""
        pieces = _of_item(op, av, flags)
        if pieces:
            candidates.append(pieces)
    if run:
        candidates.append({run})
    if not candidates:
        return None
    return max(candidates, key=lambda pieces: (min(map(len, pieces)), -len(pieces)))


def _of_item(op, av, flags: int) -> set[str] | None:
    if op is _sre.SUBPATTERN:
        _, add_flags, del_flags, sub = av
        inner = (flags | add_flags) & ~del_flags
        return None if inner & re.LOCALE else _of_sequence(sub.data, inner)
    if op is _sre.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            pieces = _of_sequence(alternative.data, flags)
            if not pieces:
                return None
            union |= pieces
        return union
    if op in _REPEATS and av[0] >= 1:
        return _of_sequence(av[2].data, flags)
    if op is getattr(_sre, "ATOMIC_GROUP", None):
        return _of_sequence(av.data, flags)
    return None
