"""A fresh import reading run under a reaper: nothing it starts outlives it.

An import reading runs the code of the tree it reads. The checker runs a fresh reading in a session of its own and
kills that session when the reading ends, but a process that starts a session of its own (`setsid`, a double fork,
`start_new_session=True`, `os.posix_spawn` with `setsid`) leaves it, and would go on running, and writing, while
the next readings run. On Linux a fresh reading therefore runs as the child of a small reaper process (`python -I -S`,
nothing of the tree on its path) that is the subreaper of what it runs (`PR_SET_CHILD_SUBREAPER`): a process that
leaves the reading's session becomes the reaper's child once its parent ends, and when the reading ends, or passes
its time limit, the reaper kills every such child (and its process group) before it exits itself. Forked readings
get the same from the import server (`gates.python_api.import_server`).
"""

from __future__ import annotations

import sys

TIMED_OUT = "timed out"

_REAPER = r'''
import ctypes, os, signal, sys

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


def children():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if int(handle.read().rsplit(b")", 1)[1].split()[1]) == os.getpid():
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


for _ in range(100):
    strays = children()
    if not strays:
        break
    for stray in strays:
        for kill in (os.killpg, os.kill):
            try:
                kill(stray, signal.SIGKILL)
            except OSError:
                pass
    for stray in strays:
        try:
            os.waitpid(stray, 0)
        except ChildProcessError:
            pass
with open(status_path, "w") as handle:
    handle.write("timed out" if expired else str(os.waitstatus_to_exitcode(status)))
os._exit(0)
'''


def supported() -> bool:
    """The reaper runs on Linux (`prctl`, `/proc`)."""
    return sys.platform.startswith("linux")


def reaped(command: list[str], limit: float, status_path: str) -> list[str]:
    """`command` run under the reaper, which ends it after `limit` seconds and writes its exit status (or
    `TIMED_OUT`) to `status_path`."""
    return [sys.executable, "-I", "-S", "-c", _REAPER, str(limit), status_path, *command]
