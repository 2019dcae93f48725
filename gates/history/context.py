"""What every history check reads: the change, the base configuration and policy, the people who wrote it."""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from gates.history.changeset import ChangeSet, Person, RecordSnapshot
from gates.history.identity import people_of, same_person
from gates.model.config import Profile, Settings
from gates.model.errors import InputError
from gates.model.findings import Finding
from gates.model.policy import Policy, parse_policy
from gates.model.record import STAGES


def stage_index(stage) -> int:
    """Position of a stage letter in A..D; -1 for anything else."""
    return STAGES.index(stage) if stage in STAGES else -1


def field_of(front_matter: dict | None, *keys, default=None):
    """A front-matter value at a key path, or `default` when a step is missing or mistyped."""
    value = front_matter
    for key in keys:
        if isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return default
    return value


def line_of(snapshot: RecordSnapshot | None, *keys) -> int:
    if snapshot is None:
        return 1
    try:
        return max(int(snapshot.line_of(*keys)), 1)
    except Exception:  # a record object without key lines still gets line 1
        return 1


@dataclass
class SeriesContext:
    change: ChangeSet
    findings: list[Finding] = field(default_factory=list)

    def report(self, gate: str, path: str, line: int, message: str, *, commit: str | None = None,
               severity: str = "error") -> None:
        self.findings.append(Finding(gate, path, max(int(line), 1), 1, message, severity,
                                     commit or self.change.last_commit_touching(path)))

    @cached_property
    def settings(self) -> Settings:
        """The configuration at the base commit (`gates.model.config`): the rules a change is judged by.

        An invalid configuration on base raises `InputError` (exit 2): there is no rule to fall back to.
        """
        return self.change.settings_at(self.change.base)

    @property
    def policy_path(self) -> str:
        return self.settings.policy

    @cached_property
    def policy(self) -> Policy:
        """The policy at the base commit; an unreadable one makes every path L4 (fail closed)."""
        path = self.policy_path
        text = None
        try:
            text = self.change.read_at(self.change.base, path)
            return _parsed_policy(text, path) if text is not None else Policy(path=path)
        except InputError as exc:
            self.report("G8", path, exc.line,
                        f"the policy on base {self.change.base_ref} is invalid ({exc.message}); "
                        "every changed path is treated as L4 until it is fixed",
                        commit=self.change.base)
            return Policy(default_level="L4", path=path)

    @cached_property
    def head_policy(self) -> Policy | None:
        """The policy as the change leaves it at head (None: no policy file there), parsed once per text. Raises
        `InputError` where it does not parse; the rules stay the base's (`policy`)."""
        text = self.change.read_at(self.change.head, self.policy_path)
        return _parsed_policy(text, self.policy_path) if text is not None else None

    def profile_of(self, front_matter: dict | None) -> Profile | None:
        """The process a record follows under the base configuration (None: one it does not allow)."""
        process = field_of(front_matter, "process")
        return self.settings.profile_for(process if isinstance(process, str) else None)

    @cached_property
    def base_records(self) -> dict[str, RecordSnapshot]:
        return self.change.records_at_base()

    @cached_property
    def change_authors(self) -> list[tuple[Person, str]]:
        """(person, sha) of every commit author and co-author in base..head."""
        return self.change.authors()

    def wrote_commit(self, person: Person) -> str | None:
        """The sha of a commit in base..head that `person` authored or co-authored, else None."""
        for author, sha in self.change_authors:
            if same_person(author, person):
                return sha
        return None

    def record_authors(self, *snapshots: RecordSnapshot | None) -> list[Person]:
        people: list[Person] = []
        for snapshot in snapshots:
            if snapshot is not None:
                people.extend(people_of(field_of(snapshot.front_matter, "authors")))
        return people

    @cached_property
    def approvals(self):
        """The change's approvals, from the sources the base policy trusts (`gates.history.approvals`)."""
        from gates.history.approvals import ApprovalBook

        return ApprovalBook(self)


@lru_cache(maxsize=64)
def _parsed_policy(text: str, path: str) -> Policy:
    """A policy text parsed once: a history run judges many commits under the same policy (read-only data)."""
    return parse_policy(text, path)


def claims(change: ChangeSet) -> list[tuple[object, str]]:
    """(RecordChange, stage) for each record base..head changed that names a stage at head.

    A pull request claims the head stage of the records it changes; one that changes
    no record claims no stage, and neither does one that only re-measures a record
    (`only_remeasured`): refreshed evidence re-pinned and quoted numbers re-quoted leave
    the record where it was, as if the pull request had not touched it.
    """
    found = []
    for record_change in change.records:
        stage = field_of(record_change.head_front_matter, "stage")
        if stage in STAGES and not only_remeasured(record_change):
            found.append((record_change, stage))
    return found


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def only_remeasured(record_change) -> bool:
    """Whether base..head changed the record only in its evidence pins (`evidence[].sha256`)
    and in numbers of its text (`gate-check refresh`, `--fix`): same front matter otherwise,
    same text with every number masked."""
    base, head = record_change.base, record_change.head
    if base is None or head is None or base.record is None or head.record is None:
        return False

    def unpinned(front_matter: dict) -> dict:
        evidence = front_matter.get("evidence")
        if not isinstance(evidence, list):
            return front_matter
        return {**front_matter, "evidence": [{k: v for k, v in entry.items() if k != "sha256"}
                                             if isinstance(entry, dict) else entry for entry in evidence]}

    return (unpinned(base.record.front_matter) == unpinned(head.record.front_matter)
            and _NUMBER.sub("#", base.record.body) == _NUMBER.sub("#", head.record.body))
