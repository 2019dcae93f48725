"""Run a declared validation suite in a fresh pytest process and collect its artifact.

The suite is run as `python -m pytest <suite> -q -p no:cacheprovider` from the
repository root, with `DESIGN_GATES_EVIDENCE_OUT` naming a temporary file; the
suite writes its evidence artifact there at session end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gates.errors import InputError
from gates.evidence import parse_artifact

EVIDENCE_OUT_ENV = "DESIGN_GATES_EVIDENCE_OUT"


@dataclass(frozen=True)
class SuiteRun:
    suite: str
    returncode: int | None
    data: dict | None
    problem: str | None
    output_tail: str

    @property
    def passed(self) -> bool:
        return self.returncode == 0


def run_suite(suite: str, repo_root: Path, timeout_s: float) -> SuiteRun:
    """Run `suite` (repository-relative) and parse the artifact it wrote."""
    with tempfile.TemporaryDirectory(prefix="design-gates-") as folder:
        out = Path(folder) / "evidence.json"
        env = dict(os.environ, **{EVIDENCE_OUT_ENV: str(out)})
        command = [sys.executable, "-m", "pytest", suite, "-q", "-p", "no:cacheprovider"]
        try:
            completed = subprocess.run(command, cwd=repo_root, env=env, capture_output=True, text=True,
                                       timeout=timeout_s, errors="replace")
        except subprocess.TimeoutExpired:
            return SuiteRun(suite, None, None, f"suite {suite} ran past the {timeout_s:g} s limit", "")
        tail = (completed.stdout + completed.stderr)[-2000:]
        if not out.exists():
            return SuiteRun(suite, completed.returncode, None,
                            f"suite {suite} wrote no evidence to ${EVIDENCE_OUT_ENV} (pytest exit {completed.returncode})", tail)
        try:
            data, _ = parse_artifact(out.read_bytes(), f"{suite} (evidence written by the run)")
        except InputError as exc:
            return SuiteRun(suite, completed.returncode, None, f"{exc.path}:{exc.line}: {exc.message}", tail)
        return SuiteRun(suite, completed.returncode, data, None, tail)


def cached_run(ctx, suite: str, timeout_s: float | None = None) -> SuiteRun:
    """One run per suite per gate-check invocation."""
    cache = ctx.__dict__.setdefault("_suite_runs", {})
    if suite not in cache:
        cache[suite] = run_suite(suite, ctx.repo_root, timeout_s or ctx.suite_timeout_s)
    return cache[suite]
