"""Run a declared validation suite in a fresh pytest process and collect its artifact.

The suite is run with pytest (`<suite> -q -p no:cacheprovider`) from the repository
root, with `DESIGN_GATES_EVIDENCE_OUT` naming a temporary file (the suite writes its
evidence artifact there at session end) and `DESIGN_GATES_COVERS` the record's covers
globs as a JSON list (the artifact's writer binds those files). gate-check also loads
its own observer plugin (`gates/suite_observer.py`, by file path) into the run, which
reports the repository files the run imported: the gate, not the suite, says what was
measured. The artifact and the import list are read only if they are regular files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gates.errors import InputError
from gates.evidence import parse_artifact, read_regular_file
from gates.source_binding import repo_files_of

EVIDENCE_OUT_ENV = "DESIGN_GATES_EVIDENCE_OUT"
COVERS_ENV = "DESIGN_GATES_COVERS"
IMPORTS_OUT_ENV = "DESIGN_GATES_IMPORTS_OUT"
OBSERVER = Path(__file__).resolve().parent / "suite_observer.py"
TAIL_CHARS = 2000

_BOOTSTRAP = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("design_gates_suite_observer", sys.argv[1])
observer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(observer)
import pytest
sys.exit(int(pytest.main(sys.argv[2:], plugins=[observer])))
"""


@dataclass(frozen=True)
class SuiteRun:
    suite: str
    returncode: int | None
    data: dict | None
    problem: str | None
    output_tail: str
    imported: tuple[str, ...] | None = field(default=None)  # repository files the run imported

    @property
    def passed(self) -> bool:
        return self.returncode == 0


def output_tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The last `limit` characters of `text`, starting at a line (or at least a word) boundary."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    for boundary in ("\n", " "):
        cut = tail.find(boundary)
        if 0 <= cut < len(tail) - 1:
            return "..." + tail[cut:]
    return "..." + tail


def run_suite(suite: str, repo_root: Path, timeout_s: float, covers=()) -> SuiteRun:
    """Run `suite` (repository-relative) and parse the artifact it wrote."""
    with tempfile.TemporaryDirectory(prefix="design-gates-") as folder:
        out = Path(folder) / "evidence.json"
        imports_out = Path(folder) / "imports.txt"
        env = dict(os.environ, **{EVIDENCE_OUT_ENV: str(out), IMPORTS_OUT_ENV: str(imports_out),
                                  COVERS_ENV: json.dumps(list(covers or []))})
        command = [sys.executable, "-c", _BOOTSTRAP, str(OBSERVER), suite, "-q", "-p", "no:cacheprovider"]
        try:
            completed = subprocess.run(command, cwd=repo_root, env=env, capture_output=True, text=True,
                                       timeout=timeout_s, errors="replace", stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return SuiteRun(suite, None, None, f"suite {suite} ran past the {timeout_s:g} s limit", "")
        tail = output_tail(completed.stdout + completed.stderr)
        imported = _imported(imports_out, repo_root)
        if not out.exists() and not out.is_symlink():
            return SuiteRun(suite, completed.returncode, None,
                            f"suite {suite} wrote no evidence to ${EVIDENCE_OUT_ENV} (pytest exit {completed.returncode})",
                            tail, imported)
        label = f"{suite} (evidence written by the run)"
        try:
            data, _ = parse_artifact(read_regular_file(out, label), label)
        except InputError as exc:
            return SuiteRun(suite, completed.returncode, None, f"{exc.path}:{exc.line}: {exc.message}", tail, imported)
        return SuiteRun(suite, completed.returncode, data, None, tail, imported)


def _imported(imports_out: Path, repo_root: Path) -> tuple[str, ...] | None:
    try:
        text = read_regular_file(imports_out, "the suite's import list").decode("utf-8", errors="surrogateescape")
    except InputError:
        return None
    return tuple(repo_files_of([line for line in text.splitlines() if line], repo_root))


def cached_run(ctx, suite: str, timeout_s: float | None = None, covers=()) -> SuiteRun:
    """One run per suite (and covers) per gate-check invocation."""
    cache = ctx.__dict__.setdefault("_suite_runs", {})
    key = (suite, tuple(covers or ()))
    if key not in cache:
        cache[key] = run_suite(suite, ctx.repo_root, timeout_s or ctx.suite_timeout_s, covers)
    return cache[key]
