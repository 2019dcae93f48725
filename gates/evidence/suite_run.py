"""Run a declared validation suite in a fresh pytest process and collect its artifact.

The suite is run with pytest (`<suite> -q -p no:cacheprovider`) from the repository
root, with `DESIGN_GATES_EVIDENCE_OUT` naming a temporary file (the suite writes its
evidence artifact there at session end) and `DESIGN_GATES_COVERS` the record's covers
globs as a JSON list (the artifact's writer binds those files). gate-check also loads
its own observer plugin (`gates/evidence/suite_observer.py`, by file path) into the run, which
reports the repository files the run imported: the gate, not the suite, says what was
measured. It loads design-gates' evidence plugin (`gates.evidence.evidence_plugin`) the same
way, from gate-check's own `gates` package (bound to that name before the run starts, so
a `gates` package of the repository under review cannot stand in for it; the entry
point's copy is blocked) and with `DESIGN_GATES_EVIDENCE_KIND` naming
the kind the gate judges, so an ordinary pytest suite that marks its tests writes the
artifact without any code of its own. The artifact and the import list are read only
if they are regular files.

A run that fails comes back with the last lines of its output (cut at line
boundaries) and, where pytest's exit status or the output says why, an explanation:
a usage error or no tests collected (often the repository's own `addopts`), or a
module (pytest itself, or one the suite imports) missing from the interpreter.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gates.evidence.artifacts import parse_artifact, read_regular_file
from gates.evidence.source_binding import repo_files_of
from gates.model.errors import InputError

EVIDENCE_OUT_ENV = "DESIGN_GATES_EVIDENCE_OUT"
COVERS_ENV = "DESIGN_GATES_COVERS"
IMPORTS_OUT_ENV = "DESIGN_GATES_IMPORTS_OUT"
KIND_ENV = "DESIGN_GATES_EVIDENCE_KIND"
GATES_DIR = Path(__file__).resolve().parent.parent  # the running `gates` package
OBSERVER = GATES_DIR / "evidence" / "suite_observer.py"
TAIL_LINES = 60
TAIL_CHARS = 8000

_BOOTSTRAP = """\
import importlib, importlib.util, sys
gates_dir, observer_path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
spec = importlib.util.spec_from_file_location("gates", gates_dir + "/__init__.py", submodule_search_locations=[gates_dir])
gates = importlib.util.module_from_spec(spec)
sys.modules["gates"] = gates
spec.loader.exec_module(gates)
spec = importlib.util.spec_from_file_location("design_gates_suite_observer", observer_path)
observer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(observer)
import pytest
evidence_plugin = importlib.import_module("gates.evidence.evidence_plugin")
sys.exit(int(pytest.main([*args, "-p", "no:design_gates_evidence", "-W",
                          "ignore:Module already imported so cannot be rewritten; gates:pytest.PytestAssertRewriteWarning"],
                         plugins=[observer, evidence_plugin])))
"""

EXIT_MEANINGS = {
    2: "pytest exit 2: the run was interrupted, usually by an error while collecting (the suite or a "
       "conftest.py failed to import)",
    3: "pytest exit 3: pytest or one of its plugins hit an internal error",
    4: "pytest exit 4 is a usage error: pytest rejected its command line. gate-check passes only "
       "`{suite} -q -p no:cacheprovider`; the rest comes from the repository's pytest configuration "
       "(addopts in pytest.ini, pyproject.toml [tool.pytest.ini_options], setup.cfg or tox.ini), often an "
       "option of a plugin that is not installed in {python}",
    5: "pytest exit 5: no tests were collected from {suite}; check the path, and python_files, "
       "python_functions, testpaths and any -k/-m in addopts of the repository's pytest configuration",
}
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")


@dataclass(frozen=True)
class SuiteRun:
    suite: str
    returncode: int | None
    data: dict | None
    problem: str | None
    output_tail: str
    imported: tuple[str, ...] | None = field(default=None)  # repository files the run imported
    explanations: tuple[str, ...] = ()  # why the run failed, where the exit status or output says

    @property
    def passed(self) -> bool:
        return self.returncode == 0


def output_tail(text: str, lines: int = TAIL_LINES, limit: int = TAIL_CHARS) -> str:
    """The last `lines` lines of `text` (fewer when they exceed `limit` characters), whole lines
    only; a single line longer than `limit` keeps its end, starting at a word."""
    kept = text.rstrip().splitlines()
    dropped = max(0, len(kept) - lines)
    kept = kept[dropped:]
    while len(kept) > 1 and sum(len(line) + 1 for line in kept) > limit:
        kept.pop(0)
        dropped += 1
    if kept and len(kept[0]) > limit:
        end = kept[0][-limit:]
        cut = end.find(" ")
        kept[0] = "..." + (end[cut:] if 0 <= cut < len(end) - 1 else end)
    head = f"... ({dropped} earlier line{'s' if dropped != 1 else ''} left out)\n" if dropped else ""
    return head + "\n".join(kept)


def explain_failure(suite: str, returncode: int | None, output: str, python: str = sys.executable) -> tuple[str, ...]:
    """What a failed run's exit status and output say about why it failed."""
    notes = []
    missing = list(dict.fromkeys(_MISSING_MODULE.findall(output)))
    for module in missing:
        if module.split(".")[0] == "pytest":
            notes.append(f"pytest is not installed in {python}, the interpreter gate-check runs suites with; "
                         f"install it there ({python} -m pip install pytest) or run gate-check from the "
                         "environment the suite runs in")
        else:
            notes.append(f"the run could not import {module!r} in {python}; install the suite's dependencies in "
                         "the environment gate-check runs from")
    if returncode in EXIT_MEANINGS and not (missing and returncode in (2, 3)):
        notes.append(EXIT_MEANINGS[returncode].format(suite=suite, python=python))
    return tuple(notes)


def run_suite(suite: str, repo_root: Path, timeout_s: float, covers=(), kind: str | None = None) -> SuiteRun:
    """Run `suite` (repository-relative) and parse the `kind` artifact it wrote."""
    with tempfile.TemporaryDirectory(prefix="design-gates-") as folder:
        out = Path(folder) / "evidence.json"
        imports_out = Path(folder) / "imports.txt"
        env = dict(os.environ, **{EVIDENCE_OUT_ENV: str(out), IMPORTS_OUT_ENV: str(imports_out),
                                  COVERS_ENV: json.dumps(list(covers or []))})
        if kind:
            env[KIND_ENV] = kind
        command = [sys.executable, "-c", _BOOTSTRAP, str(GATES_DIR), str(OBSERVER), suite, "-q", "-p", "no:cacheprovider"]
        try:
            completed = subprocess.run(command, cwd=repo_root, env=env, capture_output=True, text=True,
                                       timeout=timeout_s, errors="replace", stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return SuiteRun(suite, None, None, f"suite {suite} ran past the {timeout_s:g} s limit", "")
        output = completed.stdout + completed.stderr
        tail = output_tail(output)
        imported = _imported(imports_out, repo_root)
        notes = explain_failure(suite, completed.returncode, output) if completed.returncode != 0 else ()
        if not out.exists() and not out.is_symlink():
            return SuiteRun(suite, completed.returncode, None,
                            f"suite {suite} wrote no evidence to ${EVIDENCE_OUT_ENV} (pytest exit {completed.returncode})",
                            tail, imported, notes)
        label = f"{suite} (evidence written by the run)"
        try:
            data, _ = parse_artifact(read_regular_file(out, label), label)
        except InputError as exc:
            return SuiteRun(suite, completed.returncode, None, f"{exc.path}:{exc.line}: {exc.message}", tail,
                            imported, notes)
        return SuiteRun(suite, completed.returncode, data, None, tail, imported, notes)


def _imported(imports_out: Path, repo_root: Path) -> tuple[str, ...] | None:
    try:
        text = read_regular_file(imports_out, "the suite's import list").decode("utf-8", errors="surrogateescape")
    except InputError:
        return None
    return tuple(repo_files_of([line for line in text.splitlines() if line], repo_root))


def cached_run(ctx, suite: str, timeout_s: float | None = None, covers=(), kind: str | None = None) -> SuiteRun:
    """One run per suite, covers and kind per gate-check invocation."""
    cache = ctx.__dict__.setdefault("_suite_runs", {})
    key = (suite, tuple(covers or ()), kind)
    if key not in cache:
        cache[key] = run_suite(suite, ctx.repo_root, timeout_s or ctx.suite_timeout_s, covers, kind)
    return cache[key]
