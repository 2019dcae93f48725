"""A fresh import reading run under a reaper: nothing it starts outlives it.

An import reading runs the code of the tree it reads. The checker runs a fresh reading in a session of its own and
kills that session when the reading ends, but a process that starts a session of its own (`setsid`, a double fork,
`start_new_session=True`, `os.posix_spawn` with `setsid`) leaves it, and would go on running, and writing, while
the next readings run. On Linux a fresh reading therefore runs as the child of a small reaper process (`python -I -S`,
nothing of the tree on its path) that is the subreaper of what it runs (`PR_SET_CHILD_SUBREAPER`): a process that
leaves the reading's session becomes the reaper's child once its parent ends, and when the reading ends, or passes
its time limit, the reaper stops, then kills, every process below it, round after round until none is left (a chain
of processes each in a session of its own included), before it exits itself. Where some are still there after 10 s,
it says so, and the check stops (exit 2): nothing read after such a reading can be trusted. Forked readings get the
same from the import server (`gates.python_api.import_server`).

A reading can also kill the reaper or the server that runs it, to leave their sweep. The checker is therefore the
subreaper of what it starts as well (`checker_children`): what such a reading left behind becomes the checker's
child, and after every reading the checker sweeps every process below it but the children it had before the
reading (its git readers, its import server) (`ended_with`). A reaper killed that way fails the reading.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import contextmanager

TIMED_OUT = "timed out"
UNENDED = " unended"
"""What the reaper adds to the status where processes the reading started were still there after its sweep."""

SWEEP = r'''
def children_by_parent():
    """The process table as each process's children, by the parent's pid."""
    below = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    below.setdefault(int(handle.read().rsplit(b")", 1)[1].split()[1]), []).append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return below


def descendants(keep=()):
    """Every process below this one in the process table, the subtrees of the children `keep` left out."""
    below = children_by_parent()
    found, pending = [], [pid for pid in below.get(os.getpid(), []) if pid not in keep]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(below.get(pid, []))
    return found


def end(pid):
    """Kill the process `pid` and its process group (a reading's session, or a stray's own group)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def sweep(keep=(), limit=10.0):
    """Kill every process below this one but the children `keep` and theirs (what readings left behind: a process
    that left a reading's session becomes this subreaper's child when its parent ends), each round stopping all of
    them first so that none can start another, and reap them; False where some were still there after `limit` s."""
    deadline = time.monotonic() + limit
    while True:
        strays = descendants(keep)
        if not strays:
            return True
        if time.monotonic() > deadline:
            return False
        for pid in strays:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in strays:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
'''
"""The sweep the reaper and the import server run when a reading ends (`os`, `signal` and `time` imported before it)."""

_REAPER = r'''
import ctypes, os, signal, sys, time
''' + SWEEP + r'''

libc = ctypes.CDLL(None)
if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    os._exit(70)
limit, status_path, command = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    try:
        os.execv(command[0], command)
    finally:
        os._exit(127)
expired = []


def expire(*_):
    expired.append(True)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


signal.signal(signal.SIGALRM, expire)
signal.setitimer(signal.ITIMER_REAL, limit)
_, status = os.waitpid(pid, 0)
signal.setitimer(signal.ITIMER_REAL, 0)
ended = sweep()
with open(status_path, "w") as handle:
    handle.write(("timed out" if expired else str(os.waitstatus_to_exitcode(status))) + ("" if ended else " unended"))
os._exit(0)
'''


_SUBREAPER: list[bool] = []  # [True] once this process made itself the subreaper of what it starts
_SWEEPING: dict = {}  # SWEEP's functions, run in this process


def checker_children() -> set[int]:
    """This process's children now (its git readers, its import server), which a reading's sweep leaves alone.
    On Linux the first call also makes this process the subreaper of what it starts: a process a reading started
    that killed its reaper or server, to leave their sweep, becomes this process's child instead of init's."""
    if not supported():
        return set()
    if not _SUBREAPER:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        _SUBREAPER.append(True)
    return set(_sweeping()["children_by_parent"]().get(os.getpid(), []))


@contextmanager
def ended_with(keep: set[int]):
    """Run a reading; when it ends, end every process below this one but `keep` and theirs (what the reading left
    here after killing the process that ran it). Raises ReadingNotEnded where some are still there after 10 s."""
    from gates.python_api.import_server import ReadingNotEnded

    try:
        yield
    finally:
        if supported() and not _sweeping()["sweep"](keep=keep):
            raise ReadingNotEnded("processes the import started were still running after it ended")


def _sweeping() -> dict:
    if not _SWEEPING:
        _SWEEPING.update(os=os, signal=signal, time=time)
        exec(compile(SWEEP, "<sweep>", "exec"), _SWEEPING)
    return _SWEEPING


def supported() -> bool:
    """The reaper runs on Linux (`prctl`, `/proc`)."""
    return sys.platform.startswith("linux")


def reaped(command: list[str], limit: float, status_path: str) -> list[str]:
    """`command` run under the reaper, which ends it after `limit` seconds and writes its exit status (or
    `TIMED_OUT`) to `status_path`."""
    return [sys.executable, "-I", "-S", "-c", _REAPER, str(limit), status_path, *command]
