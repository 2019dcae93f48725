"""Write a seeded sample of model-matrix rows that no earlier routing run measured.

    python -m lab.routing.heldout_rows 64 > lab/routing/rows-heldout.txt

A split choice fitted or tuned on the measured rows is scored on these: the sample takes the
same number of rows from every (batch, context) cell of the matrix where it can, each from
a (model, TP) the cell has not yet given a row, so the held-out rows spread over models
as the measured ones do.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path

from validation.bench.shapes import model_matrix

HERE = Path(__file__).resolve().parent
MEASURED = ("rows.txt", "rows-rest.txt")


def heldout_rows(count: int, seed: int = 0) -> list[str]:
    measured = {name for file in MEASURED for name in (HERE / file).read_text().split()}
    cells = defaultdict(list)
    for shape in model_matrix():
        if shape.name not in measured:
            cells[(shape.batch, shape.context)].append(shape.name)
    rng = random.Random(seed)
    for names in cells.values():
        rng.shuffle(names)
    picked: list[str] = []
    while len(picked) < count and any(cells.values()):
        for key in sorted(cells):
            if cells[key] and len(picked) < count:
                picked.append(cells[key].pop())
    return picked


if __name__ == "__main__":
    print("\n".join(heldout_rows(int(sys.argv[1]) if len(sys.argv) > 1 else 64)))
