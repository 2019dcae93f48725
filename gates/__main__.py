"""`python -m gates` is `gate-check`."""

from gates.frontends.cli import console

console()
