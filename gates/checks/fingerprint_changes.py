"""G4's fingerprint rule: which output fingerprints changed, and whether a decision allows it.

A fingerprint file maps `{backend: {fixture: sha256}}`. The head's file must hold
exactly the fingerprints the judged artifact produced for its backend. What counts
as a change depends on the run:

* with `--base`, the reference is the file at the change's merge base (the commit
  the change starts from, on the trusted branch), at the path the record declared
  there: every key whose value differs from it, or that the head removed, in any
  backend, needs an accepted question; a new key does not;
* without `--base`, the artifact is compared with the working tree's file, and a
  difference needs an accepted question (this cannot see a file re-recorded in the
  same change: only `--base` judges changes).

A change is accepted through an entry of `bitwise.fingerprints.accepted_changes`
that names the key (`fixture` or `backend/fixture`), the new value (`to:` the
SHA-256, or `removed`), optionally the old one (`from:`), and a question whose
decision is `accepted`. An acceptance holds for that one value: a later change of
the same key needs its own entry and decision, and an entry without `to` accepts
nothing (the finding names the value to review). The entry and the decision are
part of the record's approved contract (`gates.history.contract`), so adding or
changing either after an approval makes the approval stale.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass

from gates.model.errors import InputError
from gates.model.paths import resolve_inside
from gates.model.record import Record

FP_KEYS = ("bitwise", "fingerprints", "path")
MAX_FINDINGS = 20


class Unreadable(Exception):
    """A fingerprint file that cannot be judged; the text says why."""


def read_working_tree(repo_root, path: str) -> dict:
    """The fingerprint file `path` of the working tree; `Unreadable` says why not.

    Only a regular file inside the repository is read (a FIFO or a device would block)."""
    resolved = resolve_inside(repo_root, path)
    if resolved is None:
        raise Unreadable(f"fingerprint file {path} leads outside the repository")
    try:
        mode = os.stat(resolved).st_mode
    except FileNotFoundError:
        raise Unreadable(f"fingerprint file {path} does not exist") from None
    except OSError as exc:
        raise Unreadable(f"fingerprint file {path} is unreadable: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise Unreadable(f"fingerprint file {path} is not a regular file")
    try:
        return _parsed(resolved.read_bytes().decode("utf-8"), path)
    except (OSError, UnicodeDecodeError) as exc:
        raise Unreadable(f"fingerprint file {path} is unreadable: {exc}") from None


def read_at_merge_base(change, path: str) -> dict:
    """The fingerprint file `path` where the change starts ({} when it did not exist there)."""
    try:
        text = change.read_at(change.merge_base, path)
    except InputError as exc:
        raise Unreadable(f"fingerprint file {path} at the merge base {change.merge_base[:12]}: {exc.message}") from None
    return {} if text is None else _parsed(text, f"{path} at the merge base {change.merge_base[:12]}")


def _parsed(text: str, where: str) -> dict:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise Unreadable(f"fingerprint file {where} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise Unreadable(f"fingerprint file {where} is not a JSON object {{backend: {{fixture: sha256}}}}")
    return data


def path_at_merge_base(record: Record, change) -> str | None:
    """The fingerprint path the record declared where the change starts (None for a new record)."""
    for record_change in change.records:
        if record_change.rel_path == record.rel_path and record_change.base is not None:
            front = record_change.base_front_matter or {}
            declared = ((front.get("bitwise") or {}).get("fingerprints") or {}).get("path")
            return declared if isinstance(declared, str) else None
    return record.get(*FP_KEYS)


REMOVED = "removed"


@dataclass(frozen=True)
class AcceptedChange:
    """One `accepted_changes` entry: the key, the values it names, its question and that question's decision."""

    index: int
    key: str | None
    question: str | None
    decision: str | None
    to: str | None
    from_: str | None

    @property
    def where(self) -> tuple:
        return ("bitwise", "fingerprints", "accepted_changes", self.index)

    def names(self, old, new) -> bool:
        """Whether the entry is for exactly this change (`to` the new value, `from` the old one if given)."""
        return self.to == (REMOVED if new is None else new) and (self.from_ is None or self.from_ == old)


class Acceptance:
    """The record's accepted fingerprint changes, and the lines to point at."""

    def __init__(self, record: Record):
        decisions: dict[str, set] = {}
        for question in record.get("questions", default=[]) or []:
            if isinstance(question, dict):
                decisions.setdefault(question.get("id"), set()).add(question.get("decision"))
        self.listed: list[AcceptedChange] = []
        for index, change in enumerate(record.get("bitwise", "fingerprints", "accepted_changes", default=[]) or []):
            if isinstance(change, dict):
                found = decisions.get(change.get("question"), {None})
                decision = next(iter(found)) if len(found) == 1 else "ambiguous (the question id is declared twice)"
                self.listed.append(AcceptedChange(index, change.get("key"), change.get("question"), decision,
                                                  change.get("to"), change.get("from")))

    def entries(self, backend: str, key: str) -> list[AcceptedChange]:
        return [entry for entry in self.listed if entry.key in (key, f"{backend}/{key}")]

    def problem(self, backend: str, key: str, old, new, unlisted: str) -> tuple[tuple, str] | None:
        """None when an entry accepts exactly this change; else (key path, message).

        `unlisted` is the message for a key that no entry names."""
        entries = self.entries(backend, key)
        if not entries:
            return FP_KEYS, unlisted
        matching = [entry for entry in entries if entry.names(old, new)]
        if any(entry.decision == "accepted" for entry in matching):
            return None
        if matching:
            entry = matching[0]
            return entry.where, (f"fingerprint {backend}/{key} changed; it is listed under question {entry.question}, "
                                 f"whose decision is {entry.decision or 'not made'} (it must be accepted)")
        what = f"fingerprint {backend}/{key} changed ({short(old)} → {short(new)})"
        value = REMOVED if new is None else new
        for entry in entries:
            if entry.to is None:
                return entry.where, (f"{what}; the accepted change under question {entry.question} names no value "
                                     f"(`to:`), and an acceptance holds for one value only: review the new value "
                                     f"and name it: `to: {value}`")
        for entry in entries:
            if entry.to == value:
                return entry.where, (f"{what}; the accepted change under question {entry.question} is from "
                                     f"{short(entry.from_)}, but the value before is {short(old)}")
        entry = entries[0]
        return entry.where, (f"{what}; the accepted change under question {entry.question} is for "
                             f"{short(entry.to)}, not for the new value {value}: a new value needs its own "
                             "reviewer decision and entry (`to:` the new value)")


def compare(old_all: dict, new_all: dict, backends, acceptance: Acceptance | None, describe) -> list[tuple]:
    """(key path, message) for each unaccepted difference of `new_all` from `old_all` in `backends`.

    `describe(backend, key, old, new)` words a difference that no listed entry names
    (None: not a difference that needs one); with `acceptance` None no entry can allow one."""
    problems = []
    for backend in backends:
        old, new = old_all.get(backend) or {}, new_all.get(backend) or {}
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            message = describe(backend, key, old.get(key), new.get(key))
            if message is None:
                continue
            problem = (acceptance.problem(backend, key, old.get(key), new.get(key), message) if acceptance is not None
                       else (FP_KEYS, message))
            if problem is not None:
                problems.append(problem)
    if len(problems) > MAX_FINDINGS:
        rest = len(problems) - MAX_FINDINGS
        problems = problems[:MAX_FINDINGS] + [(FP_KEYS, f"… and {rest} more fingerprint difference(s)")]
    return problems


def short(value) -> str:
    return f"{value[:12]}…" if isinstance(value, str) else "(none)" if value is None else repr(value)
