"""Who is who: one normal form for the names and emails of people, used by every check that compares them.

An approval is only independent when the approver is not an author, so an author
must not slip past the comparison under an alias. Before two identities are
compared, both are normalised the same way:

- Unicode compatibility decomposition (full-width letters, ligatures and other
  compatibility forms fold to their plain letters);
- characters that draw nothing or only mark another are removed: format characters
  (Cf: zero-width space and joiners, the byte order mark, bidirectional marks, soft
  hyphen), combining marks (Mn, Me: the combining grapheme joiner U+034F, accents, so
  `José` compares as `Jose`) and the Hangul fillers;
- runs of whitespace collapse to one space, surrounding whitespace goes;
- case folds (`casefold`, so `ß` matches `ss`);
- in a name, punctuation and symbols go (`Ada Author.` is `Ada Author`);
- in an email, a `mailto:` prefix, angle brackets, quotes around the local part and
  a trailing dot of the domain go, and a `+tag` after the local part is dropped:
  `<"ada+ci"@x.>` is `ada@x`;
- a `.mailmap` (git's format, path from the base policy's `approvals.mailmap`)
  maps an alias to its canonical name and email first.

Two people are the same when their normalised emails or their normalised names
match; an empty name or email matches nobody.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from gates.model.errors import InputError

_MAILMAP_LINE = re.compile(r"^\s*([^<#]*?)\s*<([^<>]*)>\s*(?:([^<#]*?)\s*<([^<>]*)>)?\s*(?:#.*)?$")


_INVISIBLE_CATEGORIES = ("Cf", "Mn", "Me")
_FILLERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}


def normalise_text(text) -> str:
    """Compatibility forms folded, invisible and combining characters removed, whitespace collapsed, case folded."""
    value = unicodedata.normalize("NFKD", str(text or ""))
    value = "".join(ch for ch in value if unicodedata.category(ch) not in _INVISIBLE_CATEGORIES and ch not in _FILLERS)
    value = unicodedata.normalize("NFKC", value)
    return " ".join(value.split()).casefold()


def normalise_name(name) -> str:
    """A name with its punctuation and symbols removed, then normalised like any text."""
    value = normalise_text(name)
    value = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in value)
    return " ".join(value.split())


def normalise_email(email) -> str:
    """The normal form of an email: `<"local+tag"@domain.>` reduced to `local@domain`."""
    value = normalise_text(email).replace(" ", "")
    if value.startswith("mailto:"):
        value = value[len("mailto:"):]
    value = value.strip("<>")
    local, at, domain = value.rpartition("@")
    if not at:
        return value
    local = local.strip('"').split("+", 1)[0]
    domain = domain.rstrip(".")
    return f"{local}@{domain}" if local else value


@dataclass(frozen=True)
class Identity:
    """A normalised (name, email) pair; compare with `same_as`."""

    name: str
    email: str

    def same_as(self, other: "Identity") -> bool:
        if self.email and other.email and self.email == other.email:
            return True
        return bool(self.name and other.name and self.name == other.name)


@dataclass
class Mailmap:
    """git's `.mailmap`: `Proper Name <proper@x> [Commit Name] <commit@x>` lines, matched after normalisation."""

    by_email: dict[str, tuple[str, str]] = field(default_factory=dict)
    by_name_and_email: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def canonical(self, name: str, email: str) -> tuple[str, str]:
        """The proper (name, email) of an identity, itself when the mailmap does not name it."""
        key_email = normalise_email(email)
        proper = self.by_name_and_email.get((normalise_name(name), key_email)) or self.by_email.get(key_email)
        if proper is None:
            return name, email
        proper_name, proper_email = proper
        return proper_name or name, proper_email or email


def parse_mailmap(text: str, path: str) -> Mailmap:
    """Parse a `.mailmap`; `InputError` names the line of an entry that is not in git's format."""
    mailmap = Mailmap()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _MAILMAP_LINE.match(line)
        if not match:
            raise InputError(path, number, "not a mailmap entry: expected 'Proper Name <proper@email> "
                             "[Commit Name] <commit@email>'")
        proper_name, proper_email, alias_name, alias_email = match.groups()
        proper = (proper_name or "", proper_email or "")
        if alias_email is None:
            mailmap.by_email[normalise_email(proper_email)] = proper
        elif alias_name:
            mailmap.by_name_and_email[(normalise_name(alias_name), normalise_email(alias_email))] = proper
        else:
            mailmap.by_email[normalise_email(alias_email)] = proper
    return mailmap


def identity_of(name, email, mailmap: Mailmap | None = None) -> Identity:
    """The normalised identity of a name and an email, through `mailmap` when given."""
    name, email = str(name or ""), str(email or "")
    if mailmap is not None:
        name, email = mailmap.canonical(name, email)
    return Identity(normalise_name(name), normalise_email(email))
