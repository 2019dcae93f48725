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
- a forge's no-reply address is the forge account it stands for, not a tagged mailbox:
  `12345+rita-o@users.noreply.github.com` (and the older `rita-o@users.noreply.github.com`,
  GitLab's `12345-rita-o@users.noreply.gitlab.com`) is login `rita-o`, and its email's normal
  form keeps that login (`rita-o@users.noreply.github.com`), where dropping the `+tag` would
  keep only the account number;
- a `.mailmap` (git's format, path from the base policy's `approvals.mailmap`)
  maps an alias to its canonical name and email first.

Two people are the same when their normalised emails, their normalised names or their
forge logins (a record's `login`, or the login of a no-reply address) match; an empty
name, email or login matches nobody. A name with a letter of another script inside a Latin
word ("Rіta Okafor", with a Cyrillic `і`) is a look-alike of every name it matches at its
other letters (`look_alike`): an honest name writes each word in one script, so such a letter
can only stand in for the Latin one it looks like.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from gates.model.errors import InputError

_MAILMAP_LINE = re.compile(r"^\s*([^<#]*?)\s*<([^<>]*)>\s*(?:([^<#]*?)\s*<([^<>]*)>)?\s*(?:#.*)?$")


# Forge no-reply domains and how the account number is joined to the login in their local part.
NOREPLY_DOMAINS = {"users.noreply.github.com": "+", "users.noreply.gitlab.com": "-"}
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
    local, domain = local.strip('"'), domain.rstrip(".")
    if domain in NOREPLY_DOMAINS:
        return f"{_noreply_login(local, NOREPLY_DOMAINS[domain])}@{domain}"
    local = local.split("+", 1)[0]
    return f"{local}@{domain}" if local else value


def _noreply_login(local: str, joiner: str) -> str:
    """The login in a no-reply local part: `12345+login` (or `12345-login`), or a bare `login`."""
    number, sep, login = local.partition(joiner)
    return login if sep and number.isdigit() and login else local


def forge_login_of(email) -> str:
    """The forge login a no-reply address stands for (normalised), "" for any other address."""
    local, _, domain = normalise_email(email).rpartition("@")
    return local if domain in NOREPLY_DOMAINS else ""


def normalise_login(login) -> str:
    """A forge login in normal form: a leading `@` dropped, normalised like any text."""
    return normalise_text(login).replace(" ", "").lstrip("@")


def _script(ch: str) -> str:
    """The script of a letter as its Unicode name starts ("LATIN", "CYRILLIC", "GREEK", ...); "" for others."""
    if not ch.isalpha():
        return ""
    return unicodedata.name(ch, "").split(" ", 1)[0]


def _stand_ins(name: str) -> set[int]:
    """Positions of letters that stand in for Latin ones: a letter of another script inside a word whose
    other letters are Latin ("Rіta" with a Cyrillic і). An honest name writes each word in one script."""
    positions: set[int] = set()
    start = 0
    for word in name.split(" "):
        scripts = [_script(ch) for ch in word]
        if "LATIN" in scripts:
            positions.update(start + i for i, script in enumerate(scripts) if script not in ("", "LATIN"))
        start += len(word) + 1
    return positions


def look_alike(first: str, second: str) -> bool:
    """Two normalised names that differ only where one of them has a letter of another script standing in a
    Latin word (a homoglyph: "rіta okafor" and "rita okafor"); names without such a letter never look alike."""
    if len(first) != len(second) or first == second:
        return False
    stand_ins = _stand_ins(first) | _stand_ins(second)
    return bool(stand_ins) and all(a == b or i in stand_ins for i, (a, b) in enumerate(zip(first, second)))


@dataclass(frozen=True)
class Identity:
    """A normalised (name, email) pair; compare with `same_as`."""

    name: str
    email: str
    login: str = ""

    def same_as(self, other: "Identity") -> bool:
        if self.email and other.email and self.email == other.email:
            return True
        if self.login and other.login and self.login == other.login:
            return True
        return bool(self.name and other.name and (self.name == other.name or look_alike(self.name, other.name)))


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


def identity_of(name, email, mailmap: Mailmap | None = None, login=None) -> Identity:
    """The normalised identity of a name, an email and a forge login (given, else that of a no-reply
    email), through `mailmap` when given."""
    name, email = str(name or ""), str(email or "")
    login = normalise_login(login) if isinstance(login, str) and login.strip() else forge_login_of(email)
    if mailmap is not None:
        name, email = mailmap.canonical(name, email)
    return Identity(normalise_name(name), normalise_email(email), login or forge_login_of(email))
