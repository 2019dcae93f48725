"""Edits that change a Python file's comments and blank lines only.

Such an edit changes no token the compiler reads, so the file does what it did: G5 compares no surface for it, the
hot-path rule asks no record for it (`gates.history.hot_path`), and a test file that judges a record's evidence may
take it without the record's reviewer (`gates.checks.suite_integrity`). The tokens are read as the compiler reads
them (`gates.python_api.token_digest`: the whole file decoded by its own coding cookie). A file that holds a comment
some tool reads as an instruction (a shebang, a `# type:` signature TorchScript reads, a Cython directive, a PEP 723
block: `token_digest.comments_are_inert`) is judged as code on either side, and so is a symbolic link, an
executable file or one whose mode changed, and a file that a `.gitattributes` along its folders has git rewrite at
checkout or in an archive (`ident`, `filter`, `working-tree-encoding`, `export-subst`): what runs is the checkout,
not the stored blob (a `.gitattributes` that is a link counts as one: git before 2.32 follows it). A line of only
whitespace and a backslash, which Python 3.9 and earlier join with the next line, disqualifies a file too.
"""

from __future__ import annotations

import re

from gates.history.object_cache import kept_in
from gates.python_api.token_digest import (
    code_digest, comments_are_inert, python_token_digest,
)

_DIGESTS: dict[str, str | None] = {}  # git object id of a Python file -> its token digest
_CODE_DIGESTS: dict[str, str | None] = {}  # git object id of a Python file -> its code digest (this interpreter's)
_KEPT_DIGESTS = 20_000


def edits_only_comments(change, entry) -> bool:
    """The change edited the Python file of `entry` (a changed path of `change`, a `ChangeSet`) in its comments and
    blank lines only: a modification in place of a regular file whose mode stayed, whose token stream, read from
    its bytes by its own coding cookie, is the same at the merge base and at head, and which holds no comment a
    tool reads as an instruction on either side."""
    if entry.status != "M" or not entry.path.endswith(".py"):
        return False
    if not _same_regular_file_mode(change, entry.path) or _rewritten_at_checkout(change, entry.path):
        return False
    compiled = [kept_in(_CODE_DIGESTS, _KEPT_DIGESTS, _blob_id(change, ref, entry.path),
                        lambda ref=ref: _digest_of(change, ref, entry.path, code_digest))
                for ref in (change.merge_base, change.head)]
    if None not in compiled and compiled[0] != compiled[1]:
        return False  # the code differs beyond its line numbers, so the tokens differ: no need to read them
    if compiled[1] is None and compiled[0] is not None:
        return False  # it no longer compiles (a NUL byte in a comment, a tab that makes the indentation ambiguous)
    before, after = _token_digest(change, change.merge_base, entry.path), _token_digest(change, change.head, entry.path)
    if before is None or before != after:
        return False
    return all(comments_are_inert(change.read_bytes_at(ref, entry.path) or b"")
               for ref in (change.merge_base, change.head))


def _same_regular_file_mode(change, path: str) -> bool:
    """The file is a regular file, not executable, at the merge base and at head: a symbolic link's "text" is the
    path it names (`impl.py#x` tokenizes as `impl.py` and names another file), a mode change can make a file a
    program its shebang runs, and an executable file without one runs under the shell, for which `os#;cmd` is no
    comment. False where the reader cannot name modes."""
    try:
        modes = {(change.entry_at(ref, path) or ("", ""))[0] for ref in (change.merge_base, change.head)}
    except NotImplementedError:
        return False
    return modes == {"100644"}


# gitattributes that make the checked-out or archived file differ from the stored one beyond line endings: `ident`
# writes the blob's id into `$Id$` (so any comment edit changes that string), a `filter` runs a program,
# `working-tree-encoding` re-encodes the text, and `export-subst` expands `$Format:...$` in `git archive` (where
# `%n` is a newline: a "comment" becomes code in every archive-built install)
_REWRITING_ATTRIBUTES = re.compile(rb"\b(?:ident|filter|working-tree-encoding|export-subst)\b")


def _rewritten_at_checkout(change, path: str) -> bool:
    """Some `.gitattributes` along `path`'s folders, at the merge base or at head, names an attribute that rewrites
    what a checkout writes (`_REWRITING_ATTRIBUTES`; read as words anywhere in the file, macros included)."""
    parts = path.split("/")[:-1]
    folders = [""] + ["/".join(parts[:index + 1]) + "/" for index in range(len(parts))]
    for ref in (change.merge_base, change.head):
        for folder in folders:
            try:
                entry = change.entry_at(ref, f"{folder}.gitattributes")
            except NotImplementedError:
                return True
            if entry is not None and entry[0] != "100644":
                return True  # a link (git before 2.32 follows one), or something else where attributes should be
            if _REWRITING_ATTRIBUTES.search(change.read_bytes_at(ref, f"{folder}.gitattributes") or b""):
                return True
    return False


def comment_only_paths(change) -> frozenset[str]:
    """The paths of `change` whose edits are comments and blank lines only (`edits_only_comments`), found once per
    change: G8 and the judges of each record ask for them."""
    return change.kept("comment-only paths", lambda: frozenset(
        entry.path for entry in change.changed if edits_only_comments(change, entry)))


def _token_digest(change, ref: str, path: str) -> str | None:
    """The token digest of a Python file at `ref` (None: not there, or it does not tokenize), kept by the file's
    object id: in a history run, one commit's head is the next one's base."""
    return kept_in(_DIGESTS, _KEPT_DIGESTS, _blob_id(change, ref, path),
                   lambda: _digest_of(change, ref, path, python_token_digest))


def _blob_id(change, ref: str, path: str) -> str | None:
    """The file's object id where the reader names objects; None (nothing kept) otherwise."""
    return change.blob_id(ref, path) if change.identifies_blobs else None


def _digest_of(change, ref: str, path: str, digest) -> str | None:
    data = change.read_bytes_at(ref, path)
    return None if data is None else digest(data)
