"""G8: the checker that judges a change is not the change's own modified copy of itself.

A change to design-gates' own code (this repository's `gates/`) could switch off the
very check it is judged by, if CI ran `gate-check` from the pull request's checkout.
CI must install the checker from the base ref (see `.github/workflows/gate-check.yml`);
this check is the tripwire for when it did not: the change modifies files of the
`gates` package, and every one of them is, byte for byte, what the running `gates`
package holds. Then the judge is the change itself, and the run fails.

This catches a checker run from the head's checkout. It cannot stop a head that also
rewrites this module; only running the base's checker does that.
"""

from __future__ import annotations

from pathlib import Path

import gates
from gates.history.context import SeriesContext

PACKAGE = "gates"
RUNNING_ROOT = Path(gates.__file__).resolve().parent.parent  # the folder that holds the running package


def _running_bytes(path: str) -> bytes | None:
    file = RUNNING_ROOT / path
    try:
        return file.read_bytes() if file.is_file() else None
    except OSError:
        return None


def modified_checker_files(ctx: SeriesContext) -> list[str]:
    """The package files the change modifies, when the running checker is the head's copy of them (else [])."""
    change = ctx.change
    changed = [p for p in change.changed_paths() if p.startswith(PACKAGE + "/")]
    present = []
    for path in changed:
        head = change.read_bytes_at(change.head, path)
        if _running_bytes(path) != head:
            return []  # the running checker is not the head's: the base's, or another release
        if head is not None:
            present.append(path)
    return present


def check(ctx: SeriesContext) -> None:
    modified = modified_checker_files(ctx)
    if not modified:
        return
    shown = ", ".join(modified[:3]) + (f" and {len(modified) - 3} more" if len(modified) > 3 else "")
    ctx.report("G8", modified[0], 1,
               f"the checker judging this change is modified by it ({shown} differ from base "
               f"{ctx.change.base_ref}, and the running gate-check is this change's copy); "
               "run the base ref's gate-check: install design-gates from the base commit and check the head with it")
