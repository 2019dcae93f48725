"""What every match of a vocabulary pattern must contain, to skip the pattern where it cannot match.

The claim vocabulary's patterns have hundreds of case-insensitive alternatives, and Python's
`re` enters each of them at each position of a text (it skips an alternative quickly only when
it starts with a case-sensitive literal or class). Most prose blocks hold no term at all.
`required_pieces` reads a pattern's parse tree and returns what every match holds, lower-cased:
each run of literal characters (or of small classes of them) that a sequence must match, and
what every mandatory group, repetition or alternative of it holds; for an alternation, what one
of its alternatives holds. A text whose lower-cased form holds none of that holds no match.

That is exact: a case-insensitive ASCII letter matches only its two cases and the four letters
of `term_pattern.FOLDS_TO_ASCII` (İ ı ſ and the Kelvin sign), and a character without case
matches only itself, so a match's text, lower-cased, holds its piece unless the text holds one
of the four (where the pattern must be searched). A pattern the reading does not cover (a piece of a letter
with case outside ASCII, an alternative with no literal run) has no pieces and is always searched.

`gates.checks.term_pattern` applies the pieces (`TermPattern`, `Prefiltered`).
"""

from __future__ import annotations

import re
from typing import Callable

try:
    from re import _constants as _sre, _parser as _sre_parse  # Python 3.11+
except ImportError:  # Python 3.10
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_REPEATS = tuple(getattr(_sre, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_sre, name))


def required_pieces(pattern: str, flags: int = 0):
    """What every match of `pattern` holds, lower-cased, or None where nothing can be named: a piece of text
    (str), ("any", nodes): one of them, or ("all", nodes): each of them. `holds(text.lower(), node)` tells."""
    if flags & re.LOCALE:
        return None
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except (re.error, RecursionError):
        return None
    return _of_sequence(parsed.data, parsed.state.flags)


def holds(lowered: str, node) -> bool:
    """Whether lower-cased text may hold a match of a pattern whose `required_pieces` are `node`."""
    if isinstance(node, str):
        return node in lowered
    if node[0] == "all":
        return all(holds(lowered, child) for child in node[1])
    return any(holds(lowered, child) for child in node[1])


def holds_function(node) -> Callable[[str], bool]:
    """`holds` for one `node`, as one expression of `in` tests (a tenth of the calls)."""
    def expression(node) -> str:
        if isinstance(node, str):
            return f"{node!r} in lowered"
        joint = " and " if node[0] == "all" else " or "
        return "(" + joint.join(expression(child) for child in node[1]) + ")"

    return eval(f"lambda lowered: {expression(node)}", {})  # noqa: S307 (the pieces are repr'd literals)


def _char(code: int) -> str | None:
    """The lower-cased form of a literal that the text's lower-cased form shows as that character, or None."""
    char = chr(code)
    if char.isascii() and char.isalpha():
        return char.lower()
    if char.lower() == char and char.upper() == char and char.casefold() == char:
        return char  # no case: matches only itself, and lower-casing leaves it
    return None


def _chars(op, av) -> list[str] | None:
    """The lower-cased characters a literal or a small class of literals matches, or None."""
    if op is _sre.LITERAL:
        char = _char(av)
        return None if char is None else [char]
    if op is _sre.IN and len(av) <= 4 and all(item is _sre.LITERAL for item, _ in av):
        chars = [_char(code) for _, code in av]
        return None if None in chars else sorted(set(chars))
    return None


def _shortest(node) -> int:
    if isinstance(node, str):
        return len(node)
    lengths = [_shortest(child) for child in node[1]]
    return max(lengths) if node[0] == "all" else min(lengths)


def _any(pieces) -> object:
    pieces = sorted(set(pieces))
    return pieces[0] if len(pieces) == 1 else ("any", tuple(pieces))


def _of_sequence(items, flags: int):
    candidates: list = []
    run = [""]
    for op, av in items:
        chars = _chars(op, av)
        if chars is not None and len(run) * len(chars) <= 8:
            run = [text + char for text in run for char in chars]
            continue
        if run != [""]:
            candidates.append(_any(run))
        run = [""]
        if chars is not None:
            run = chars
            continue
        node = _of_item(op, av, flags)
        if node is not None:
            candidates.append(node)
    if run != [""]:
        candidates.append(_any(run))
    if not candidates:
        return None
    candidates.sort(key=_shortest, reverse=True)  # the longest piece first: it is the likeliest to be absent
    return candidates[0] if len(candidates) == 1 else ("all", tuple(candidates))


def _of_item(op, av, flags: int):
    if op is _sre.SUBPATTERN:
        _, add_flags, del_flags, sub = av
        inner = (flags | add_flags) & ~del_flags
        return None if inner & re.LOCALE else _of_sequence(sub.data, inner)
    if op is _sre.BRANCH:
        nodes = []
        for alternative in av[1]:
            node = _of_sequence(alternative.data, flags)
            if node is None:
                return None
            nodes.extend(node[1] if isinstance(node, tuple) and node[0] == "any" else [node])
        return ("any", tuple(nodes))
    if op in _REPEATS and av[0] >= 1:
        return _of_sequence(av[2].data, flags)
    if op is getattr(_sre, "ATOMIC_GROUP", None):
        return _of_sequence(av.data, flags)
    return None
