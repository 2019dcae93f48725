"""The options every `gate-check` subcommand takes after its own: `--repo-root` and `--debug`."""

from __future__ import annotations

from argparse import SUPPRESS
from pathlib import Path


def add_subcommand_options(parser) -> None:
    """Add `--repo-root` and `--debug`; unset, they keep the values of the top-level parser."""
    parser.add_argument("--repo-root", type=Path, default=SUPPRESS, help="repository root (default: the git top level)")
    parser.add_argument("--debug", action="store_true", default=SUPPRESS, help="show a traceback for internal errors")
