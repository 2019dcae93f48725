"""`python -m validation.bench.loop_sass` with the rotated loop installed first (same arguments)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rotated  # noqa: E402

rotated.install()

from validation.bench import loop_sass  # noqa: E402

sys.exit(loop_sass.main(sys.argv[1:]))
