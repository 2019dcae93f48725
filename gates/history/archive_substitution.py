"""G5: a change adds to a module of a checked package no `$Format:…$` that `git archive` would turn into code.

Where `.gitattributes` gives a file `export-subst`, `git archive` (a release tarball, pip installing a tag's
archive URL) replaces each `$Format:…$` in it by `git log --format` output: `%n` becomes a newline, so a
`# build: $Format:%n$def attention_decode(q): …` comment in the committed blob is a definition in the archive.
G5 reads the blob, and so do the evidence and the reviewers. What versioning tools write there is one
placeholder for a commit's refs, hash or date (`"$Format:%d$"`, `"$Format:%H$"`, `"$Format:%ci$"`), which stays
inside its string; any other `$Format:…$` that a change adds to a module of a checked package is an error, whatever
the attributes say now, since a later `.gitattributes` line can switch the substitution on.
"""

from __future__ import annotations

import re

from gates.history.context import SeriesContext

_FORMAT = re.compile(r"\$Format:([^$]*)\$")
# One placeholder of a commit's hashes, refs or dates: it expands to no newline and no quote an author chose (names,
# e-mails and messages can hold either, so they are no such value)
_ONE_VALUE = re.compile(r"%(?:[dDHhTtPp]|[ac][dDrtiIsh]|\(describe(?::[^)]*)?\))")


def check_module(ctx: SeriesContext, path: str, old_path: str | None = None) -> None:
    """Report each `$Format:…$` of the changed module at `path` (`old_path` on the base) that is new and more than
    one commit value."""
    change = ctx.change
    after = _text(change.read_bytes_at(change.head, path))  # git substitutes bytes, whatever the source's encoding
    if "$Format:" not in after:
        return
    kept = set(_FORMAT.findall(_text(change.read_bytes_at(change.merge_base, old_path or path))))
    for number, line in enumerate(after.split("\n"), 1):
        for found in _FORMAT.finditer(line):
            if found.group(1) in kept or _ONE_VALUE.fullmatch(found.group(1)):
                continue
            ctx.report("G5", path, number,
                       f"`{found.group(0)[:60]}` is more than one commit value: where .gitattributes gives {path} "
                       "export-subst, git archive writes it as other text (`%n` as a newline), so an archive's module "
                       "holds code the committed one, which G5 and the reviewers read, does not; keep one placeholder "
                       "such as `$Format:%H$` inside a string", commit=change.last_commit_touching(path))


def _text(data: bytes | None) -> str:
    """Bytes as one character each (Latin-1), so that the ASCII placeholders are found in any encoding."""
    return (data or b"").decode("latin-1")
