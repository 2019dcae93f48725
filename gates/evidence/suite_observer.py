"""pytest plugin that gate-check loads into a suite run it starts: which repository files the run imported.

At the end of the session it writes the `__file__` of every module in `sys.modules`,
and every file the import system found since the plugin loaded (a module may delete
its own `__file__`; `import_origins.py`), to the file named by `DESIGN_GATES_IMPORTS_OUT`,
one absolute path a line. It imports nothing from design-gates by name, because the
runner loads it by file path, so that a module of the same name in the repository under
review cannot stand in for it; it loads `import_origins.py` from beside itself the same way.
"""

import importlib.util
import os
import sys

import pytest

IMPORTS_OUT_ENV = "DESIGN_GATES_IMPORTS_OUT"


def _start_recording_imports():
    """`import_origins.record_import_origins()`, loaded from the file beside this one (by path too)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import_origins.py")
    spec = importlib.util.spec_from_file_location("_design_gates_import_origins", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.record_import_origins()


_ORIGINS = _start_recording_imports()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get(IMPORTS_OUT_ENV)
    if not out:
        return
    files = sorted({f for m in list(sys.modules.values())
                    if isinstance(f := getattr(m, "__file__", None), str) and f.endswith(".py")}
                   | {f for f in _ORIGINS.origins if f.endswith(".py")})
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write("".join(f + "\n" for f in files if "\n" not in f))
