"""pytest plugin that gate-check loads into a suite run it starts: which repository files the run imported.

At the end of the session it writes the `__file__` of every module in `sys.modules`
to the file named by `DESIGN_GATES_IMPORTS_OUT`, one absolute path a line. It imports
nothing from design-gates, because the runner loads it by file path, so that a module
of the same name in the repository under review cannot stand in for it.
"""

import os
import sys

import pytest

IMPORTS_OUT_ENV = "DESIGN_GATES_IMPORTS_OUT"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get(IMPORTS_OUT_ENV)
    if not out:
        return
    files = sorted({f for m in list(sys.modules.values())
                    if isinstance(f := getattr(m, "__file__", None), str) and f.endswith(".py")})
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write("".join(f + "\n" for f in files if "\n" not in f))
