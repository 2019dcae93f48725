"""A comment-only edit leaves evidence fresh; any other edit to a measured Python file makes it stale.

`sources` binds each file by the SHA-256 of its bytes, as every artifact ever written does. A
current writer also binds the Python files among them by their token stream without comments and
blank lines (`source_tokens`, scheme python-tokens/2); the gates accept either binding.
"""

from __future__ import annotations

import hashlib

import pytest

from gates.evidence.artifacts import EvidenceArtifact, stale_sources
from gates.evidence.source_binding import python_token_digest, source_tokens
from gates.python_api.token_digest import code_digest

KERNEL = b'''"""Row sums."""


def row_sum(x, scale=1.0):
    return sum(x) * scale
'''


@pytest.mark.parametrize("edited", [
    KERNEL.replace(b"    return", b"    # multiply once, after the sum\n    return"),
    KERNEL + b"\n\n# end of file\n",
    KERNEL.replace(b"def row_sum", b"\n\ndef row_sum"),
    KERNEL.replace(b"sum(x) * scale", b"sum( x )*scale"),
    KERNEL.replace(b"\n", b"\r\n"),
], ids=["comment", "trailing-comment", "blank-lines", "spacing-inside-a-line", "line-endings"])
def test_edits_that_change_no_token_keep_the_digest(edited):
    assert python_token_digest(edited) == python_token_digest(KERNEL)


@pytest.mark.parametrize("edited", [
    KERNEL.replace(b"* scale", b"* scale * 2"),
    KERNEL.replace(b"scale=1.0", b"scale=1.5"),
    KERNEL.replace(b'"""Row sums."""', b'"""Row sums (fast)."""'),
    b"# -*- coding: latin-1 -*-\n" + KERNEL,
    KERNEL.replace(b"    return", b"\treturn"),
    KERNEL + b"# tolerance note\rrow_sum = lambda x, scale=1.0: 0.0\n",
    KERNEL + b"# tolerance note\r\rrow_sum = None\n",
], ids=["code", "default", "docstring", "coding-cookie", "indentation", "code-after-a-lone-carriage-return",
        "code-after-two"])
def test_edits_to_code_docstrings_or_the_encoding_change_the_digest(edited):
    assert python_token_digest(edited) != python_token_digest(KERNEL)


def test_a_lone_carriage_return_ends_a_line_as_it_does_for_the_compiler():
    # `tokenize` alone reads "# note\rrow_sum = ..." as one comment; the compiler runs what follows the \r
    hidden = KERNEL + b"# note\rrow_sum = lambda x, scale=1.0: 0.0\n"
    namespace = {}
    exec(compile(hidden, "kernel.py", "exec"), namespace)
    assert namespace["row_sum"]([1, 2]) == 0.0
    assert python_token_digest(hidden) == python_token_digest(KERNEL + b"\nrow_sum = lambda x, scale=1.0: 0.0\n")
    assert python_token_digest(KERNEL.replace(b"\n", b"\r")) == python_token_digest(KERNEL)


def test_a_form_feed_keeps_the_rows_of_an_f_string_where_tokenize_counts_them():
    plain = b'x = 1\ny = f"{x}"\n'
    assert python_token_digest(b'x = 1  # \x0c page\ny = f"{x}"\n') == python_token_digest(plain)


SAME_TOKENS = [KERNEL.replace(b"    return", b"    # multiply once, after the sum\n    return"),
               KERNEL.replace(b"def row_sum", b"\n\ndef row_sum"), KERNEL.replace(b"sum(x) * scale", b"sum( x )*scale")]
OTHER_TOKENS = [KERNEL.replace(b"* scale", b"* scale * 2"), KERNEL.replace(b'"""Row sums."""', b'"""Row sums (fast)."""'),
                KERNEL.replace(b"sum(x) * scale", b"(sum(x)\n            * scale)")]


def test_the_code_digest_tells_apart_only_files_whose_tokens_differ():
    # G5's quick test before it reads tokens: equal tokens give equal code digests; a code digest that differs
    # means the tokens differ; equal code digests (a line broken inside brackets) leave it to the tokens
    assert all(code_digest(edited) == code_digest(KERNEL) for edited in SAME_TOKENS)
    assert [code_digest(edited) == code_digest(KERNEL) for edited in OTHER_TOKENS] == [False, False, True]
    assert python_token_digest(OTHER_TOKENS[2]) != python_token_digest(KERNEL)
    assert code_digest(b"def f(:\n") is None


def test_a_file_that_does_not_tokenize_or_compile_has_no_digest():
    assert python_token_digest(b"x = 1  # a NUL \x00 in a comment\n") is None  # the compiler refuses it
    assert python_token_digest(b"return 1\n") is None  # tokenizes, does not compile
    assert python_token_digest(b"def f(:\n    '''unterminated\n") is None


def measured(repo, *, tokens: bool) -> EvidenceArtifact:
    sources = {"kernel.py": hashlib.sha256((repo / "kernel.py").read_bytes()).hexdigest()}
    data = {"sources": sources}
    if tokens:
        data["source_tokens"] = source_tokens(repo, sources)
    return EvidenceArtifact("evidence/x.json", data, "0" * 64)


def test_a_comment_only_edit_leaves_evidence_with_token_digests_fresh(tmp_path):
    (tmp_path / "kernel.py").write_bytes(KERNEL)
    artifact = measured(tmp_path, tokens=True)
    (tmp_path / "kernel.py").write_bytes(KERNEL.replace(b"    return", b"    # why\n    return"))
    assert stale_sources(artifact, tmp_path) == []
    (tmp_path / "kernel.py").write_bytes(KERNEL.replace(b"* scale", b"* scale * 2"))
    assert stale_sources(artifact, tmp_path) == ["kernel.py"]


def test_evidence_bound_by_raw_bytes_only_stays_judged_by_them(tmp_path):
    (tmp_path / "kernel.py").write_bytes(KERNEL)
    artifact = measured(tmp_path, tokens=False)
    (tmp_path / "kernel.py").write_bytes(KERNEL.replace(b"    return", b"    # why\n    return"))
    assert stale_sources(artifact, tmp_path) == ["kernel.py"]


def test_token_digests_under_an_unknown_scheme_are_not_trusted(tmp_path):
    (tmp_path / "kernel.py").write_bytes(KERNEL)
    artifact = measured(tmp_path, tokens=True)
    artifact.data["source_tokens"]["scheme"] = "python-tokens/99"
    (tmp_path / "kernel.py").write_bytes(KERNEL.replace(b"    return", b"    # why\n    return"))
    assert stale_sources(artifact, tmp_path) == ["kernel.py"]


def test_the_token_digest_is_the_same_on_every_python_version():
    """An f-string is one token before Python 3.12 and several from 3.12 on, and token type numbers
    differ between versions: the digest reads the type's name and the f-string whole, so a GPU
    runner on one Python and CI on another agree (digests computed on 3.10, 3.11, 3.12 and 3.13)."""
    from gates.evidence.source_binding import python_token_digest

    assert python_token_digest(b'x = f"a{b!r:>{w}}c"  # note\n') == \
        "87870e90a9d9bccdef4120e42a8f09deb7a02186e17f97728e9ccd74ea67cb1f"
    assert python_token_digest(b"def f():\n    return f\"{x}\" + f'{y:{z}}'\n") == \
        "849c5f4367e0c6ef36ff1983890fd7236f4cae2321926dd1873dcfa41a0dc9c8"


@pytest.mark.parametrize("codec, escaped", [("unicode_escape", b"\\x0a"), ("raw_unicode_escape", b"\\u000a"),
                                            ("utf-7", b"+AAo-")])
def test_a_line_break_a_codec_writes_in_a_comment_is_a_line_break(codec, escaped):
    # the compiler decodes the whole file first: under these codecs an escaped newline in a comment starts a line
    cookie = f"# -*- coding: {codec} -*-\n".encode()
    hidden = cookie + KERNEL + b"# reference bytes: " + escaped + b"row_sum = None\n"
    namespace = {}
    exec(compile(hidden, "kernel.py", "exec"), namespace)
    assert namespace["row_sum"] is None
    assert python_token_digest(hidden) != python_token_digest(cookie + KERNEL)


@pytest.mark.parametrize("shadow", ["kernel/__init__.py", "kernel.cpython-311-x86_64-linux-gnu.so", "kernel.pyd"])
def test_a_package_or_extension_that_python_imports_instead_of_a_bound_module_makes_it_stale(tmp_path, shadow):
    (tmp_path / "kernel.py").write_bytes(KERNEL)
    artifact = measured(tmp_path, tokens=True)
    assert stale_sources(artifact, tmp_path) == []
    (tmp_path / shadow).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / shadow).write_bytes(b"def row_sum(x, scale=1.0):\n    return 0.0\n")
    assert stale_sources(artifact, tmp_path) == ["kernel.py"]


def test_a_namespace_folder_of_the_same_name_does_not_shadow_a_module(tmp_path):
    (tmp_path / "kernel.py").write_bytes(KERNEL)
    artifact = measured(tmp_path, tokens=True)
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "notes.py").write_bytes(b"")
    assert stale_sources(artifact, tmp_path) == []


@pytest.mark.parametrize("source, found", [
    (b"#!/usr/bin/env python3\nx = 1\n", ["#!/usr/bin/env python3"]),
    (b"def f(x):\n    # type: (int) -> int\n    return x\n", ["# type: (int) -> int"]),
    (b"x = []  # type: ignore[assignment]\n", []),
    # a codec cannot hide one: the compiler reads `\x23` as `#` under unicode_escape, `+ACM-` under utf-7
    (b"# coding: unicode_escape\ndef f(x):\n    \\x23 type: (int) -> int\n    return x\n", ["# type: (int) -> int"]),
    (b"# coding: utf-7\ndef f(x):\n    +ACM- type: (int) -> int\n    return x\n", ["# type: (int) -> int"]),
    (b"# cython: cdivision=True\nx = 1\n", ["# cython: cdivision=True"]),
    (b"# /// script\n# dependencies = ['numpy']\n# ///\nimport numpy\n# a note\n",
     ["# /// script", "# dependencies = ['numpy']", "# ///"]),
    (KERNEL + b"# a note\n", []),
    (b"x = 1  # scale: see the notes #type: fp32\n", ["# scale: see the notes #type: fp32"]),
    (b"x = 1  # type: ignore[x] -> Tensor\n", ["# type: ignore[x] -> Tensor"]),
    (b"x = 1  # scale, type: fp32\n", []),
    (b'y = "# type: (int) -> int"  # type: ignore\n', ["# type: ignore"]),
    (b"# nuitka-project: --standalone\nx = 1\n", ["# nuitka-project: --standalone"]),
    (b"#pythran export f(int)\ndef f(x):\n    return x\n", ["#pythran export f(int)"]),
], ids=["shebang", "type-signature", "type-ignore", "unicode-escape", "utf-7", "cython", "pep-723", "plain",
        "type-inside-a-comment", "more-after-an-ignore", "no-hash-before-type", "ignore-beside-a-typed-string",
        "nuitka", "pythran"])
def test_comments_a_tool_reads_as_instructions_are_found(source, found):
    from gates.python_api.token_digest import instruction_comments

    assert instruction_comments(source) == found


def test_a_file_holding_an_instruction_comment_is_bound_by_its_bytes(tmp_path):
    """TorchScript reads `# type:` as the signature: moving one changes what runs, so such a file stays fresh only
    while its bytes do."""
    typed = b"def scale(x):\n    # type: (int) -> int\n    return x * 2\n\n\ndef shift(x):\n    return x + 1\n"
    moved = b"def scale(x):\n    return x * 2\n\n\ndef shift(x):\n    # type: (int) -> int\n    return x + 1\n"
    assert python_token_digest(typed) == python_token_digest(moved)  # the comment-blind digest cannot tell
    (tmp_path / "ops.py").write_bytes(typed)
    tokens = source_tokens(tmp_path, {"ops.py": hashlib.sha256(typed).hexdigest()})
    assert tokens["sha256"] == {}
    (tmp_path / "ops.py").write_bytes(moved)
    artifact = EvidenceArtifact("evidence/n.json", {"sources": {"ops.py": hashlib.sha256(typed).hexdigest()},
                                                    "source_tokens": {"scheme": "python-tokens/2", "sha256": {
                                                        "ops.py": python_token_digest(typed)}}}, "0" * 64)
    assert stale_sources(artifact, tmp_path) == ["ops.py"]
