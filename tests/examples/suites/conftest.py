"""Collects what the example suites measure and writes it as an evidence artifact.

When `DESIGN_GATES_EVIDENCE_OUT` is set (gate-check --run-suites sets it), the
session writes a `numeric` or `bitwise` artifact there at the end, bound to the files
the record covers (`DESIGN_GATES_COVERS`) and to every module of this repository the
session imported.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import pytest

from gates.evidence.source_binding import bound_sources

EXAMPLES = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(EXAMPLES))

MEASURED = {"kind": None, "results": {}, "fixtures": {}}


@pytest.fixture
def evidence():
    """The shared results dict that the suite's tests fill in."""
    return MEASURED


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("DESIGN_GATES_EVIDENCE_OUT")
    if not out or MEASURED["kind"] is None:
        return
    sources = bound_sources(EXAMPLES, json.loads(os.environ.get("DESIGN_GATES_COVERS") or "[]"))
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
