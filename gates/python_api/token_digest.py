"""A Python file's token stream, without comments and blank lines, as one SHA-256: what a comment-only
edit leaves unchanged (scheme `python-tokens/2`, the same on every Python version)."""

from __future__ import annotations

import hashlib
import io
import marshal
import re
import tokenize
import types
import warnings
from functools import lru_cache

TOKEN_SCHEME = "python-tokens/2"
_DROPPED_TOKENS = (tokenize.COMMENT, tokenize.NL)
# Python 3.12 splits an f-string into FSTRING_START / _MIDDLE / _END and the expressions between;
# earlier versions give one STRING token. The digest takes the whole f-string as one STRING, so that
# every Python version computes the same digest for the same file.
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def python_token_digest(data: bytes) -> str | None:
    """SHA-256 of a Python file's token stream without comments and blank lines (scheme `python-tokens/2`):
    the encoding, then each token's type name and text, positions left out, an f-string as one string
    token. The same on every Python version. None when the bytes do not tokenize as Python, or do not
    compile on this interpreter.

    The tokens are read from the text the compiler reads: the whole file decoded by its own encoding (so
    its coding cookie counts), then `\r\n` and a lone `\r` ending a line. `tokenize` alone decodes line
    by line and ends lines at `\n` only, so it would read `# note\rx = 2` as one comment where the
    compiler runs `x = 2`, and under an escaping codec (`# coding: unicode_escape`) a `\x0a` written in a
    comment as a comment where the compiler starts a new line."""
    if code_digest(data) is None:
        return None  # what the compiler refuses is no token stream to trust: the file is bound by its bytes
    parts = []
    try:
        encoding, text = _compiler_text(data)
        # rows as tokenize counts them: split at "\n" only (str.splitlines also splits at a form feed)
        lines = [line + "\n" for line in text.split("\n")]
        parts.append(f"ENCODING\x1f{encoding}")
        fstring_start, depth = None, 0
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _DROPPED_TOKENS:
                continue
            if _FSTRING_START is not None and token.type == _FSTRING_START:
                depth += 1
                fstring_start = fstring_start or token.start
                continue
            if depth:
                if token.type == _FSTRING_END:
                    depth -= 1
                    if not depth:
                        parts.append(f"STRING\x1f{_text_between(lines, fstring_start, token.end)}")
                        fstring_start = None
                continue
            text_of = "\n" if token.type == tokenize.NEWLINE else token.string
            parts.append(f"{tokenize.tok_name[token.type]}\x1f{text_of}")
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return None
    return hashlib.sha256("\x1e".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _compiler_text(data: bytes) -> tuple[str, str]:
    """(encoding, text) of a Python file as the compiler reads it: decoded whole by its own coding cookie, lines
    ended as the compiler ends them (`compiler_lines`)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding, compiler_lines(data.decode(encoding))


# Comments that a tool reads as instructions, so that editing one changes what runs: a shebang on the first line
# (the interpreter and its options when the file is run), Cython's `# cython:` and `# distutils:` directives (a .py
# file compiled in pure Python mode), mypy's inline `# mypy:` configuration (mypyc compiles by it), Nuitka's
# `# nuitka-project:` options and Pythran's `#pythran export` lines, PEP 723's `# /// script` metadata blocks
# (`uv run` installs what they name), and anything TorchScript reads as a type comment: it looks for
# `#[\t ]*type[\t ]*:` anywhere in a line (a signature, or a spelling it refuses, which makes `torch.jit.script`
# raise), all but its own ignore form.
_INSTRUCTION = re.compile(r"#\s*(?:cython\s*:|distutils\s*:|mypy\s*:|nuitka-project|pythran\b|///)")
_TYPE_COMMENT = re.compile(r"#[\t ]*type[\t ]*:")
_TYPE_IGNORE = re.compile(r"# type: ignore(\[[a-zA-Z-]+\])?")  # torch.jit.annotations.get_type_line's exception


def instruction_comments(data: bytes) -> list[str] | None:
    """The comments of a Python file that a tool reads as instructions (`_INSTRUCTION`, TorchScript's type comments,
    and a first line that starts with `#!`), read from the text the compiler reads (so a codec cannot hide one);
    every comment of a PEP 723 block. None when the file does not tokenize."""
    try:
        _, text = _compiler_text(data)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return None
    return _instructions_in(text)


def comments_are_inert(data: bytes) -> bool:
    """Whether no comment or blank line of a Python file can act: it holds no comment a tool reads as an
    instruction (`instruction_comments`) and no line of only whitespace and a backslash (`_BLANK_CONTINUATION`).
    False when the file cannot be decoded or tokenized. The file is read once."""
    try:
        _, text = _compiler_text(data)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return False
    return not _BLANK_CONTINUATION.search(text) and _instructions_in(text) == []


def _instructions_in(text: str) -> list[str] | None:
    found = []
    try:
        in_block = False
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.COMMENT:
                continue
            comment = token.string
            if ((token.start == (1, 0) and comment.startswith("#!")) or in_block or _INSTRUCTION.match(comment)
                    or (_TYPE_COMMENT.search(comment) and not _lone_type_ignore(comment, token.line))):
                found.append(comment)
            if comment.startswith("# ///"):
                in_block = comment.strip() != "# ///"
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return found


def _lone_type_ignore(comment: str, line: str) -> bool:
    """`comment` is TorchScript's ignore form, and nothing else on its line reads as a type comment to TorchScript
    (which searches whole lines, strings included: an ignore comment at the end of a line takes that line out)."""
    rest = line.replace(comment, "", 1)
    return bool(_TYPE_IGNORE.fullmatch(comment.rstrip("\r"))) and not _TYPE_COMMENT.search(rest)


# A line of only whitespace and a backslash: Python up to 3.9 joins it with the next line (a `return` after it then
# belongs to the block above), 3.10 on read it as blank, so the same file runs differently by version.
_BLANK_CONTINUATION = re.compile(r"^[ \t\f]*\\$", re.MULTILINE)


def compiler_lines(text: str) -> str:
    """`text` with every line ending as the compiler reads it: `\r\n` and a lone `\r` become `\n`."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _text_between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source text from (row, col) `start` to `end` (rows 1-based, columns in characters)."""
    (row_a, col_a), (row_b, col_b) = start, end
    if row_a == row_b:
        return lines[row_a - 1][col_a:col_b]
    return lines[row_a - 1][col_a:] + "".join(lines[row_a:row_b - 1]) + lines[row_b - 1][:col_b]


@lru_cache(maxsize=512)  # G5 asks for the code digest, then the token digest (which compiles too), of one text
def code_digest(data: bytes) -> str | None:
    """SHA-256 of the code a Python file compiles to on this interpreter, without line and column numbers: the same
    for two files whose token digests (`python_token_digest`) are the same, so two different code digests tell two
    different token streams apart at a fraction of the cost (the compiler is native code, the tokenizer Python). Not
    the same on every Python version: compare two digests of one interpreter only. None when the file does not
    compile."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: the code is what is compared
            code = compile(data, "<module>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError, UnicodeDecodeError, LookupError):
        return None
    return hashlib.sha256(marshal.dumps(_without_positions(code))).hexdigest()


def _without_positions(code: types.CodeType) -> types.CodeType:
    consts = tuple(_without_positions(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=1, co_linetable=b"", co_consts=consts)
