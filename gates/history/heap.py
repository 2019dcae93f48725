"""Python's cycle collector in a history run: what the run keeps is scanned once, not at every collection.

A `--history` run keeps what it read (syntax trees, scopes, surfaces) from one commit to the next, millions of
objects that live until the run ends. Left to itself, the collector walks all of them again each time it
collects its oldest generation, which costs more than reading the modules did. `kept_between_commits` turns
the automatic collections off for the run, collects the garbage of each judged commit when the commit is done,
and then moves what survived out of the collector's sight (`gc.freeze`), so that each object is looked at once;
when the run ends (or fails) the collector gets them back and is turned on again. The process also freezes its
heap when it exits (`atexit`), so that the interpreter's exit frees the readings without walking them for cycles,
which took longer than a long run's last minutes of checking. What each commit is judged to be does not depend on
any of this.
"""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager

_EXIT_FREEZE = []  # [True] once `gc.freeze` is registered to run at exit


class _Settler:
    def __init__(self, active: bool):
        self.active = active

    def commit_done(self) -> None:
        """Free the judged commit's garbage, then keep what survived out of later collections."""
        if self.active:
            gc.collect()
            gc.freeze()


@contextmanager
def kept_between_commits():
    """Yields an object whose `commit_done()` the run calls after each commit. Nothing is frozen where the caller
    froze objects itself (`gc.get_freeze_count()` is not 0) or the collector is off: that heap is the caller's."""
    settler = _Settler(gc.isenabled() and gc.get_freeze_count() == 0)
    if settler.active:
        if not _EXIT_FREEZE:
            atexit.register(gc.freeze)
            _EXIT_FREEZE.append(True)
        gc.disable()
    try:
        yield settler
    finally:
        if settler.active:
            gc.unfreeze()
            gc.enable()
