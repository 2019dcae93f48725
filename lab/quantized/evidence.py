"""Turn a lab run (`measure.py --out`) into the profile artifact the quantized-KV record cites.

    python -m lab.quantized.evidence RUN.json --out docs/evidence/quantized-kv-variants-h200.json

Run on the GPU machine right after the measurement, in the same tree, then signed there by the
runner (`gate-check attest sign`). `results.shapes.<shape>.<format>.<route>` holds the best
time over the split counts tried (`us`, `num_splits`), the speed against the bf16 route at the
layer's split count (`x_bf16`), the share of the read pass of the format's bytes (`of_read`)
and the error against fp64 attention over the dequantized cache and over the bf16 cache;
`results.shapes.<shape>.best_exact` names, per format, the fastest route whose conversions are
exact. The artifact binds what the measuring process imported (`sources` of the run: the
records' covered files and the repository modules it loaded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from lab.quantized import measure

ARTIFACT_ID = "quantized-kv-variants-h200"
OPT_IN_DOTS = ("vt-fp8qk", "vt-fp8dot")


def is_exact(route: str) -> bool:
    """Whether a route's conversions and dots change no bit of its inputs (not the FP8-dot variants)."""
    return not route.split(":")[0] in OPT_IN_DOTS


def shape_results(shape_result: dict) -> dict:
    entries: dict = {"label": shape_result["label"], "bar": shape_result["bar"],
                     "heuristic_splits": shape_result["heuristic_splits"], "read_pass_us": shape_result["read_pass_us"]}
    for row in measure.summarize(shape_result):
        entries.setdefault(row["format"], {})[row["route"]] = {
            "us": round(row["best_us"], 2), "num_splits": row["best_splits"],
            "us_at_heuristic": None if row["heuristic_us"] is None else round(row["heuristic_us"], 2),
            "x_bf16": None if row["speed_vs_bf16"] is None else round(row["speed_vs_bf16"], 3),
            "of_read": None if row["of_read_pass"] is None else round(row["of_read_pass"], 3),
            "rel_l2": row["rel_l2"], "rel_l2_vs_bf16_cache": row["rel_l2_vs_bf16_cache"]}
    entries["best_exact"] = {}
    for fmt in ("int8", "fp8"):
        routes = {route: r for route, r in entries.get(fmt, {}).items() if is_exact(route)}
        if routes:
            route = min(routes, key=lambda name: routes[name]["us"])
            entries["best_exact"][fmt] = {"route": route, **routes[route]}
    return entries


def main(argv=None) -> int:
    from validation.artifacts import build_artifact

    p = argparse.ArgumentParser(prog="python -m lab.quantized.evidence", description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    run = json.loads(args.run.read_text())
    if not run.get("complete"):
        print(f"error: {args.run} is not a complete run (budget ran out): no artifact written", file=sys.stderr)
        return 1
    failures = [f"{s['shape']} {r['format']} {r['route']}" for s in run["shapes"] for r in s["rows"]
                if not r.get("correctness", {}).get("passed", True)]
    if failures:
        print(f"error: correctness failures: {failures}", file=sys.stderr)
        return 1
    shapes = {s["shape"]: shape_results(s) for s in run["shapes"]}
    metrics = {}
    for name, entry in shapes.items():
        metrics[f"{name}.bf16_us"] = entry["bf16"]["project"]["us"] if "bf16" in entry else None
        for fmt, best in entry["best_exact"].items():
            metrics[f"{name}.{fmt}.best_exact_us"] = best["us"]
            metrics[f"{name}.{fmt}.best_exact_x_bf16"] = best["x_bf16"]
    results = {"tool": "cuda-graph replay (validation.bench.timing.time_graph_replay)",
               "metrics": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
               "method": "cuda-graph replay per call (validation.bench.timing), best over the split counts tried; "
                         "every output checked against fp64 attention over the dequantized cache first",
               "environment": run["environment"],
               "shapes": shapes}
    fixtures = {"inputs": hashlib.sha256(json.dumps([s["label"] for s in run["shapes"]]).encode()).hexdigest()}
    if not run.get("sources"):
        print(f"error: {args.run} records no sources (what the measurement imported)", file=sys.stderr)
        return 1
    artifact = build_artifact(artifact_id=ARTIFACT_ID, kind="profile", results=results, fixtures=fixtures,
                              command=run["command"], sources=run["sources"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(artifact, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(results['shapes'])} shapes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
