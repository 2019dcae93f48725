"""G5's import readings fork from a server that imported the environment's libraries once: each reading reads what a
fresh process reads, and falls back to a fresh process wherever the two could differ."""

from __future__ import annotations

import time

import pytest

from gates.python_api import import_server
from gates.python_api.imported_surface import read_by_importing, start_importing
from test_import_reading_isolation import CHAIN, KILLS_ITS_PARENT, LINGERING, _alive

pytestmark = pytest.mark.skipif(not import_server.supported(), reason="forked readings run on Linux")

USES_A_LIBRARY = """\
from markdown_it import MarkdownIt


def render(text, *, renderer=None, breaks=False):
    return MarkdownIt().render(text)
"""


@pytest.fixture
def forks(monkeypatch):
    """A server of this test's own, and the readings that forked from it (by module name)."""
    monkeypatch.setattr(import_server, "_SHARED", {})
    forked = []
    real = import_server.ImportServer.run

    def run(self, argv, *args, **kwargs):
        status = real(self, argv, *args, **kwargs)
        forked.append(argv[0])
        return status

    monkeypatch.setattr(import_server.ImportServer, "run", run)
    yield forked
    for server in import_server._SHARED.values():
        server.close()


def _tree(folder, name, text):
    folder.mkdir()
    (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


def test_a_reading_after_the_first_forks_from_the_server_and_reads_the_same_surface(tmp_path, forks):
    first = read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    assert forks == []  # the first reading ran in a fresh process and said which libraries it imported
    server = next(iter(import_server._SHARED.values()))
    assert "markdown_it" in server.preload
    second = read_by_importing(_tree(tmp_path / "head", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    assert forks == ["docs_render"]
    assert (second.entries, second.exports, second.error) == (first.entries, first.exports, first.error)
    assert [p.name for p in second.entries["render"].params] == ["text", "renderer", "breaks"]


def test_a_tree_module_named_like_a_library_the_server_imported_is_read_in_a_fresh_process(tmp_path, forks):
    read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    tree = _tree(tmp_path / "head", "docs_render", "from markdown_it import WIDTH\n\n\ndef render(text, width=WIDTH):\n"
                 "    return text\n")
    (tree / "markdown_it.py").write_text("WIDTH = 72\n", encoding="utf-8")  # the tree's own, found first on its path
    reading = read_by_importing(tree, "docs_render", ["."])
    assert reading.error is None, reading.error
    assert [p.default for p in reading.entries["render"].params] == [None, "72"]
    assert forks == []  # the fork found the clash and the reading ran fresh


def test_a_server_started_from_the_package_texts_serves_the_first_reading_too(tmp_path, forks):
    start_importing(["import markdown_it\nfrom os import path\n", "def f():\n    import yaml_not_here\n"])
    server = next(iter(import_server._SHARED.values()))
    assert server.preload == ("markdown_it",)  # top-level imports of installed libraries only
    reading = read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    assert forks == ["docs_render"]
    assert reading.error is None, reading.error


def test_the_server_imports_only_what_site_packages_hold_whatever_a_reading_says(tmp_path):
    said = ["markdown_it", "os", "json", "no_such_library_here", "../markdown_it", "markdown_it.main", 7]
    assert import_server.installed_libraries(said) == ["markdown_it"]




def test_a_process_a_forked_reading_leaves_running_is_stopped_when_the_reading_ends(tmp_path, forks):
    read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    tree = _tree(tmp_path / "head", "lingering", LINGERING)
    start = time.monotonic()
    reading = read_by_importing(tree, "lingering", ["."])
    assert forks == ["lingering"]
    assert reading.error is None, reading.error
    assert reading.looked.unsure  # a process started: what it read cannot be told by path
    assert time.monotonic() - start < 2
    time.sleep(max(0.0, start + 2.8 - time.monotonic()))
    assert not (tree / "planted.py").exists()




def test_processes_that_leave_a_forked_reading_s_session_are_ended_with_the_reading(tmp_path, forks):
    read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    tree = _tree(tmp_path / "head", "chain", CHAIN)
    reading = read_by_importing(tree, "chain", ["."])
    assert forks == ["chain"]
    assert reading.error is None, reading.error
    left = [int(pid) for pid in (tree / "chain.pids").read_text().split()]
    assert len(left) == 150 and not [pid for pid in left if _alive(pid)]  # the server, their subreaper, ended them


def test_a_forked_reading_that_kills_the_server_leaves_nothing_running(tmp_path, forks):
    read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    tree = _tree(tmp_path / "head", "killer", KILLS_ITS_PARENT)
    reading = read_by_importing(tree, "killer", ["."])  # the server is killed; the fresh reading kills its reaper
    assert reading.error is not None and "was killed (signal 9)" in reading.error
    daemons = [int(pid) for pid in (tree / "daemons.pid").read_text().split()]
    assert len(daemons) == 2 and not [pid for pid in daemons if _alive(pid)]


def test_a_forked_reading_that_runs_too_long_is_ended(tmp_path, forks):
    read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    tree = _tree(tmp_path / "head", "slow", "import os, time\nopen('pid', 'w').write(str(os.getpid()))\n"
                 "time.sleep(60)\n")
    reading = read_by_importing(tree, "slow", ["."], timeout=1.5)
    assert reading.error == "importing slow took longer than 2 s"
    pid = int((tree / "pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_reading_runs_in_a_fresh_process_once_the_server_has_stopped(tmp_path, forks):
    read_by_importing(_tree(tmp_path / "base", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    server = next(iter(import_server._SHARED.values()))
    server.process.kill()
    server.process.wait()
    reading = read_by_importing(_tree(tmp_path / "head", "docs_render", USES_A_LIBRARY), "docs_render", ["."])
    assert reading.error is None, reading.error
    assert "render" in reading.entries
    assert forks == []
