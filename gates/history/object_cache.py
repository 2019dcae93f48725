"""Values kept by git object id (or by a pair of commits) for the length of a run.

A history run judges one commit after another, and one commit's head is the next one's base: most files, and so
most readings of them, are the same from commit to commit.
"""

from __future__ import annotations


def kept_in(table: dict, limit: int, key, compute):
    """`compute()`, kept in `table` under `key` (a git object id, a pair of commits) and served from there next time;
    not kept where the key is None. The table starts afresh once it holds `limit` entries."""
    if key is not None and key in table:
        return table[key]
    value = compute()
    if key is not None:
        if len(table) >= limit:
            table.clear()
        table[key] = value
    return value
