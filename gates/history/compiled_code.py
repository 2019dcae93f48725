"""G0: a change adds no compiled Python bytecode.

Python runs a `__pycache__/*.pyc` file instead of its source when the bytecode is
written with an unchecked hash, and even a checked one can stand in for a module whose
source is gone. Evidence binds sources (`gates.evidence.source_binding` leaves `__pycache__` out,
because every test run writes it) and reviewers read sources, so bytecode committed by
a change would run code that neither evidence nor review has seen. Any added, modified,
renamed or copied path under a `__pycache__` folder or ending in `.pyc`/`.pyo` is a
finding; deleting one is not.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from gates.history.context import SeriesContext

BYTECODE_SUFFIXES = (".pyc", ".pyo")


def is_bytecode(path: str) -> bool:
    """Whether `path` is compiled Python: under a `__pycache__` folder, or a `.pyc`/`.pyo` file."""
    pure = PurePosixPath(path)
    return "__pycache__" in pure.parts[:-1] or pure.suffix.lower() in BYTECODE_SUFFIXES


def check(ctx: SeriesContext) -> None:
    for changed in ctx.change.changed:
        if changed.status == "D" or not is_bytecode(changed.path):
            continue
        ctx.report("G0", changed.path, 1,
                   f"{changed.path} is compiled Python bytecode: it can run instead of its source, which the "
                   "evidence binds and the reviewers read; remove it from the change and ignore __pycache__/ "
                   "and *.pyc in .gitignore")
