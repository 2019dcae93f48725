"""A record's contract: the fields an approval is given for, and how two versions of them differ.

An approval covers what the reviewer read. When the contract changes after it,
the approval is stale, as forges dismiss a review when new commits arrive. The
contract is:

- `covers`, `risk`, `claim_level`, `api`;
- the numeric contract (oracle, suite, tolerances), the bitwise contract (suite,
  anchors, fingerprints and their `accepted_changes`) and `capture` (required,
  due);
- every question the reviewer saw: its text, `decision` and `blast_radius`. A
  question removed, reworded or decided differently stales the approval; a new
  question stales it only when it arrives with a decision (a decision is the
  reviewer's, and one the reviewer never saw was not theirs);
- every unknown the reviewer saw: its text and `closes_at`, and once it is
  closed, its status and evidence. Removing an unknown, moving its stage or
  reopening it stales the approval; a new unknown does not.

What a series legitimately does after the approval does not stale it: closing an
open unknown (with evidence, which G2 checks), naming an evidence artifact for the
numeric, bitwise or capture contract where none was named yet (the gate that
reads it judges it), answering a question's `note` or an unknown's `answer`, and
moving `stage`, `record_status`, `series` and the `evidence` list along.
"""

from __future__ import annotations

PLAIN_FIELDS = ("covers", "risk", "claim_level", "api")
SECTIONS_WITH_EVIDENCE = ("numeric_contract", "bitwise", "capture")
QUESTION_FIELDS = ("question", "decision", "blast_radius")
UNKNOWN_FIELDS = ("question", "closes_at")

CONTRACT_FIELDS = PLAIN_FIELDS + SECTIONS_WITH_EVIDENCE + ("questions", "unknowns")


def contract_changes(before: dict | None, after: dict | None) -> list[str]:
    """The contract items (`numeric_contract.tolerances`, `questions.Q3.decision`, ...) that differ.

    `before` is the record as the approval saw it, `after` the record now; the order
    matters, because some moves (closing an unknown, naming evidence) only go forward."""
    if before is None or after is None:
        return [] if before is after else ["the whole record (it does not exist in one of the two versions)"]
    changed: list[str] = []
    for key in PLAIN_FIELDS:
        changed.extend(_field_changes(key, before.get(key), after.get(key)))
    for key in SECTIONS_WITH_EVIDENCE:
        changed.extend(_section_changes(key, before.get(key), after.get(key)))
    changed.extend(_question_changes(before.get("questions"), after.get("questions")))
    changed.extend(_unknown_changes(before.get("unknowns"), after.get("unknowns")))
    return changed


def _field_changes(key: str, old, new) -> list[str]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        return [f"{key}.{sub}" for sub in sorted(set(old) | set(new), key=str) if old.get(sub) != new.get(sub)]
    return [key]


def _section_changes(key: str, old, new) -> list[str]:
    """A section whose `evidence` may be named after the approval where none was named in it."""
    if isinstance(old, dict) and isinstance(new, dict) and old.get("evidence") is None:
        new = {k: v for k, v in new.items() if k != "evidence"}
        old = {k: v for k, v in old.items() if k != "evidence"}
    return _field_changes(key, old, new)


def _by_id(entries) -> dict[str, list[dict]]:
    """Entries grouped by id, in order (a repeated id keeps all its entries)."""
    grouped: dict[str, list[dict]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            grouped.setdefault(str(entry.get("id")), []).append(entry)
    return grouped


def _question_changes(old_list, new_list) -> list[str]:
    old, new = _by_id(old_list), _by_id(new_list)
    changed = []
    for qid, entries in old.items():
        later = new.get(qid)
        if later is None:
            changed.append(f"questions.{qid} (removed)")
        elif len(later) != len(entries):
            changed.append(f"questions.{qid}")
        else:
            changed.extend(f"questions.{qid}.{field}" for field in QUESTION_FIELDS
                           if any(a.get(field) != b.get(field) for a, b in zip(entries, later)))
    for qid, entries in new.items():
        if qid not in old and any(entry.get("decision") is not None for entry in entries):
            changed.append(f"questions.{qid} (new, with a decision)")
    return changed


def _unknown_changes(old_list, new_list) -> list[str]:
    old, new = _by_id(old_list), _by_id(new_list)
    changed = []
    for uid, entries in old.items():
        later = new.get(uid)
        if later is None:
            changed.append(f"unknowns.{uid} (removed)")
            continue
        if len(later) != len(entries):
            changed.append(f"unknowns.{uid}")
            continue
        pairs = list(zip(entries, later))
        fields = [field for field in UNKNOWN_FIELDS if any(a.get(field) != b.get(field) for a, b in pairs)]
        closed = [(a, b) for a, b in pairs if a.get("status") != "open"]
        if any(a.get("status") != b.get("status") for a, b in closed):
            fields.append("status")
        if any((a.get("evidence") or []) != (b.get("evidence") or []) for a, b in closed):
            fields.append("evidence")
        changed.extend(f"unknowns.{uid}.{field}" for field in fields)
    return changed
