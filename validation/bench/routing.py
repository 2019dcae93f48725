"""The layer's route against the fastest route the project has, and the best peer, per swept shape.

Read from a shape's summary entry (`validation.bench.summary`) where the benchmark ran the
split sweep (`--sweep`). The own routes are the single pass and the split kernel at every
swept count, split(1) included: it gives the single pass's bits (anchor A1), so whichever of
the two launches is faster could serve that work.
"""

from __future__ import annotations

BAR_OWN_ROUTE_RATIO = 1.03  # the layer at most 3 % slower than its own best route
BAR_ROUTE_PEER_RATIO = 1.02  # and at most 2 % slower than the best peer
SINGLE_PASS_ROUTE = "single_pass"


def route_name(num_splits: int) -> str:
    """A route as the layer runs it: the single pass at one split, else split-KV at the count."""
    return SINGLE_PASS_ROUTE if num_splits == 1 else f"splitkv-{num_splits}"


def routing(entry: dict) -> dict | None:
    """The layer's route, the fastest own route and the bars the layer misses (`flags`), or None where the shape
    was not swept. `entry` is the shape's summary entry."""
    sweep = entry.get("sweep_us")
    if not sweep or entry.get("ours_us") is None:
        return None
    own = {f"splitkv-{int(s)}": us for s, us in sorted(sweep.items(), key=lambda item: int(item[0]))}
    if entry.get("single_pass_us") is not None:
        own[SINGLE_PASS_ROUTE] = entry["single_pass_us"]
    best = min(own, key=own.get)
    layer_us = entry["ours_us"]
    result = {"layer_route": route_name(entry["heuristic_splits"]), "layer_us": layer_us, "best_own_route": best,
              "best_own_us": own[best], "ratio_to_best_own": layer_us / own[best], "flags": []}
    if result["ratio_to_best_own"] > BAR_OWN_ROUTE_RATIO:
        result["flags"].append("slower_than_own_best")
    if entry.get("best_peer_us") is not None:
        result["best_peer"] = entry["best_peer"]
        result["ratio_to_best_peer"] = layer_us / entry["best_peer_us"]
        if result["ratio_to_best_peer"] > BAR_ROUTE_PEER_RATIO:
            result["flags"].append("slower_than_best_peer")
    return result
