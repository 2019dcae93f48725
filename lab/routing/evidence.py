"""Write the routing profile from a model-matrix run: the layer's split choice and the in-flight
rule's, each against the fastest of the project's own routes and the faster peer.

    python3 lab/routing/evidence.py RUN.json OUT.json [--id routing-split-choice-h200]

RUN.json is `measure.sh`'s output (`validation.bench --matrix models --sweep`), read on the
machine that measured it; OUT.json is a `profile` artifact (validation.artifacts), checked
against the evidence schema before it is written, and signed afterwards on the same runner
with `gate-check attest sign`, which needs OUT.json inside the checkout. Per row (results.rows.{row}):
the shape; the measured times (the single pass, split-KV at every count, the layer as routed,
the faster of cuDNN and flash SDPA); the current heuristic's count and the in-flight rule's
(`candidates.in_flight_rule` with `PROPOSED`); each route's time over the best own route and
over the peer. results.summary counts the rows within 1.03x of the best own route and within
1.02x of the peer, with the worst row of each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from analyze import WITHIN, load_rows  # noqa: E402
from candidates import PROPOSED, best_name, enrich, in_flight_rule, time_of  # noqa: E402

from gates.evidence.artifacts import parse_artifact  # noqa: E402
from validation.artifacts import build_artifact  # noqa: E402

PEER_WITHIN = 1.02
COVERS = ("kernels/split_heuristic.py", "kernels/decode_layer.py")


def row_entry(r: dict) -> dict:
    """One row of the profile: times in µs, counts, ratios."""
    rule = in_flight_rule(r, *PROPOSED)
    rule_us = time_of(r, rule)
    entry = {
        "shape": {key: r[key] for key in ("B", "Hq", "Hkv", "D", "S")},
        "single_us": r["single"],
        "sweep_us": {str(s): us for s, us in sorted(r["sweep"].items())},
        "best_own_us": r["best_own"],
        "best_own_route": best_name(r),
        "layer_splits": r["splits"],
        "layer_us": r["layer"],
        "layer_to_best_own": r["layer"] / r["best_own"],
        "rule_splits": rule,
        "rule_us": rule_us,
        "rule_to_best_own": rule_us / r["best_own"],
    }
    if r["peer"]:
        entry |= {"peer_us": r["peer"], "layer_to_peer": r["layer"] / r["peer"], "rule_to_peer": rule_us / r["peer"]}
    return entry


def metrics(rows: dict) -> dict:
    """The profile's named numbers, `{row}.{field}`, as a profile artifact lists them."""
    return {f"{name}.{field}": value for name, row in rows.items() for field, value in row.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)}


def summary(rows: dict) -> dict:
    out = {"rows": len(rows), "within_own": WITHIN, "within_peer": PEER_WITHIN}
    for route in ("layer", "rule"):
        own = {name: row[f"{route}_to_best_own"] for name, row in rows.items()}
        peer = {name: row[f"{route}_to_peer"] for name, row in rows.items() if f"{route}_to_peer" in row}
        worst_own = max(own, key=own.get)
        out[route] = {"rows_within_own": sum(x <= WITHIN for x in own.values()),
                      "worst_to_best_own": own[worst_own], "worst_own_row": worst_own,
                      "rows_with_peer": len(peer),
                      "rows_within_peer": sum(x <= PEER_WITHIN for x in peer.values())}
        if peer:
            worst_peer = max(peer, key=peer.get)
            out[route] |= {"worst_to_peer": peer[worst_peer], "worst_peer_row": worst_peer}
    return out


def build(run: dict, run_path: Path, artifact_id: str) -> dict:
    rows = {r["name"]: row_entry(enrich(r)) for r in load_rows(str(run_path))}
    if not rows:
        raise SystemExit(f"{run_path}: no complete row (every row needs the single pass and split counts 1..128)")
    results = {
        "tool": "validation.bench --matrix models --sweep (cuda-graph replay), lab/routing/candidates.py",
        "method": "medians of 25 graph replays per route; best own = the fastest of the single pass and split-KV "
                  "at 1..128 splits; peer = the faster of cuDNN and flash SDPA; the rule's count 1 is the single pass",
        "rule": {"name": "in_flight_rule", "fill": PROPOSED[0], "bytes_target": PROPOSED[1],
                 "min_tokens": PROPOSED[2], "slow_merge_tokens": PROPOSED[3]},
        "run": {"commit": run.get("commit"), "environment": run.get("environment"),
                "complete": run["results"].get("complete")},
        "metrics": metrics(rows),
        "rows": rows,
        "summary": summary(rows),
    }
    fixtures = {name: meta["fixture"]["sha256"] for name, meta in run["results"]["shapes"].items() if name in rows}
    fixtures["rows"] = hashlib.sha256(json.dumps(sorted(rows)).encode()).hexdigest()
    return build_artifact(artifact_id=artifact_id, kind="profile", results=results, fixtures=fixtures,
                          covers=list(COVERS))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--id", default="routing-split-choice-h200")
    args = parser.parse_args(argv)
    artifact = build(json.loads(args.run.read_text()), args.run, args.id)
    text = json.dumps(artifact, indent=1, ensure_ascii=False) + "\n"
    parse_artifact(text.encode("utf-8"), str(args.out))  # the evidence schema, before anything is written
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    s = artifact["results"]["summary"]
    for route in ("layer", "rule"):
        q = s[route]
        print(f"{route}: {q['rows_within_own']} of {s['rows']} within {WITHIN}x of the best own (worst "
              f"{q['worst_to_best_own']:.3f}x, {q['worst_own_row']}); {q['rows_within_peer']} of "
              f"{q['rows_with_peer']} within {PEER_WITHIN}x of the peer"
              + (f" (worst {q['worst_to_peer']:.3f}x, {q['worst_peer_row']})" if "worst_to_peer" in q else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
