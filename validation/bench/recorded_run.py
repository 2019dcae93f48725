"""The command-line loop the device probes share: measure into rows, keep them on disk, print a table."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable


def run_and_record(out: Path, kind: str, measure: Callable[[list, Callable[[], None]], None],
                   table: Callable[[list], str]) -> int:
    """Call `measure(rows, write)`, which appends one dict per measurement and calls `write()`
    after each, so `out` always holds every row so far (an interrupted run keeps them too);
    then write `out` once more and print `table(rows)`.

    Args:
        out: JSON file, written as {"kind": kind, "rows": [...]}.
        kind: what the rows are, for a reader of the file.
        measure: the probe's loop.
        table: renders the rows as the Markdown table printed last.

    Returns:
        0, the command's exit status.
    """
    rows: list[dict] = []

    def write() -> None:
        out.write_text(json.dumps({"kind": kind, "rows": rows}, indent=1) + "\n")

    try:
        measure(rows, write)
    except KeyboardInterrupt:
        print("interrupted: the table holds what was measured", file=sys.stderr)
    write()
    print(table(rows))
    return 0
