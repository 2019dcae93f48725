"""Several pytest processes share one suite by taking its cases from a common queue.

`python -m validation.run_suite numeric --jobs 6` starts six processes with `--pull DIR`.
Each collects the whole suite, then walks its cases in one order and runs a case only
when it is the first to claim it (an exclusive create of `DIR/<case>`), every test of the
case in the same process. A process that drew cheap cases simply takes more of them, so
the processes finish together whatever the cases cost, which fixed shards (`--shard K/N`)
cannot promise. The tests a process did not claim are reported deselected there; the
merge (`validation/suite_shards.py`) checks that the processes together ran each test
exactly once.

`--pull-order reverse` walks the cases from the end. The bitwise suite runs that way
beside the numeric one: the two compile largely the same kernels, and meeting in the
middle lets each load from Triton's cache what the other compiled first.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest

from validation.suites.tiers import case_of

ORDERS = ("forward", "reverse")


def case_groups(items, order: str = "forward") -> list[tuple[str, list]]:
    """The items grouped by case, in collection order of first appearance (or its reverse);
    tests without a case form one group of their own."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; expected one of {ORDERS}")
    groups: dict[str, list] = {}
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        case = case_of(params)
        groups.setdefault("(no case)" if case is None else str(case), []).append(item)
    ordered = list(groups.items())
    return ordered[::-1] if order == "reverse" else ordered


class CaseQueue:
    """A pytest plugin: run only the cases this process claims first in `claims`."""

    def __init__(self, claims: Path, order: str):
        self.claims = Path(claims)
        self.order = order
        self.claims.mkdir(parents=True, exist_ok=True)

    def claim(self, case: str) -> bool:
        """True when this process is the first to take `case`."""
        name = hashlib.sha256(case.encode()).hexdigest()[:32]
        try:
            os.close(os.open(self.claims / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def _claimed(self, groups):
        for case, items in groups:
            if self.claim(case):
                yield case, items

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise session.Interrupted(f"{session.testsfailed} error(s) during collection")
        if session.config.option.collectonly:
            return True
        start = time.monotonic()
        ran: list = []
        claimed = self._claimed(case_groups(session.items, self.order))
        current = next(claimed, None)
        while current is not None:
            case, items = current
            began, following = time.monotonic(), None
            for index, item in enumerate(items):
                if index + 1 < len(items):
                    upcoming = items[index + 1]
                else:  # claim the next case first, so the fixtures the two share are kept
                    following = next(claimed, None)
                    upcoming = following[1][0] if following is not None else None
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=upcoming)
                ran.append(item)
                if session.shouldfail:
                    raise session.Failed(session.shouldfail)
                if session.shouldstop:
                    raise session.Interrupted(session.shouldstop)
            sys.stdout.write(f"\n[{time.monotonic() - start:6.1f} s] case {case}: {len(items)} test(s) "
                             f"in {time.monotonic() - began:.1f} s\n")
            current = following
        taken = {id(item) for item in ran}
        others = [item for item in session.items if id(item) not in taken]
        if others:
            session.config.hook.pytest_deselected(items=others)
        session.items[:] = ran
        return True
