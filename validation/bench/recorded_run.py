"""The command line the device probes share: --out FILE, measure into rows, keep them on disk, print a table."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Callable

Measure = Callable[[list, Callable[[], None]], None]


def probe_command(argv: list[str] | None, *, prog: str, description: str, kind: str,
                  add_options: Callable[[argparse.ArgumentParser], None],
                  prepare: Callable[[argparse.Namespace], Measure], table: Callable[[list], str]) -> int:
    """Parse `--out FILE` and the probe's own options, then `run_and_record`.

    Args:
        argv: the arguments (None: the process's).
        prog, description: for --help.
        kind: what the rows are (written into the JSON file).
        add_options: adds the probe's options to the parser.
        prepare: turns the parsed options into the probe's measure loop; a ValueError
            (a bad plan, an unknown shape) is printed and the command exits with 2.
        table: renders the rows as the Markdown table printed last.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--out", type=Path, required=True, help="JSON file of every measurement")
    add_options(parser)
    args = parser.parse_args(argv)
    try:
        measure = prepare(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    command = " ".join([f"python -m {prog.split()[-1]}", *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    return run_and_record(args.out, kind, measure, table, provenance=_provenance(command))


def _provenance(command: str) -> dict:
    """What produced a probe's rows: the command, the commit and the machine (best effort off a GPU)."""
    from .environment import environment, git_commit

    found = {"command": command, "commit": git_commit()}
    try:
        found["environment"] = environment()
    except Exception as exc:  # no CUDA: the rows still say what ran  # noqa: BLE001
        found["environment"] = {"error": f"{type(exc).__name__}: {exc}"}
    return found


def run_and_record(out: Path, kind: str, measure: Measure, table: Callable[[list], str], *,
                   provenance: dict | None = None) -> int:
    """Call `measure(rows, write)`, which appends one dict per measurement and calls `write()`
    after each, so `out` always holds every row so far (an interrupted run keeps them too);
    then write `out` once more and print `table(rows)`.

    Args:
        out: JSON file, written as {"kind": kind, **provenance, "rows": [...]}.
        kind: what the rows are, for a reader of the file.
        measure: the probe's loop.
        table: renders the rows as the Markdown table printed last.
        provenance: the command, commit and environment that produced the rows.

    Returns:
        0, the command's exit status.
    """
    rows: list[dict] = []

    def write() -> None:
        out.write_text(json.dumps({"kind": kind, **(provenance or {}), "rows": rows}, indent=1) + "\n")

    try:
        measure(rows, write)
    except KeyboardInterrupt:
        print("interrupted: the table holds what was measured", file=sys.stderr)
    write()
    print(table(rows))
    return 0
