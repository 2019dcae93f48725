"""The numeric and bitwise suites as background processes of the test run.

`tests/conftest.py` starts them as early as it can, so that they share the machine's cores
with the rest of the run instead of starting when pytest reaches
`tests/test_validation_suites.py` near the end: in a run of one process when collection
shows that file will run; in a run spread over workers (pytest-xdist) once, in the
controlling process at session start, with the workers attached to the same folder
(`SUITES_DIR_ENV`). Each suite writes its artifact, its log and, when it ends, its exit
status into that folder. They run the `ci` tier (each case in one dtype), and A2 without its
16-split cases, the slowest through the interpreter (a third of the bitwise suite's time; 1, 2 and
5 splits stay), and without A4 (run to run): the interpreter runs a kernel's programs one after
the other in one process, so two runs agree by construction and A4 there would only repeat a run
(a sixth of the suite's time); A4 is a property of the GPU's scheduling. The full tier, 16 splits and
A4 included, is what the committed CPU and H200 matrices ran, and the main job keeps them fresh.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITES = ("numeric", "bitwise")
TIER = "ci"
DESELECT = {"bitwise": ["-k", "not (test_A2_paged_equals_contiguous and split16) and not test_A4_run_to_run"]}
SUITES_DIR_ENV = "DESIGN_GATES_TEST_SUITES_DIR"
# Runs the suite and writes its exit status beside it, so a process that did not start it can wait for it.
_RECORD_EXIT = "import subprocess, sys; code = subprocess.call(sys.argv[2:]); open(sys.argv[1], 'w').write(str(code))"


@dataclass
class SuiteRun:
    suite: str
    artifact: Path
    log: Path
    status: Path
    process: subprocess.Popen | None = None  # None when another process started it

    def wait(self, timeout: float) -> int:
        """The suite's exit status; subprocess.TimeoutExpired after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self.status.exists():
            if self.process is not None and self.process.poll() is not None and not self.status.exists():
                return self.process.returncode or 1  # the wrapper died before writing the status
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.suite, timeout)
            time.sleep(0.5)
        return int(self.status.read_text() or 1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def _paths(out_dir: Path, suite: str) -> tuple[Path, Path, Path]:
    return out_dir / f"{suite}-matrix.json", out_dir / f"{suite}.log", out_dir / f"{suite}.status"


def _run_suite() -> list[str]:
    """The command that runs a suite: through the interpreter without its repeated set-up where the kernels run
    interpreted (`tests/interpreted_suite.py`), else `python -m validation.run_suite`."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return [sys.executable, str(REPO / "tests" / "interpreted_suite.py")]
    return [sys.executable, "-m", "validation.run_suite"]


def start_suites() -> dict[str, SuiteRun]:
    """suite name -> its running suite process (`_run_suite`), writing into a fresh temporary folder."""
    out_dir = Path(tempfile.mkdtemp(prefix="design-gates-suites-"))
    runs = {}
    for suite in SUITES:
        artifact, log, status = _paths(out_dir, suite)
        with open(log, "w", encoding="utf-8") as handle:
            process = subprocess.Popen(
                [sys.executable, "-c", _RECORD_EXIT, str(status), *_run_suite(), suite, "--out", str(artifact),
                 "--tier", TIER, "--", "-rfE", *DESELECT.get(suite, [])],
                cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        runs[suite] = SuiteRun(suite, artifact, log, status, process)
    return runs


def attach_suites(out_dir: Path) -> dict[str, SuiteRun]:
    """The suites another process started into `out_dir` (start_suites), to wait for and read."""
    return {suite: SuiteRun(suite, *_paths(Path(out_dir), suite)) for suite in SUITES}


def suites_folder(runs: dict[str, SuiteRun]) -> Path:
    return next(iter(runs.values())).artifact.parent


def discard_suites(runs: dict[str, SuiteRun]) -> None:
    """Stop the suites this process started and remove their folder; attached runs are left to their starter."""
    started = [run for run in runs.values() if run.process is not None]
    for run in started:
        run.stop()
    if started:
        shutil.rmtree(suites_folder(runs), ignore_errors=True)
