"""G5's import reading runs the repository's own code in a fresh process: whatever that code starts must end
with the reading, so that it cannot change the checkout the next reading imports from."""

from __future__ import annotations

import os
import time

import pytest

from gates.python_api.imported_surface import read_by_importing

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
