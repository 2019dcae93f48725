"""Ways of reading the table between its cells, scored on the off-grid shapes.

    python lab/routing/table_interp.py

- nearest: the fastest route of the nearest cell of the shape's (D, G) in (log2 P, log2 S);
- S, SP: that cell's count scaled by S / S_cell (and by P_cell / P), to the nearest power of two;
- interp: the route with the least weighted sum of log(time / cell's best) over the (up to four)
  cells around the shape in P and S, each weighted by 1 / its log2 distance.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from table_score import WITHIN, table_of  # noqa: E402

TABLE = table_of(str(HERE / "table-sweep-1.json"), str(HERE / "table-sweep-2.json"))


def _family(row: dict) -> dict:
    return {key: value for key, value in TABLE.items() if key[:2] == (row["D"], row["G"])}


def nearest(row: dict, scale: str = "") -> str:
    key, (route, _) = min(_family(row).items(), key=lambda kv: (
        abs(math.log2(kv[0][2] / row["P"])) + abs(math.log2(kv[0][3] / row["S"])), kv[0][2], kv[0][3]))
    if not scale or route == "single":
        return route
    factor = row["S"] / key[3] * (key[2] / row["P"] if scale == "SP" else 1.0)
    return str(2 ** round(math.log2(max(1.0, min(128.0, int(route) * factor)))))


def interpolated(row: dict) -> str:
    family = _family(row)
    programs, contexts = sorted({k[2] for k in family}), sorted({k[3] for k in family})
    around_p = {p for p in programs if p <= row["P"]}, {p for p in programs if p >= row["P"]}
    around_s = {s for s in contexts if s <= row["S"]}, {s for s in contexts if s >= row["S"]}
    ps = {max(around_p[0], default=None), min(around_p[1], default=None)} - {None}
    ss = {max(around_s[0], default=None), min(around_s[1], default=None)} - {None}
    penalty: dict[str, float] = {}
    for p in ps:
        for s in ss:
            cell = family.get((row["D"], row["G"], p, s))
            if cell is None:
                continue
            times = cell[1]
            best = min(times.values())
            weight = 1.0 / (1e-9 + abs(math.log2(p / row["P"])) + abs(math.log2(s / row["S"])))
            for route, t in times.items():
                penalty[route] = penalty.get(route, 0.0) + weight * math.log(t / best)
    return min(penalty, key=penalty.get)


def main() -> None:
    rows = json.loads((HERE / "table-offgrid.json").read_text())["rows"]
    for label, choose in (("nearest", nearest), ("S", lambda r: nearest(r, "S")), ("SP", lambda r: nearest(r, "SP")),
                          ("interp", interpolated)):
        ratios = [row["us"][choose(row)] / min(row["us"].values()) for row in rows]
        print(f"{label}: within {WITHIN}x on {sum(r <= WITHIN for r in ratios)} of {len(ratios)}, worst {max(ratios):.3f}")


if __name__ == "__main__":
    main()
