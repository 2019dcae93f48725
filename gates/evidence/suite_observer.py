"""pytest plugin that gate-check loads into a suite run it starts: which repository files the run imported.

At the end of the session it writes the `__file__` of every module in `sys.modules`,
and every file the import system found since the plugin loaded (a module may delete
its own `__file__`), to the file named by `DESIGN_GATES_IMPORTS_OUT`, one absolute path
a line. It imports nothing from design-gates, because the runner loads it by file path,
so that a module of the same name in the repository under review cannot stand in for it.
"""

import os
import sys
import threading

import pytest

IMPORTS_OUT_ENV = "DESIGN_GATES_IMPORTS_OUT"


class _Origins:
    """A meta path finder that records what the finders after it find (see gates.evidence.import_origins)."""

    def __init__(self):
        self.found = set()
        self._inside = threading.local()

    def find_spec(self, name, path=None, target=None):
        if getattr(self._inside, "active", False):
            return None
        self._inside.active = True
        try:
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is not self and find is not None:
                    spec = find(name, path, target)
                    if spec is not None:
                        if isinstance(spec.origin, str):
                            self.found.add(spec.origin)
                        return spec
            return None
        finally:
            self._inside.active = False


_ORIGINS = _Origins()
sys.meta_path.insert(0, _ORIGINS)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get(IMPORTS_OUT_ENV)
    if not out:
        return
    files = sorted({f for m in list(sys.modules.values())
                    if isinstance(f := getattr(m, "__file__", None), str) and f.endswith(".py")}
                   | {f for f in _ORIGINS.found if f.endswith(".py")})
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write("".join(f + "\n" for f in files if "\n" not in f))
