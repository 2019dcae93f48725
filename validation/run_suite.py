"""Run the numeric or bitwise suite and write its evidence artifact to a chosen path.

    python -m validation.run_suite numeric --out docs/evidence/numeric-matrix-h200.json
    python -m validation.run_suite bitwise --out docs/evidence/bitwise-matrix-cpu.json -- -k A1
    python -m validation.run_suite numeric --out x.json --covers "kernels/decode_attention/**"
    python -m validation.run_suite bitwise --out x.json --tier ci   # each case in one dtype
    python -m validation.run_suite numeric --out x.json --jobs 8    # 8 processes at once, one artifact

Without a GPU the suites run through the Triton interpreter. The exit status is pytest's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

SUITES = {"numeric": "test_numeric.py", "bitwise": "test_bitwise.py"}
# The order a suite's processes take its cases in (--jobs N): the two suites compile largely
# the same kernels, so run side by side they meet in the middle, each loading from Triton's
# cache what the other compiled first (validation/suites/case_queue.py).
ORDER = {"numeric": "forward", "bitwise": "reverse"}
SUITE_DIR = Path(__file__).resolve().parent / "suites"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m validation.run_suite", description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--out", required=True, help="artifact path, e.g. docs/evidence/numeric-matrix-h200.json")
    parser.add_argument("--id", help="artifact id (default: the file stem)")
    parser.add_argument("--covers", action="append", metavar="GLOB",
                        help="bind the files of the governing record's covers (repeatable; default: every record's covers)")
    parser.add_argument("--tier", choices=("full", "ci"), default="full",
                        help="full: every case in every dtype (evidence); ci: each case in one dtype, half the work")
    parser.add_argument("--jobs", type=int, default=1,
                        help="run the suite as this many pytest processes at once, sharing it case by case, and "
                             "merge their results into one artifact (validation/suite_shards.py)")
    own, extra = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    args = parser.parse_args(own)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    os.environ["DESIGN_GATES_EVIDENCE_OUT"] = str(Path(args.out).resolve())
    if args.covers:
        os.environ["DESIGN_GATES_COVERS"] = json.dumps(args.covers)
    if args.id:
        os.environ["DESIGN_GATES_EVIDENCE_ID"] = args.id
    if args.jobs > 1:
        from validation.suite_shards import run_sharded

        return run_sharded(SUITE_DIR / SUITES[args.suite], args.jobs, args.out, args.tier, extra,
                           ORDER[args.suite])
    import pytest

    return int(pytest.main([str(SUITE_DIR / SUITES[args.suite]), "-q", "-p", "no:cacheprovider",
                            "--suite-tier", args.tier, *extra]))


if __name__ == "__main__":
    sys.exit(main())
