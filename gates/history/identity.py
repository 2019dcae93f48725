"""Who is who in a change: people named in front matter and in commits, compared in normal form.

The normal form (NFKC, zero-width characters removed, case folded, `+tag` dropped
from emails, a forge no-reply address read as its login, a base `.mailmap` applied) lives in `gates.model.identity`; this module
applies it to the `Person` values of a `ChangeSet` and of front matter.
"""

from __future__ import annotations

from gates.history.changeset import Person
from gates.model.identity import Mailmap, identity_of


def same_person(a: Person, b: Person, mailmap: Mailmap | None = None) -> bool:
    """Two people are the same when their normalised emails or their normalised names match."""
    return identity_of(a.name, a.email, mailmap, a.login).same_as(identity_of(b.name, b.email, mailmap, b.login))


def person_of(entry) -> Person | None:
    if not isinstance(entry, dict):
        return None
    name, email, login = entry.get("name"), entry.get("email"), entry.get("login")
    if not isinstance(name, str) and not isinstance(email, str):
        return None
    return Person(name if isinstance(name, str) else "", email if isinstance(email, str) else "",
                  login if isinstance(login, str) else "")


def people_of(entries) -> list[Person]:
    """The people of a front-matter list such as `authors` or `reviewers`."""
    if not isinstance(entries, list):
        return []
    return [p for p in (person_of(e) for e in entries) if p is not None]


def approvers(reviewers) -> list[tuple[int, Person]]:
    """(index, person) of every reviewer whose decision is `approved`."""
    found = []
    if isinstance(reviewers, list):
        for index, entry in enumerate(reviewers):
            person = person_of(entry)
            if person is not None and entry.get("decision") == "approved":
                found.append((index, person))
    return found


def among(person: Person, people, mailmap: Mailmap | None = None) -> bool:
    return any(same_person(person, other, mailmap) for other in people)
