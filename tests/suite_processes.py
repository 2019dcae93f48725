"""The numeric and bitwise suites as background processes of the test run.

`tests/conftest.py` starts them as soon as collection shows that
`tests/test_validation_suites.py` will run, so that they share the machine's cores with
the rest of the run instead of starting when pytest reaches that file near the end.
They run the `ci` tier (each case in one dtype); evidence runs use the full tier.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITES = ("numeric", "bitwise")
TIER = "ci"


@dataclass
class SuiteRun:
    suite: str
    process: subprocess.Popen
    artifact: Path
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_suites() -> dict[str, SuiteRun]:
    """suite name -> its running `python -m validation.run_suite` process, writing into a fresh temporary folder."""
    out_dir = Path(tempfile.mkdtemp(prefix="design-gates-suites-"))
    runs = {}
    for suite in SUITES:
        artifact, log = out_dir / f"{suite}-matrix.json", out_dir / f"{suite}.log"
        with open(log, "w", encoding="utf-8") as handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "validation.run_suite", suite, "--out", str(artifact), "--tier", TIER,
                 "--", "-rfE"],
                cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
        runs[suite] = SuiteRun(suite, process, artifact, log)
    return runs
