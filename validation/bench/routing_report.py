"""`python -m validation.bench.routing_report`: does the layer take the project's fastest route?

Reads one or more benchmark artifacts written with the split sweep (`python -m
validation.bench --matrix models --sweep ...`; several device runs may share a matrix) and
prints, per row, the layer's route, the fastest route the project has measured there (the
single pass, or split-KV at any swept count), the best peer, and the bars the layer misses:
more than 3 % slower than its own best route, more than 2 % slower than the best peer
(`validation.bench.routing`). `--json` writes the rows and the counts the verdict quotes.

Examples:
    python -m validation.bench.routing_report models-1.json models-2.json
    python -m validation.bench.routing_report models-*.json --out routing.md   # Markdown table too
    python -m validation.bench.routing_report models.json --flagged             # flagged rows only
    python -m validation.bench.routing_report models-*.json --json routing.json # the rows and counts as JSON

Exit status: 0 when every row meets both bars, 1 when a row is flagged, 2 for an artifact
that cannot be read (it is named, with what is missing).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import shapes as shape_matrix
from .routing import BAR_OWN_ROUTE_RATIO, BAR_ROUTE_PEER_RATIO, routing
from .summary import summarize


class RoutingInputError(ValueError):
    """An artifact that holds no routing rows, or cannot be read."""


def routing_rows(path: Path) -> list[dict]:
    """One dict per shape of the artifact at `path` that the split sweep timed: its name, the run it comes from
    and its routing (`validation.bench.routing`), from the artifact's rows."""
    try:
        artifact = json.loads(path.read_text())
        results = artifact["results"]
        names = list(results["shapes"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RoutingInputError(f"{path}: not a benchmark artifact ({type(exc).__name__}: {exc})") from exc
    try:
        selected = shape_matrix.select(names, "models")
    except ValueError:
        selected = shape_matrix.select(names, "public")
    rows = []
    for name, entry in summarize(results, selected).items():
        route = routing(entry)
        if route is not None:
            rows.append({"shape": name, "run": path.name, "commit": artifact.get("commit"), **route})
    if not rows:
        raise RoutingInputError(f"{path}: no shape has a split sweep (run the benchmark with --sweep)")
    return rows


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def markdown(rows: list[dict]) -> str:
    lines = ["| row | layer route | layer us | best own route | best own us | x own | best peer | x peer | flags |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['shape']} | `{r['layer_route']}` | {r['layer_us']:.2f} | `{r['best_own_route']}` | "
                     f"{r['best_own_us']:.2f} | {_ratio(r['ratio_to_best_own'])} | {r.get('best_peer', '-')} | "
                     f"{_ratio(r.get('ratio_to_best_peer'))} | {', '.join(r['flags']) or '-'} |")
    return "\n".join(lines)


def counts(rows: list[dict]) -> dict:
    """How many rows meet each bar, and the worst row of each."""
    with_peer = [r for r in rows if "ratio_to_best_peer" in r]
    worst_own = max(rows, key=lambda r: r["ratio_to_best_own"])
    result = {"rows": len(rows), "within_own_bar": sum(r["ratio_to_best_own"] <= BAR_OWN_ROUTE_RATIO for r in rows),
              "worst_own": worst_own["shape"], "worst_ratio_to_best_own": worst_own["ratio_to_best_own"],
              "rows_with_peer": len(with_peer),
              "within_peer_bar": sum(r["ratio_to_best_peer"] <= BAR_ROUTE_PEER_RATIO for r in with_peer)}
    if with_peer:
        worst_peer = max(with_peer, key=lambda r: r["ratio_to_best_peer"])
        result.update(worst_peer=worst_peer["shape"], worst_ratio_to_best_peer=worst_peer["ratio_to_best_peer"])
    return result


def verdict(rows: list[dict]) -> str:
    """The counts and the worst rows, in words."""
    c = counts(rows)
    worst = next(r for r in rows if r["shape"] == c["worst_own"])
    lines = [f"{c['rows']} rows: the layer within {BAR_OWN_ROUTE_RATIO:.2f}x of its best own route on "
             f"{c['within_own_bar']}, worst {c['worst_ratio_to_best_own']:.3f}x ({worst['shape']}: "
             f"`{worst['layer_route']}` {worst['layer_us']:.2f} us, `{worst['best_own_route']}` "
             f"{worst['best_own_us']:.2f} us)"]
    if c["rows_with_peer"]:
        worst_peer = next(r for r in rows if r["shape"] == c["worst_peer"])
        lines.append(f"{c['rows_with_peer']} rows with a peer: within {BAR_ROUTE_PEER_RATIO:.2f}x of the best peer "
                     f"on {c['within_peer_bar']}, worst {c['worst_ratio_to_best_peer']:.3f}x ({worst_peer['shape']}, "
                     f"{worst_peer['best_peer']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.bench.routing_report",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("artifacts", nargs="+", type=Path, help="benchmark artifacts written with --sweep")
    parser.add_argument("--flagged", action="store_true", help="list only the rows that miss a bar")
    parser.add_argument("--out", type=Path, help="also write the table and the verdict here (Markdown)")
    parser.add_argument("--json", type=Path, help="also write the rows and the counts here (JSON)")
    args = parser.parse_args(argv)
    rows: list[dict] = []
    try:
        for path in args.artifacts:
            rows += routing_rows(path)
    except RoutingInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    shown = [r for r in rows if r["flags"]] if args.flagged else rows
    text = (markdown(shown) if shown else "(no row is flagged)") + "\n\n" + verdict(rows) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"runs": [str(p) for p in args.artifacts], "bars": {
            "own_route_ratio": BAR_OWN_ROUTE_RATIO, "best_peer_ratio": BAR_ROUTE_PEER_RATIO},
            "counts": counts(rows), "rows": rows}, indent=1) + "\n")
    return 1 if any(r["flags"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
