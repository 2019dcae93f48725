"""`python -m gates` is `gate-check`."""

import sys

from gates.frontends.cli import main

if __name__ == "__main__":  # a worker process of a history run imports this module too (`spawn`)
    sys.exit(main())
