"""A record's contract: the fields an approval is given for, and how two versions of them differ.

An approval covers what the reviewer read. When `covers`, the numeric contract
(tolerances, suite, oracle), the bitwise contract (anchors, fingerprints, suite),
`api` or `risk` change after it, the approval is stale, as forges dismiss a
review when new commits arrive.
"""

from __future__ import annotations

CONTRACT_FIELDS = ("covers", "numeric_contract", "bitwise", "api", "risk")


def contract_changes(before: dict | None, after: dict | None) -> list[str]:
    """The contract fields (`numeric_contract.tolerances`, `covers`, ...) that differ between two front matters."""
    if before is None or after is None:
        return [] if before is after else ["the whole record (it does not exist in one of the two versions)"]
    changed = []
    for key in CONTRACT_FIELDS:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            changed.extend(f"{key}.{sub}" for sub in sorted(set(old) | set(new), key=str) if old.get(sub) != new.get(sub))
        else:
            changed.append(key)
    return changed
