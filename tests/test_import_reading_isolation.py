"""G5's import reading runs the repository's own code in a process of its own: whatever that code starts must end
with the reading, and whatever it writes into a checkout is gone before the next reading imports from it."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from gates.history import run_state
from gates.history.ratchet import check_history
from gates.model.errors import GitContextError
from gates.python_api import import_server, imported_surface
from gates.python_api.imported_surface import read_by_importing
from gitrepo_builder import ADA, MAX, seeded_repo

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the lingering process is made with os.fork")

LINGERING = """\
import os
import time

if os.fork() == 0:  # a child that outlives the import and then writes into the checkout
    time.sleep(2)
    with open("planted.py", "w") as handle:
        handle.write("def f(a, b):\\n    return a\\n")
    os._exit(0)


def f(a):
    return a
"""


CHAIN = """\
import os
import time

if os.fork() == 0:  # a chain of 150 processes, each the child of the one before and in a session of its own
    for _ in range(150):
        os.setsid()
        with open("chain.pids", "a") as handle:
            handle.write(f"{os.getpid()}\\n")
        if os.fork() != 0:
            time.sleep(30)
            os._exit(0)
    open("chain.done", "w").close()
    time.sleep(30)
    os._exit(0)
while not os.path.exists("chain.done"):
    time.sleep(0.01)


def f(a):
    return a
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper runs on Linux")
def test_processes_that_leave_the_reading_s_session_are_ended_with_the_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(import_server, "_SHARED", {})  # no import server: the reading runs in a fresh process
    monkeypatch.setattr(imported_surface, "start_shared_server", lambda *args: None)
    (tmp_path / "chain.py").write_text(CHAIN, encoding="utf-8")
    reading = read_by_importing(tmp_path, "chain", ["."])
    assert reading.error is None, reading.error
    left = [int(pid) for pid in (tmp_path / "chain.pids").read_text().split()]
    assert len(left) == 150 and not [pid for pid in left if _alive(pid)]  # the reaper ended them all first


KILLS_ITS_PARENT = """\
import os
import signal
import time


def daemons_written():
    try:
        with open("daemons.pid") as handle:
            return len(handle.read().split())
    except FileNotFoundError:
        return 0


before = daemons_written()  # a reading read again (fresh, after the server's death) finds the first one's daemon
if os.fork() == 0:  # a daemon in a session of its own, then the process that runs the reading is killed
    os.setsid()
    if os.fork() == 0:
        with open("daemons.pid", "a") as handle:
            handle.write(f"{os.getpid()}\\n")
        time.sleep(30)
    os._exit(0)
while daemons_written() <= before:
    time.sleep(0.01)
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(1)


def f(a):
    return a
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper runs on Linux")
def test_a_reading_that_kills_the_process_running_it_fails_and_leaves_nothing_running(tmp_path, monkeypatch):
    monkeypatch.setattr(import_server, "_SHARED", {})  # no import server: the reading runs under a reaper
    monkeypatch.setattr(imported_surface, "start_shared_server", lambda *args: None)
    (tmp_path / "killer.py").write_text(KILLS_ITS_PARENT, encoding="utf-8")
    reading = read_by_importing(tmp_path, "killer", ["."])
    assert reading.error == "importing killer failed: the process that ran the import was killed (signal 9) " \
                            "before it said how the import ended"
    daemons = [int(pid) for pid in (tmp_path / "daemons.pid").read_text().split()]
    assert daemons and not [pid for pid in daemons if _alive(pid)]  # this process, their subreaper, ended them


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:  # a zombie is not running
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_process_the_import_leaves_running_is_stopped_when_the_reading_ends(tmp_path):
    (tmp_path / "lingering.py").write_text(LINGERING, encoding="utf-8")
    start = time.monotonic()
    reading = read_by_importing(tmp_path, "lingering", ["."])
    assert reading.error is None, reading.error
    assert "f" in reading.entries
    assert reading.looked.unsure  # a process started: what it read cannot be told by path
    assert time.monotonic() - start < 2  # the reading did not wait for the child that holds its output
    time.sleep(max(0.0, start + 2.8 - time.monotonic()))
    assert not (tmp_path / "planted.py").exists()


POLICY = """\
schema_version: 1
default_level: L1
rules: []
api:
  packages: [kernels]
  package_roots: ["src"]
"""
UNREADABLE_SUB = "def f(a):\n    return a\n\n\nexec('')\n"
REWRITES_THE_OTHER_CHECKOUTS = """\
import os

# every other checkout of this run (its folder's siblings) gets a kernels/sub.py without `f`
_here = os.path.realpath(os.getcwd())
for _name in os.listdir(os.path.dirname(_here)):
    _sub = os.path.join(os.path.dirname(_here), _name, "src", "kernels", "sub.py")
    if os.path.join(os.path.dirname(_here), _name) != _here and os.path.exists(_sub):
        with open(_sub, "w") as _handle:
            _handle.write("exec('')\\n")
exec('')
"""

def _library_whose_init_becomes(tmp_path, init: str, also: dict[str, str] | None = None):
    """A library whose package `__init__` and `sub` module G5 reads by importing, and a change to them."""
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={
        "src/kernels/__init__.py": "exec('')\n", "src/kernels/sub.py": UNREADABLE_SUB})
    repo.branch("change")
    for path, text in {"src/kernels/__init__.py": init, **(also or {})}.items():
        repo.write(path, text)
    repo.commit("Change the package", who=ADA)
    return repo



def test_what_the_head_import_writes_into_the_base_checkout_is_gone_before_the_base_is_imported(tmp_path):
    repo = _library_whose_init_becomes(tmp_path, REWRITES_THE_OTHER_CHECKOUTS, also={"src/kernels/sub.py": "exec('')\n"})
    errors = [message for finding in repo.check() if finding.gate == "G5" and finding.severity == "error"
              for message in [finding.message]]
    assert "public API break: public name 'kernels.sub.f' removed; the public API may only grow" in errors


WRITES_INTO_GIT = """\
import os

# the checkout lies in <git dir>/design-gates/<folder>: a ref planted there would steer what git hands out next
with open(os.path.join(os.getcwd(), "..", "..", "refs", "heads", "planted"), "w") as _handle:
    _handle.write("0" * 40 + "\\n")
exec('')
"""


def test_an_import_that_writes_into_the_repository_s_git_data_stops_the_check(tmp_path):
    repo = _library_whose_init_becomes(tmp_path, WRITES_INTO_GIT)
    with pytest.raises(GitContextError, match=r"importing kernels at [0-9a-f]{12} .* wrote \S*/refs/heads/planted, "
                                              r"which the checks read after it"):
        repo.check()


@pytest.mark.parametrize("written", ["site-packages/probe.pth", "dependency/yaml/__init__.py", "bytecode"])
def test_an_import_that_writes_what_the_checker_or_python_loads_later_stops_the_check(tmp_path, monkeypatch, written):
    # a .pth file every later Python process runs, a dependency's module the checker may import later, a .pyc in the
    # only folder the checker reads bytecode from once an import has run (absent until something makes it)
    site_packages, dependency = tmp_path / "site-packages", tmp_path / "dependency" / "yaml" / "__init__.py"
    site_packages.mkdir()
    dependency.parent.mkdir(parents=True)
    dependency.write_text("", encoding="utf-8")
    monkeypatch.setattr(run_state, "_site_folders", lambda: [str(site_packages)])
    monkeypatch.setattr(run_state, "_dependency_files", lambda: (str(dependency),))
    target = Path(run_state._bytecode_folder()) / "planted.pyc" if written == "bytecode" else tmp_path / written
    repo = _library_whose_init_becomes(tmp_path, f"import os\nos.makedirs({str(target.parent)!r}, exist_ok=True)\n"
                                                 f"with open({str(target)!r}, 'w') as _handle:\n"
                                                 "    _handle.write('import os')\nexec('')\n")
    try:
        with pytest.raises(GitContextError, match=rf"wrote {re.escape(str(target))}, which the checks read"):
            repo.check()
    finally:
        if written == "bytecode":
            shutil.rmtree(target.parent, ignore_errors=True)


def test_a_git_put_on_the_path_after_the_checks_began_is_not_the_one_they_run(tmp_path, monkeypatch):
    repo = seeded_repo(tmp_path / "repo", package_root="src/", policy=POLICY, files={"src/kernels/sub.py": "x = 1\n"})
    first = repo.check()  # the checks open the repository: git is pinned by its full path
    planted = tmp_path / "bin"
    planted.mkdir()
    (planted / "git").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (planted / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.environ['PATH']}")
    assert repo.check() == first


FLIPS_AFTER_TWO_READINGS = """\
import os
import subprocess

subprocess.run(["true"])  # a process: what the reading read cannot be told by its paths
_count = {counter!r}
_seen = os.path.getsize(_count) if os.path.exists(_count) else 0
with open(_count, "a") as _handle:
    _handle.write("x")
if _seen < 2:  # its own commit's readings see f; a later reading of the same tree would not
    def f(a):
        return a
exec('')
"""


def test_a_later_commit_s_base_is_the_surface_its_own_commit_was_judged_on(tmp_path):
    # packages at the top folder (package_roots "."): the tree the reading was kept by is the whole tree's
    policy = "schema_version: 1\ndefault_level: L1\nrules: []\napi:\n  packages: [kernels]\n"
    repo = seeded_repo(tmp_path / "repo", policy=policy)
    start = repo.sha("HEAD")
    repo.write("kernels/ops.py", FLIPS_AFTER_TWO_READINGS.format(counter=str(tmp_path / "counter")))
    repo.commit("Add ops", who=ADA)
    repo.write("kernels/ops.py", "exec('')\n")
    repo.commit("Drop f", who=ADA)
    repo.write(".design-gates/policy.yaml", policy + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)
    errors = [f.message for f in check_history(repo.root).findings if f.gate == "G5" and f.severity == "error"]
    assert "public API break: public name 'kernels.ops.f' removed; the public API may only grow" in errors
