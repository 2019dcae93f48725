"""`python -m gates` is `gate-check`."""

import sys

from gates.frontends.cli import main

sys.exit(main())
