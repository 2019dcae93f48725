"""`python tests/interpreted_suite.py SUITE --out PATH [ARGS...]`: `python -m validation.run_suite` through the
Triton interpreter without its repeated set-up (`interpreter_speed`): the same cases and the same bits, in about
four fifths of the time. The test run starts its background suites this way when the kernels run interpreted."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import interpreter_speed  # noqa: E402

from validation.run_suite import main  # noqa: E402

if __name__ == "__main__":
    interpreter_speed.install()
    sys.exit(main(sys.argv[1:]))
