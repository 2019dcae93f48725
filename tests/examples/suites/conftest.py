"""Collects what the example suites measure and writes it as an evidence artifact.

When `DESIGN_GATES_EVIDENCE_OUT` is set (gate-check --run-suites sets it), the
session writes a `numeric` or `bitwise` artifact there at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(EXAMPLES))

MEASURED = {"kind": None, "results": {}, "fixtures": {}}
SOURCES = ["examplepkg/ops.py"]


@pytest.fixture
def evidence():
    """The shared results dict that the suite's tests fill in."""
    return MEASURED


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("DESIGN_GATES_EVIDENCE_OUT")
    if not out or MEASURED["kind"] is None:
        return
    sources = {rel: hashlib.sha256((EXAMPLES / rel).read_bytes()).hexdigest() for rel in SOURCES}
    artifact = {
        "schema_version": 1,
        "id": f"{MEASURED['kind']}-cpu",
        "kind": MEASURED["kind"],
        "created": "run",
        "command": "python -m pytest " + " ".join(str(arg) for arg in session.config.args),
        "environment": {"backend": "cpu", "device": platform.machine() or "cpu", "python": platform.python_version()},
        "commit": None,
        "sources": sources,
        "fixtures": dict(sorted(MEASURED["fixtures"].items())),
        "results": dict(MEASURED["results"], passed=exitstatus == 0),
    }
    Path(out).write_text(json.dumps(artifact, indent=2, sort_keys=True) + "\n", encoding="utf-8")
