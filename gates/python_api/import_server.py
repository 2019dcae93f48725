"""Import readings forked from an interpreter that has already imported the libraries they need.

An import reading (`gates.python_api.imported_surface`) runs in a Python process of its own, and in a kernel library
most of its time is the import of `torch` that every reading repeats (about 1.5 s each). On Linux, the readings of a
run fork from one interpreter that imported, at its start, the installed libraries the checked packages import at
their top level (or, where none is known before, those the first reading said it brought in from outside the
tree), and nothing of any tree: each reading then costs the tree's own import. A forked reading is the fresh
process's reading, with these differences, each checked or stated:

- The libraries were imported before the tree's folders were on `sys.path`. Where a folder of the tree on the path
  holds a module of the same top-level name as anything the interpreter imported or looked for while it started
  (a `numpy.py`, a `torch/`, a `sitecustomize.py`), or where the tree holds a relative entry of `sys.path` (an
  editable install's finder), a fresh import could have taken the tree's instead: that reading runs in a fresh
  process.
- Forking a process while another Python thread runs can leave a lock of the interpreter held in the child: an
  interpreter with a second Python thread after its imports is not used. (Native thread pools that libraries start
  at import, such as OpenBLAS's, reset themselves in a forked child, as they do under `multiprocessing`.)
- The libraries are imported from the root folder, not from the tree's: one that reads files of the folder it is
  imported from while it loads does not see the tree's.
- The child starts a session of its own, and its output goes to files, as a fresh reading's does. When it ends
  (or passes its time limit), the server kills its session, and, being the subreaper of what it forks, every
  process the reading started that left the session: such a process becomes the server's child once its parent
  ends, and the server stops, then kills, every process below it but the readings still running, until none is
  left (`gates.python_api.reaper.SWEEP`; where some are still there after 10 s the check stops). When the checker is
  done, the server kills whatever still runs.

Nothing the tree runs reaches the interpreter the readings fork from: it never imports the tree's code, each reading
runs in its own child, and the server is not dumpable, so a reading cannot open its pipes through
`/proc/<pid>/fd` to send it requests or send the checker replies. (A checker run as root with `CAP_SYS_PTRACE` gives
the tree's code that reach, and into any process of the run, the checker's own included: run it as an ordinary
user.) The checker never signals a process by a number the server's pipe names. Anything else (a platform without `fork`, an interpreter that stopped) makes the
reading run in a fresh process, as before.
"""

from __future__ import annotations

import atexit
import json
import os
import site
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass, field
from importlib.machinery import PathFinder

from gates.python_api.reaper import SWEEP

_START_WAIT = 60.0
_END_WAIT = 10.0
"""How long a reading past its time limit waits for the server to say it ended it."""
"""How long a reading waits for the server to finish importing its libraries before it runs in a fresh process."""
SHADOWED_EXIT = 86
"""The exit status of a forked reading that found a module of the tree named as one the interpreter imported."""
_SHADOWED = "\x1edesign-gates-shadowed\x1e"

_SERVER = r'''
import builtins, importlib, json, os, select, signal, sys, time, traceback, types
''' + SWEEP + r'''

preload = json.loads(sys.argv[1])
# Not dumpable: a reading's code cannot open this process's pipes through /proc/<pid>/fd to send it requests or
# the checker replies. A subreaper: a process a reading starts that leaves the reading's session becomes this
# process's child when its parent ends, and is killed here when the reading ends.
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    guarded = libc.prctl(4, 0, 0, 0, 0) == 0 and libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_DUMPABLE, _CHILD_SUBREAPER
except (OSError, AttributeError, ImportError):
    libc, guarded = None, False
replies = os.fdopen(os.dup(1), "w", buffering=1)
silent = os.open(os.devnull, os.O_RDWR)
os.dup2(silent, 1)  # what a library prints while it is imported is not a reply

tried = set()

class Tried:
    """Notes the top-level name of every module anything imports, or looks for, while the libraries load."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        tried.add(name.partition(".")[0])
        return None

sys.meta_path.insert(0, Tried)
for name in preload:
    try:
        importlib.import_module(name)
    except BaseException:
        pass
sys.meta_path.remove(Tried)
sys.stdout.flush()
sys.stderr.flush()
names = sorted(tried | {name.partition(".")[0] for name in list(sys.modules)} | {"sitecustomize", "usercustomize"})
threads = sys.modules["threading"].active_count() if "threading" in sys.modules else 1
replies.write(json.dumps({"ready": True, "threads": threads, "guarded": guarded}) + "\n")

wake_read, wake_write = os.pipe()
os.set_blocking(wake_read, False)
os.set_blocking(wake_write, False)
signal.set_wakeup_fd(wake_write)
signal.signal(signal.SIGCHLD, lambda *_: None)


relative = [entry for entry in sys.path if isinstance(entry, str) and entry and not os.path.isabs(entry)]


def shadowed(roots, folder):
    for entry in relative:  # a relative entry (an editable install's finder) is looked up in the tree's folder
        if os.path.lexists(os.path.join(folder, entry)):
            return entry
    for root in roots:
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for entry in entries:
            if entry.partition(".")[0] in names:
                return entry
    return None


def child(request):
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    libc.prctl(4, 1, 0, 0, 0)  # dumpable again, as a fresh process is
    libc.prctl(36, 0, 0, 0, 0)  # its own orphans go to the server, not to it
    for fd in (0, wake_read, wake_write, replies.fileno()):
        os.close(fd)
    os.dup2(silent, 0)
    os.dup2(os.open(request["out"], os.O_WRONLY), 1)
    os.dup2(os.open(request["err"], os.O_WRONLY), 2)
    code = 1
    try:
        clash = shadowed(request["path"], request["cwd"])
        if clash is not None:
            sys.stdout.write(request["shadowed"] + clash + "\n")
            code = request["shadowed_exit"]
            return
        os.chdir(request["cwd"])
        os.environ["PYTHONPATH"] = os.pathsep.join(request["path"])
        sys.path[0:0] = request["path"]
        importlib.invalidate_caches()
        sys.argv = ["-c", *request["argv"]]
        main = types.ModuleType("__main__")
        main.__builtins__ = builtins
        main.__design_gates_looked__ = {"listed": list(request["path"]),
                                        "probed": [os.path.join(request["cwd"], entry) for entry in relative]}
        sys.modules["__main__"] = main
        try:
            exec(compile(request["script"], "<string>", "exec"), vars(main))
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, (int, type(None))):
                print(stop.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


running = {}
pending = b""
while True:
    ready, _, _ = select.select([0, wake_read], [], [])
    if wake_read in ready:
        try:
            while os.read(wake_read, 512):
                pass
        except BlockingIOError:
            pass
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid in running:  # a reading ended: end what it left running, then say so
            end(pid)
            number = running.pop(pid)
            ended = sweep(keep=running)
            replies.write(json.dumps({"id": number, "status": os.waitstatus_to_exitcode(status), "ended": ended}) + "\n")
    if 0 in ready:
        data = os.read(0, 1 << 16)
        if not data:  # the checker is done (or gone): nothing a reading started outlives it
            sweep()
            os._exit(0)
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            if "kill" in request:  # the checker's time limit: end the reading (its status follows when it is reaped)
                for pid, number in list(running.items()):
                    if number == request["kill"]:
                        end(pid)
                continue
            pid = os.fork()
            if pid == 0:
                child(request)
            running[pid] = request["id"]
            replies.write(json.dumps({"id": request["id"], "pid": pid}) + "\n")
'''


class ReadingNotEnded(Exception):
    """Processes a reading started could not all be ended with it: what the checks read after it cannot be trusted."""


class Unavailable(Exception):
    """The reading cannot fork from the server (it stopped, or a module of the tree is named as one it imported):
    run it in a fresh process."""


@dataclass
class _Request:
    done: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    pid: int | None = None
    status: int | None = None
    ended: bool = False  # every process the reading started was ended with it


class ImportServer:
    """An interpreter that imported `preload` (top-level module names) with the environment `env`, forking one
    child per reading (`run`)."""

    def __init__(self, preload: list[str], env: dict):
        self.preload = tuple(preload)
        self.env = dict(env)
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, json.dumps(list(preload))],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        cwd=os.path.abspath(os.sep), env=self.env)
        self._lock = threading.Lock()
        self._requests: dict[int, _Request] = {}
        self._next = 0
        self._ready = threading.Event()
        self._pipe_closed = threading.Event()
        self.usable = False
        self._reader = threading.Thread(target=self._read_replies, daemon=True)
        self._reader.start()

    def _read_replies(self) -> None:
        try:
            for line in self.process.stdout:
                reply = json.loads(line)
                if reply.get("ready"):
                    self.usable = reply.get("threads") == 1 and reply.get("guarded") is True
                    self._ready.set()
                    continue
                request = self._requests.get(reply["id"])
                if request is None:
                    continue
                if "pid" in reply:
                    request.pid = reply["pid"]
                    request.started.set()
                else:
                    request.status = reply["status"]
                    request.ended = reply.get("ended") is True
                    request.done.set()
        except (ValueError, KeyError, OSError):
            pass
        finally:
            self.usable = False
            self._pipe_closed.set()
            self._ready.set()
            for request in list(self._requests.values()):
                request.started.set()
                request.done.set()

    def run(self, argv: list[str], script: str, folder: str, path: list[str], out: str, err: str,
            timeout: float) -> int:
        """Fork a child that runs `script` as `python -c script *argv` would in `folder` with `path` as PYTHONPATH,
        writing its output to the files `out` and `err`; its exit status. Raises subprocess.TimeoutExpired (the
        child's session killed), or Unavailable where the reading must run in a fresh process."""
        self._ready.wait(min(timeout, _START_WAIT))
        if not self.usable:
            raise Unavailable("the server is not running")
        with self._lock:
            self._next += 1
            number = self._next
            request = self._requests[number] = _Request()
            line = json.dumps({"id": number, "argv": argv, "script": script, "cwd": folder, "path": path, "out": out,
                               "err": err, "shadowed": _SHADOWED, "shadowed_exit": SHADOWED_EXIT}) + "\n"
            try:
                self.process.stdin.write(line.encode("utf-8"))
                self.process.stdin.flush()
            except OSError as exc:
                self._requests.pop(number, None)
                raise Unavailable(f"the server stopped ({exc})") from exc
        deadline = time.monotonic() + timeout
        try:
            request.started.wait(timeout)
            finished = request.done.wait(max(0.0, deadline - time.monotonic()))
            if request.pid is None:
                raise Unavailable("the server stopped before the reading started")
            if not finished:
                self._send({"kill": number})  # the server ends it and what it started; its status follows
                request.done.wait(_END_WAIT)
                raise subprocess.TimeoutExpired(argv, timeout)
            if request.status is None:
                raise Unavailable("the server stopped while the reading ran")
            if not request.ended:
                raise ReadingNotEnded("processes the import started were still running after it ended")
            if request.status == SHADOWED_EXIT and _shadowed_mark(out):
                raise Unavailable("a module of the tree is named as one the server imported")
            return request.status
        finally:
            self._requests.pop(number, None)

    def _send(self, message: dict) -> None:
        with self._lock:
            try:
                self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
                self.process.stdin.flush()
            except OSError:
                pass

    def gone(self) -> bool:
        """Whether the server process has ended: where its pipe has closed, waits for it to be gone, so that the
        processes it left have been handed to this process."""
        if not self._pipe_closed.is_set():
            return False
        try:
            self.process.wait(timeout=_END_WAIT)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _shadowed_mark(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(_SHADOWED)) == _SHADOWED.encode("utf-8")


_SHARED: dict[tuple, ImportServer] = {}
_SHARED_LOCK = threading.Lock()


def supported() -> bool:
    """Forked readings run on Linux, where `fork` is the default way `multiprocessing` starts processes."""
    return hasattr(os, "fork") and hasattr(os, "killpg") and sys.platform.startswith("linux")


def shared_server(env: dict) -> ImportServer | None:
    """The server started for `env` in this process, if any."""
    return _SHARED.get(_env_key(env))


def start_shared_server(imported: list[str], env: dict) -> None:
    """Start the server for `env` (once per process) with the installed libraries among `imported`: the top-level
    modules a reading said it imported from outside the tree, or those the tree's modules import. The names come
    from the tree, so only a library that this interpreter's site-packages hold is imported: what the server runs is
    what the environment installed."""
    if not supported() or shared_server(env) is not None:
        return
    preload = installed_libraries(imported)
    if not preload:
        return
    key = _env_key(env)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = ImportServer(preload, env)
            atexit.register(_SHARED[key].close)


def site_folders(user: bool = False) -> list[str]:
    """This interpreter's site-packages folders that exist (with the user's own, where `user`)."""
    folders = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
               *getattr(site, "getsitepackages", lambda: [])()}
    own = getattr(site, "getusersitepackages", lambda: None)() if user else None
    if isinstance(own, str):
        folders.add(own)
    return sorted(folder for folder in folders if os.path.isdir(folder))


def installed_libraries(names) -> list[str]:
    """The names among `names` that are top-level modules in this interpreter's site-packages folders."""
    folders = site_folders()
    found = []
    for name in sorted({name for name in names if isinstance(name, str) and name.isidentifier()}):
        try:
            if PathFinder.find_spec(name, folders) is not None:
                found.append(name)
        except (ImportError, ValueError, OSError):
            continue
    return found


def _env_key(env: dict) -> tuple:
    return tuple(sorted(env.items()))
