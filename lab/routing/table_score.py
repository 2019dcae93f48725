"""Score a split-count table (table_sweep.py's grid) on the model-matrix rows the routing runs measured.

    python lab/routing/table_score.py lab/routing/table-sweep-*.json
    python lab/routing/table_score.py lab/routing/table-sweep-*.json --off-grid lab/routing/table-offgrid.json

The table's choice for a cell is its fastest route (the single pass or split-KV at a count). A
row reads the cell of its (D, G, S) with the nearest P = B x Hkv on a log scale (the smaller P
on a tie): rows whose P is a power of two read their own cell. The row's ratio is the row's
measured time of that route over its fastest own route, as in candidates.py.
"""

from __future__ import annotations

import glob
import math
import statistics
import sys
from pathlib import Path

import json

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from analyze import WITHIN, load_rows  # noqa: E402


def table_of(*paths: str) -> dict:
    table = {}
    for row in (row for path in paths for row in json.loads(Path(path).read_text())["rows"]):
        best = min(row["us"], key=row["us"].get)
        table[(row["D"], row["G"], row["P"], row["S"])] = (best, row["us"])
    return table


def choose(table: dict, D: int, G: int, P: int, S: int):
    same = [(key, value) for key, value in table.items() if key[:2] == (D, G) and key[3] == S]
    if not same:
        return None
    key, (best, _) = min(same, key=lambda kv: (abs(math.log2(kv[0][2]) - math.log2(P)), kv[0][2]))
    return best, key[2]


def own_times(row: dict) -> dict:
    times = {str(s): t for s, t in row["sweep"].items()}
    times["single"] = row["single"]
    return times


def main(*paths: str) -> None:
    table = table_of(*paths)
    rows, seen = [], set()
    for run in sorted(glob.glob(str(HERE / "routing-models-*.json"))):
        for row in load_rows(run):
            if row["name"] not in seen:
                seen.add(row["name"])
                rows.append(row)
    scored = []
    for row in rows:
        G = row["Hq"] // row["Hkv"]
        found = choose(table, row["D"], G, row["B"] * row["Hkv"], row["S"])
        if found is None:
            continue
        route, cell_p = found
        times = own_times(row)
        best = min(times.values())
        layer = row["layer"] / best
        scored.append((times[route] / best, layer, row["name"], route, cell_p, row["B"] * row["Hkv"]))
    ratios = [s[0] for s in scored]
    exact = [s for s in scored if s[4] == s[5]]
    print(f"rows scored: {len(scored)} (own cell: {len(exact)}, nearest P: {len(scored) - len(exact)})")
    for label, part in (("all", scored), ("own cell", exact), ("nearest P", [s for s in scored if s[4] != s[5]])):
        r = [s[0] for s in part]
        if r:
            print(f"{label}: table within {WITHIN}x on {sum(x <= WITHIN for x in r)} of {len(r)}, worst {max(r):.3f}, "
                  f"median {statistics.median(r):.3f}; the layer as measured: "
                  f"{sum(s[1] <= WITHIN for s in part)} of {len(r)}, worst {max(s[1] for s in part):.3f}")
    print("\n| row | P (cell P) | table route | table / best own | layer / best own |\n|---|---|---|---|---|")
    for ratio, layer, name, route, cell_p, p in sorted(scored, reverse=True)[:20]:
        print(f"| {name} | {p} ({cell_p}) | {route} | {ratio:.3f} | {layer:.3f} |")
    del ratios




def off_grid_main(table_paths: list[str], off_grid_path: str) -> None:
    """Score the table on shapes none of its cells has (`table_sweep.py --off-grid`): each reads the
    cell of its (D, G) nearest in (log2 P, log2 S), against the heuristic the layer uses today."""
    from kernels.decode_layer import layer_num_splits

    table = table_of(*table_paths)
    scored = []
    for row in json.loads(Path(off_grid_path).read_text())["rows"]:
        times = row["us"]
        best = min(times.values())
        same = [(k, v) for k, v in table.items() if k[:2] == (row["D"], row["G"])]
        key, (route, _) = min(same, key=lambda kv: (abs(math.log2(kv[0][2] / row["P"])) + abs(math.log2(kv[0][3] / row["S"])),
                                                     kv[0][2], kv[0][3]))
        count = layer_num_splits(row["G"] * row["Hkv"], row["Hkv"], row["D"], row["B"], 1, row["S"], num_sms=132)
        layer = times["single"] if count == 1 else times[str(count)]
        scored.append((times[route] / best, layer / best, row["name"], route, key, count))
    n = len(scored)
    print(f"off-grid shapes: {n}; table (nearest cell) within {WITHIN}x on {sum(s[0] <= WITHIN for s in scored)}, "
          f"worst {max(s[0] for s in scored):.3f}; the heuristic within {WITHIN}x on "
          f"{sum(s[1] <= WITHIN for s in scored)}, worst {max(s[1] for s in scored):.3f}")
    print("\n| shape | table route (cell) | table / best own | heuristic count | heuristic / best own |\n|---|---|---|---|---|")
    for ratio, layer, name, route, key, count in sorted(scored, reverse=True)[:15]:
        print(f"| {name} | {route} (P {key[2]}, S {key[3]}) | {ratio:.3f} | {count} | {layer:.3f} |")


if __name__ == "__main__":
    if "--off-grid" in sys.argv:
        at = sys.argv.index("--off-grid")
        off_grid_main(sys.argv[1:at], sys.argv[at + 1])
    else:
        main(*sys.argv[1:])
