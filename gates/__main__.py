"""`python -m gates` is `gate-check`."""

import sys

from gates.cli import main

sys.exit(main())
