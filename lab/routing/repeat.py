"""Repeatability of the routing runs: the same rows measured twice, paired by row name.

    python lab/routing/repeat.py FIRST.json SECOND.json
    python lab/routing/repeat.py lab/routing/routing-models-next-0697cc9.json \
        lab/routing/routing-models-repeat-e33b126.json > lab/routing/analysis-repeat.md

Per route (the single pass and split-KV at each count) the ratio second median / first median
over the rows both runs completed: the median and 95th percentile of |ln ratio| and the largest
ratio away from 1. Then the best own route (fastest of the single pass and every split count):
on how many rows it changes between the runs, and how far the first run's best route is off the
second run's best, timed in the second run (rows above 1.03x). Last, the in-flight rule
(candidates.py PROPOSED) and the merge-aware rule (candidates2.py RULE) scored on the second run:
rows within 1.03x of the best own route (and on the first run, for reference). CPU only; needs the repository on sys.path.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from analyze import WITHIN, load_rows  # noqa: E402
from candidates import PROPOSED, enrich, in_flight_rule, time_of  # noqa: E402
from candidates2 import RULE, merge_rule  # noqa: E402

from kernels.split_heuristic import SPLIT_CHOICES  # noqa: E402

ROUTES = ("single",) + tuple(f"split {s}" for s in SPLIT_CHOICES)


def route_times(row: dict) -> dict[str, float]:
    """Every own route's median time of one row, keyed by route name."""
    return {"single": row["single"], **{f"split {s}": row["sweep"][s] for s in SPLIT_CHOICES}}


def paired(first: str, second: str) -> list[tuple[dict, dict]]:
    """(first row, second row) for each row name both runs completed, in the first run's order."""
    again = {r["name"]: r for r in load_rows(second)}
    return [(r, again[r["name"]]) for r in load_rows(first) if r["name"] in again]


def route_line(route: str, pairs) -> str:
    ratios = np.array([route_times(b)[route] / route_times(a)[route] for a, b in pairs])
    logs = np.abs(np.log(ratios))
    largest = ratios[np.argmax(logs)]
    return (f"| {route} | {np.median(logs):.4f} | {np.quantile(logs, 0.95):.4f} | {largest:.3f} "
            f"({pairs[int(np.argmax(logs))][0]['name']}) |")


def best_route(row: dict) -> str:
    times = route_times(row)
    return min(times, key=times.get)


def best_route_lines(pairs) -> list[str]:
    """Rows whose best own route changes, and the first run's best route timed in the second run."""
    off = sorted(((route_times(b)[best_route(a)] / b["best_own"], a, b) for a, b in pairs), key=lambda t: -t[0])
    changed = [t for t in off if best_route(t[1]) != best_route(t[2])]
    lines = [f"- best own route changes on {len(changed)} of {len(pairs)} rows",
             f"- the first run's best route, timed in the second run, is above {WITHIN:.2f}x of the second run's "
             f"best on {sum(x > WITHIN for x, _, _ in off)} of {len(pairs)} rows (worst {off[0][0]:.3f}x)"]
    if changed:
        lines += ["", "| row | first best | second best | first's best / second's best (second run) |",
                  "|---|---|---|---|"]
        lines += [f"| {a['name']} | {best_route(a)} | {best_route(b)} | {x:.3f} |" for x, a, b in changed]
    return lines


def rule_line(label: str, rows: list[dict], choose) -> str:
    ratios = [time_of(r, choose(r)) / r["best_own"] for r in rows]
    return f"- {label}: {sum(x <= WITHIN for x in ratios)} of {len(rows)} rows within {WITHIN:.2f}x (worst {max(ratios):.3f}x)"


def main(first: str, second: str) -> None:
    print(f"`python lab/routing/repeat.py {first} {second}`\n")
    pairs = paired(first, second)
    print(f"# Repeatability: {len(pairs)} rows measured in both runs\n")
    print("Per route, second median / first median (|ln ratio|; largest ratio and its row):\n")
    print("| route | median abs ln | p95 abs ln | largest |")
    print("|---|---|---|---|")
    for route in ROUTES:
        print(route_line(route, pairs))
    print()
    print("\n".join(best_route_lines(pairs)))
    rule = tuple(x if math.isfinite(x) else "inf" for x in RULE)
    for label, index in (("second", 1), ("first (for reference)", 0)):
        print(f"\nRules on the {label} run:\n")
        rows = [enrich(pair[index]) for pair in pairs]
        print(rule_line(f"in-flight rule {PROPOSED}", rows, lambda r: in_flight_rule(r, *PROPOSED)))
        print(rule_line(f"merge-aware rule {rule}", rows, lambda r: merge_rule(r, *RULE)))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
