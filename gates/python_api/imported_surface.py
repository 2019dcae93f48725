"""A module's public surface read by importing it in a fresh Python process: the second way to read it.

Where the static reader (`gates.python_api.api_surface`) cannot read a module, G5 imports the
module of each side (base and head, each checked out in its own folder) in a subprocess and reads
what the import binds with `inspect`: the public names (`__all__`, else `dir()` without imports
from outside the package), each callable's signature (defaults as their `repr`), each class's
constructor (`inspect.signature(cls)`, which is what `Class(...)` accepts, `__new__` included) and
its public and protocol methods defined by the package, and whether a function is a coroutine
function. Objects made by an internal decorator (`triton.jit` kernels) are left out, as statically.

Both sides are read the same way, so the two surfaces compare like for like. Importing runs the
module's code: what it reports is as trustworthy as that code, so the history check says when a
surface was read this way (a warning naming the module), and the policy can turn it off
(`api.import_fallback: false`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gates.python_api.import_server import ReadingNotEnded, Unavailable, shared_server, start_shared_server
from gates.python_api.reaper import TIMED_OUT, UNENDED, checker_children, ended_with, reaped
from gates.python_api.reaper import supported as reaper_supported
from gates.python_api.scope_model import (
    KEYWORD_ONLY,
    POSITIONAL,
    POSITIONAL_ONLY,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Entry,
    Parameter,
)

_MARK = "\x1edesign-gates-surface\x1e"
_KINDS = {"POSITIONAL_ONLY": POSITIONAL_ONLY, "POSITIONAL_OR_KEYWORD": POSITIONAL, "VAR_POSITIONAL": VAR_POSITIONAL,
          "KEYWORD_ONLY": KEYWORD_ONLY, "VAR_KEYWORD": VAR_KEYWORD}

_SCRIPT = r'''
import importlib, inspect, json, os, sys, traceback
name, internal, mark = sys.argv[1], set(json.loads(sys.argv[2])), sys.argv[3]
top_folder = os.path.realpath(os.getcwd())
prefixes = tuple({os.path.join(folder, "") for folder in (top_folder, os.getcwd(), os.path.abspath(os.getcwd()))})
looked = {"opened": set(), "listed": set(), "probed": set(), "scanned": set()}
unsure = []
noting = []

def doubt(why):
    # what the import read cannot be told by path (a file descriptor, another process): no part of the tree
    # stands for the whole, and no other tree's import for this one
    if not unsure:
        unsure.append(why)

def note(kind, path):
    if noting or path is None:
        return
    if isinstance(path, int):
        doubt(f"a path given as a file descriptor ({kind})")
        return
    noting.append(1)
    try:
        full = os.path.abspath(os.fsdecode(path))
        if not os.path.join(full, "").startswith(prefixes):
            return  # outside the tree (the standard library, site-packages): no link of the tree leads there
        full = os.path.realpath(full)
        if full == top_folder or full.startswith(top_folder + os.sep):
            relative = os.path.relpath(full, top_folder).replace(os.sep, "/")
            looked[kind].add("" if relative == "." else relative)
    except (TypeError, ValueError, OSError):
        pass
    finally:
        noting.pop()

# what a reading forked from the import server looked at before this script ran (the folders on the path and the
# relative entries of sys.path its check for modules named like the server's looked for)
for kind, paths in globals().get("__design_gates_looked__", {}).items():
    for path in paths:
        note(kind, path)

SPAWNING = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
            "pty.spawn", "os.startfile")

def audit(event, args):
    if event == "open":
        note("opened", args[0])
    elif event in ("os.listdir", "os.scandir"):
        note("listed", "." if args[0] is None else args[0])
        if event == "os.scandir":  # its entries answer a stat of each thing in the folder
            note("scanned", "." if args[0] is None else args[0])
    elif event in ("os.mkdir", "os.rmdir", "os.remove", "os.rename", "os.link", "os.symlink"):
        note("probed", args[0])  # each tells whether the path is there
        if event in ("os.rename", "os.link", "os.symlink") and len(args) > 1:
            note("probed", args[1])
    elif event.startswith(SPAWNING):
        doubt(f"another process ({event})")

def probing(real):
    def probe(path, *args, **kwargs):
        if kwargs.get("dir_fd") is not None:
            doubt("a path relative to a folder's file descriptor (dir_fd)")
        note("probed", path)
        return real(path, *args, **kwargs)
    return probe

sys.addaudithook(audit)
# what answers whether a path is there, or what it is (os.path.exists, Path.is_file, a link's target, a folder's
# link count): each is noted, on `os` and on the platform module it comes from (`posix.stat` is the same function)
for platform in {os, sys.modules.get("posix") or sys.modules.get("nt")} - {None}:
    for probe_name in ("stat", "lstat", "access", "readlink", "pathconf", "statvfs", "getxattr", "listxattr", "open",
                       "listdir", "scandir", "chdir"):
        if hasattr(platform, probe_name):
            setattr(platform, probe_name, probing(getattr(platform, probe_name)))

def done(document):
    document["looked"] = {kind: sorted(paths) for kind, paths in looked.items()}
    document["looked"]["unsure"] = unsure[0] if unsure else None
    document["outside"] = sorted(name for name, module in list(sys.modules.items())
                                 if "." not in name and isinstance(getattr(module, "__file__", None), str)
                                 and not os.path.realpath(module.__file__).startswith(top_folder + os.sep))
    sys.stdout.write(mark + json.dumps(document) + "\n")
    sys.stdout.flush()
NOT_PROTOCOL = {"__repr__", "__str__", "__del__", "__post_init__", "__init_subclass__", "__set_name__", "__sizeof__",
                "__format__", "__getattr__", "__getattribute__", "__dir__", "__init__", "__new__", "__subclasshook__",
                "__class_getitem__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__weakref__",
                "__dict__", "__module__", "__doc__", "__qualname__", "__annotations__", "__hash__"}

def signature(obj, bound=False):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    found = [["self", "POSITIONAL_OR_KEYWORD", None]] if bound else []
    for p in sig.parameters.values():
        found.append([p.name, p.kind.name, None if p.default is p.empty else repr(p.default)[:400]])
    return found

def internal_object(obj):
    kind = type(obj).__module__ or ""
    return not inspect.isclass(obj) and not inspect.isfunction(obj) and \
        any(kind.split(".")[0] == d.split(".")[0] for d in internal)

def add_class(n, obj, depth):
    # a class, its public members (inherited from the package's classes too), and a class defined in its body with
    # its own members under it (`Scheduler.Params.create`), as the static reading reads them
    entries[n] = {"kind": "class"}
    entries[n + ".__init__"] = {"kind": "function", "params": signature(obj, bound=True)}
    for attr in dir(obj):
        owner = next((c for c in inspect.getmro(obj) if attr in vars(c)), None)
        if owner is None or (owner.__module__ or "").split(".")[0] != top:
            continue
        public = not attr.startswith("_") or attr == "__call__" or \
            (attr.startswith("__") and attr.endswith("__") and attr not in NOT_PROTOCOL)
        if not public:
            continue
        raw = vars(owner)[attr]
        if inspect.isclass(raw) and depth < 4 and (raw.__module__ or "").split(".")[0] == top:
            add_class(f"{n}.{attr}", raw, depth + 1)
            continue
        if isinstance(raw, (staticmethod, classmethod, property)) or not callable(raw):
            entries[f"{n}.{attr}"] = {"kind": "constant"}
            continue
        entries[f"{n}.{attr}"] = {"kind": "function", "params": signature(raw),
                                  "async": inspect.iscoroutinefunction(raw)}

try:
    module = importlib.import_module(name)
except Exception as exc:
    done({"error": traceback.format_exception_only(type(exc), exc)[-1].strip()})
    raise SystemExit(1)
top = name.split(".")[0]
exports = vars(module).get("__all__")
exports = list(exports) if isinstance(exports, (list, tuple)) else None
is_package = "__path__" in vars(module)
names = exports if exports is not None else [n for n in dir(module) if not n.startswith("_")]
entries = {}
for n in names:
    try:
        obj = getattr(module, n)
    except AttributeError:
        entries[n] = {"kind": "unbound"}
        continue
    own = (getattr(obj, "__module__", None) or "").split(".")[0] == top
    if inspect.ismodule(obj):
        if exports is not None or is_package and obj.__name__.startswith(name + "."):
            entries[n] = {"kind": "module-import", "source": obj.__name__}
        continue
    if exports is None and not own and not is_package:
        continue  # imported from outside, not re-exported
    if internal_object(obj) and (exports is None or n not in exports):
        continue
    if inspect.isclass(obj):
        add_class(n, obj, 0)
    elif callable(obj):
        entries[n] = {"kind": "function", "params": signature(obj), "async": inspect.iscoroutinefunction(obj)}
    else:
        entries[n] = {"kind": "constant"}
done({"exports": exports, "entries": entries})
'''


_KEPT = frozenset({"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "SYSTEMROOT"})
_KEPT_PREFIXES = ("CUDA_", "TRITON_", "TORCH_", "HIP_", "ROCM_")  # what importing a kernel library may read; no tokens


LOOKED_KINDS = ("opened", "listed", "probed", "scanned")


_REAPER_GRACE = 10.0
"""How much longer than the reading's own limit the checker waits for the reaper, which ends the reading itself."""


class _ReaperFailed(Exception):
    """The reaper did not say how the reading ended."""


class ImportFailed(Exception):
    """Importing the module failed; the message says how."""


@dataclass(frozen=True)
class Looked:
    """What an import looked at inside the folder it was imported from, as paths relative to that folder: the files
    it opened (the modules it loaded among them, and the `.pyc` it looked for), the folders it listed (the import
    system lists each folder it finds modules in; `pkgutil.iter_modules` too) and the paths it stat'ed
    (`os.path.exists`, `os.access`). Where each of these is the same in another tree, importing there does the same."""

    opened: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    probed: tuple[str, ...] = ()
    scanned: tuple[str, ...] = ()  # folders listed by os.scandir, whose entries stat what is in them
    unsure: str | None = None  # why what it read cannot be told by these paths (a file descriptor, a process)


@dataclass(frozen=True)
class ImportedReading:
    """One import of a module in a fresh process: its surface (`entries`, `exports`) or why it failed (`error`), and
    what it looked at (`looked`; None when the process did not say, such as a timeout or a hard exit)."""

    entries: dict = field(default_factory=dict)
    exports: list[str] | None = None
    error: str | None = None
    looked: Looked | None = None


def imported_entries(folder: Path, module: str, roots, internal_decorators=(), timeout: float = 300.0
                     ) -> tuple[dict[str, Entry], list[str] | None]:
    """(entries by name as `ModuleSurface.entries` holds them, `__all__`) of `module` imported from the files in
    `folder`, with `folder/<root>` for each package root on `sys.path`. Raises ImportFailed."""
    reading = read_by_importing(folder, module, roots, internal_decorators, timeout)
    if reading.error is not None:
        raise ImportFailed(reading.error)
    return reading.entries, reading.exports


def _run_alone(arguments: list[str], folder: Path, path: list[str], env: dict, timeout: float
               ) -> subprocess.CompletedProcess:
    """Run the import in a session of its own and, when it ends, kill whatever it left running in that session: a
    process the imported code started must not outlive the reading and change the checkout the next reading uses.
    Its output goes to files, not pipes, so a process it left holding them does not keep the reading waiting.

    The reading forks from this process's import server where one runs (`gates.python_api.import_server`: the
    libraries are imported there already), else it runs in a fresh process, which then says which libraries the
    next readings can find imported."""
    command = [sys.executable, "-c", _SCRIPT, *arguments]
    keep = checker_children()  # this process's children before the reading: its git readers, the import server
    with tempfile.TemporaryDirectory(prefix="design-gates-import-") as scratch:
        out, err = Path(scratch) / "out", Path(scratch) / "err"
        out.touch()
        err.touch()
        server = shared_server(env)
        if server is not None:
            try:
                with ended_with(keep):
                    code = server.run(arguments, _SCRIPT, str(folder), path, str(out), str(err), timeout)
                return subprocess.CompletedProcess(command, code, out.read_bytes(), err.read_bytes())
            except Unavailable:
                out.write_bytes(b"")
                err.write_bytes(b"")
                if server.gone():  # what it left is this process's child only once it is gone: end that too
                    with ended_with(keep - {server.process.pid}):
                        pass
                keep = checker_children()
        status = Path(scratch) / "status"
        run = reaped(command, timeout, str(status)) if reaper_supported() else command
        with open(out, "wb") as out_file, open(err, "wb") as err_file, ended_with(keep):
            process = subprocess.Popen(run, cwd=folder, env={**env, "PYTHONPATH": os.pathsep.join(path)},
                                       stdout=out_file, stderr=err_file, start_new_session=hasattr(os, "killpg"))
            try:
                process.wait(timeout=timeout + _REAPER_GRACE if run is not command else timeout)
            finally:
                _kill_session(process)
        code = process.returncode
        if run is not command:
            said = status.read_text(encoding="utf-8", errors="replace").strip() if status.exists() else ""
            if said.endswith(UNENDED.strip()):
                raise ReadingNotEnded("processes the import started were still running after it ended")
            if said == TIMED_OUT:
                raise subprocess.TimeoutExpired(command, timeout)
            if code != 0 or not said.lstrip("-").isdigit():
                how = f"was killed (signal {-code})" if code < 0 else f"ended with exit {code}"
                raise _ReaperFailed(f"the process that ran the import {how} before it said how the import ended")
            code = int(said)
        done = subprocess.CompletedProcess(command, code, out.read_bytes(), err.read_bytes())
    if server is None:
        start_shared_server(_outside(done.stdout), env)
    return done


def _outside(stdout: bytes) -> list[str]:
    """The top-level modules a reading said it imported from outside the tree."""
    text = stdout.decode("utf-8", errors="replace")
    if _MARK not in text:
        return []
    try:
        names = json.loads(text.rsplit(_MARK, 1)[1]).get("outside", [])
    except (ValueError, AttributeError):
        return []
    return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []


def _kill_session(process: subprocess.Popen) -> None:
    if hasattr(os, "killpg"):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if process.poll() is None:
        process.kill()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _reading_env() -> dict:
    """What a reading keeps of this process's environment (its PYTHONPATH is the tree's)."""
    env = {key: value for key, value in os.environ.items() if key in _KEPT or key.startswith(_KEPT_PREFIXES)}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONSAFEPATH="1")
    return env


_TOP_LEVEL_IMPORT = re.compile(r"^(?:import|from)[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def start_importing(sources) -> None:
    """Start this process's import server before its first reading, with the installed libraries that the module
    texts `sources` import at their top level (`import torch`, `from einops import rearrange`), so that the first
    reading forks too; without a server, the first reading runs fresh and says what to import."""
    names = {match.group(1) for text in sources for match in _TOP_LEVEL_IMPORT.finditer(text)}
    start_shared_server(sorted(names), _reading_env())


def read_by_importing(folder: Path, module: str, roots, internal_decorators=(), timeout: float = 300.0
                      ) -> ImportedReading:
    """`module` imported from the files in `folder` (with `folder/<root>` for each package root on `sys.path`) in a
    fresh process: its surface or why importing failed, with what the import looked at in `folder`."""
    path = [str(Path(folder) / root) if root not in (".", "") else str(folder) for root in roots]
    env = _reading_env()
    try:
        done = _run_alone([module, json.dumps(list(internal_decorators)), _MARK], folder, path, env, timeout)
    except subprocess.TimeoutExpired:
        return ImportedReading(error=f"importing {module} took longer than {timeout:.0f} s")
    except _ReaperFailed as exc:
        return ImportedReading(error=f"importing {module} failed: {exc}")
    out = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0 and _MARK not in out or done.returncode not in (0, 1):
        lines = [line for line in done.stderr.decode("utf-8", errors="replace").splitlines() if line.strip()]
        return ImportedReading(error=f"importing {module} failed: {lines[-1] if lines else f'exit {done.returncode}'}")
    if _MARK not in out:
        return ImportedReading(error=f"importing {module} gave no surface the checker can read (it printed none)")
    try:
        data = json.loads(out.rsplit(_MARK, 1)[1])
        looked = Looked(*(tuple(str(p) for p in data["looked"].get(kind, ())) for kind in LOOKED_KINDS),
                        unsure=data["looked"].get("unsure"))
        if "error" in data:
            reason = " ".join(str(data["error"]).split())  # one line: a message may hold newlines
            return ImportedReading(error=f"importing {module} failed: {reason}", looked=looked)
        return ImportedReading(_entries(data["entries"]), data["exports"], looked=looked)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return ImportedReading(error=f"importing {module} gave no surface the checker can read ({exc})")


def _entries(raw: dict) -> dict[str, Entry]:
    entries = {}
    for name, item in raw.items():
        kind = item.get("kind")
        params = None
        if item.get("params") is not None:
            params = tuple(Parameter(p[0], _KINDS[p[1]], p[2]) for p in item["params"])
        kind = {"unbound": "unbound", "class": "class", "module-import": "module-import",
                "function": "function"}.get(kind, "constant")
        entries[name] = Entry(name, kind, 1, params=params, source=item.get("source"), is_async=bool(item.get("async")))
    return entries


def outline_names(source: str) -> set[str]:
    """The public names a module's source names at its top level, whatever the reader can or cannot follow:
    definitions, assignments, imports (`from x import y`), the string literals of `__all__`, and the keys and
    string values of dict literals (lazy export maps). What an import of the module must at least bind."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in tree.body:
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node in tree.body:
            names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier():
                    names.add(key.value)
    return {name for name in names if not name.startswith("_")}


def suspiciously_small(imported: set[str], outline: set[str]) -> bool:
    """An import that bound none, or under half, of the public names the source names: it swallowed a missing
    dependency (or ran other code) and cannot stand for the module's API."""
    return bool(outline) and len(imported & outline) * 2 < len(outline)
