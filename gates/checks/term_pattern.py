"""A vocabulary pattern whose ASCII word boundaries the regex engine tests in one step.

The claim vocabulary (`gates.checks.claim_vocabulary`) writes a word boundary between ASCII
words as lookarounds on the class `[A-Za-z0-9_]` (`ASCII_BOUNDARY`), so that CJK text may
touch a term. Under IGNORECASE that class also matches four letters that fold to ASCII ones
(`FOLDS_TO_ASCII`: İ ı ſ and the Kelvin sign); in any other text the boundary is exactly the
engine's ASCII `\\b`, which costs one test per position where the lookarounds cost four, at
each of the vocabulary's alternatives. `TermPattern` matches with the `\\b` form unless the
text holds one of the four letters, and so finds exactly what the class form finds; consecutive
alternatives that begin with the boundary test it once (`sharing_assertion`). A text that holds
none of the pattern's required pieces (`gates.checks.required_text`) is not searched at all.
"""

from __future__ import annotations

import re

from gates.checks.required_text import holds_function, required_pieces

ASCII_WORD = "A-Za-z0-9_"
ASCII_BOUNDARY = rf"(?:(?<![{ASCII_WORD}])(?=[{ASCII_WORD}])|(?<=[{ASCII_WORD}])(?![{ASCII_WORD}]))"
FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")
_ENGINE_BOUNDARY = r"(?a:\b)"


class _ChosenPattern:
    """The `re.Pattern` methods the vocabulary uses, each run by the pattern `_for(text)` picks."""

    def finditer(self, text: str, *args):
        return self._for(text).finditer(text, *args)

    def search(self, text: str, *args):
        return self._for(text).search(text, *args)

    def match(self, text: str, *args):
        return self._for(text).match(text, *args)

    def fullmatch(self, text: str, *args):
        return self._for(text).fullmatch(text, *args)


class TermPattern(_ChosenPattern):
    """`re.compile(pattern, flags)` for a pattern written with `ASCII_BOUNDARY`: the same matches, found faster."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags = pattern, flags
        self._by_class = re.compile(pattern, flags)
        engine_form = pattern.replace(ASCII_BOUNDARY, _ENGINE_BOUNDARY)
        self._fast = re.compile(sharing_assertion(engine_form, _ENGINE_BOUNDARY), flags)
        self.pieces = required_pieces(pattern, flags)
        self._may_match = _holds_a_piece(pattern, flags)

    def _for(self, text: str):
        if FOLDS_TO_ASCII.search(text):
            return self._by_class
        return self._fast if self._may_match(text) else NO_MATCH


def _holds_a_piece(pattern: str, flags: int):
    """A function telling whether a text that holds none of `FOLDS_TO_ASCII` may hold a match of `pattern`."""
    pieces = required_pieces(pattern, flags)
    if pieces is None:
        return lambda text: True
    holds = holds_function(pieces)
    return lambda text: holds(text.lower())


class _NoMatch:
    """What a pattern finds in a text that holds none of its required pieces."""

    def finditer(self, text: str, *args):
        return iter(())

    def search(self, text: str, *args):
        return None

    match = fullmatch = search


NO_MATCH = _NoMatch()


class Prefiltered(_ChosenPattern):
    """A compiled pattern searched only in texts that hold one of its required pieces: the same matches."""

    def __init__(self, compiled: re.Pattern):
        self.compiled, self.pattern, self.flags = compiled, compiled.pattern, compiled.flags
        self.pieces = required_pieces(compiled.pattern, compiled.flags)
        self._may_match = _holds_a_piece(compiled.pattern, compiled.flags)

    def _for(self, text: str):
        if FOLDS_TO_ASCII.search(text) or self._may_match(text):
            return self.compiled
        return NO_MATCH


def top_level_alternatives(pattern: str) -> list[str]:
    """The alternatives of `pattern` split at each `|` outside groups and character classes."""
    parts, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1
            if pattern.startswith("^", index):
                index += 1
            if pattern.startswith("]", index):  # a `]` first in a class is a literal
                index += 1
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
        index += 1
    parts.append(pattern[start:])
    return parts


def sharing_assertion(pattern: str, assertion: str) -> str:
    """`pattern` with each run of consecutive alternatives that begin with the zero-width `assertion` (a
    lookbehind such as `(?<![A-Za-z])`) rewritten as `assertion(?:rest|rest|...)`: the same matches, the
    assertion tested once per position instead of once per alternative. An assertion has no choices to
    backtrack into, so the alternatives are tried in the same order on the same paths."""
    out: list[str] = []
    run: list[str] = []

    def close_run():
        if run:
            out.append(f"{assertion}(?:{'|'.join(run)})")
            run.clear()

    for alternative in top_level_alternatives(pattern):
        if alternative.startswith(assertion) and not alternative[len(assertion):].startswith(("*", "+", "?", "{")):
            run.append(alternative[len(assertion):])
        else:
            close_run()
            out.append(alternative)
    close_run()
    return "|".join(out)
