"""Who is who: people named in front matter and in commits, compared case-insensitively."""

from __future__ import annotations

from gates.series.changeset import Person


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def same_person(a: Person, b: Person) -> bool:
    """Two people are the same when their emails or their names match (case-insensitive)."""
    if a.email and b.email and _norm(a.email) == _norm(b.email):
        return True
    return bool(a.name and b.name and _norm(a.name) == _norm(b.name))


def person_of(entry) -> Person | None:
    if not isinstance(entry, dict):
        return None
    name, email = entry.get("name"), entry.get("email")
    if not isinstance(name, str) and not isinstance(email, str):
        return None
    return Person(name if isinstance(name, str) else "", email if isinstance(email, str) else "")


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


def among(person: Person, people) -> bool:
    return any(same_person(person, other) for other in people)
