"""The per-shape verdict of a benchmark run: ours against the best peer, the read
ceiling, the single-pass kernel, the paged path and the split sweep."""

from __future__ import annotations

from .shapes import SPEEDUP_SHAPES, BenchShape

BAR_LARGE_FRACTION = 0.85
BAR_MEDIUM_RATIO = 0.8
BAR_SMALL_RATIO = 0.9
BAR_SPEEDUP = 5.0
BAR_PAGED_RATIO = 1.1
BAR_HEURISTIC_RATIO = 1.1


def paged_name(name: str) -> str:
    """`splitkv` -> `splitkv_paged`; `tuned[cfg]` -> `tuned_paged[cfg]`."""
    if "[" in name:
        head, tail = name.split("[", 1)
        return f"{head}_paged[{tail}"
    return f"{name}_paged"


def _time(rows, shape, impl, role="matrix", splits=None):
    for r in rows:
        if r["shape"] == shape and r["impl"] == impl and r["role"] == role and "median_us" in r \
                and (splits is None or r["num_splits"] == splits):
            return r["median_us"]
    return None


def layer_choices(sweep: dict[int, float], single_pass_us: float | None) -> dict[int, float]:
    """The time of each fixed split count as the layer would run it.

    The sweep times the split route at every count; at one split that is the split
    kernel with one split (the bitwise anchor), which the layer never runs: a layer whose
    heuristic says 1 runs the single pass. So the one-split choice is the single pass
    where it was measured, and the heuristic is held to these times.
    """
    choices = dict(sweep)
    if single_pass_us is not None and 1 in choices:
        choices[1] = single_pass_us
    return choices


def summarize(results: dict, shapes: tuple[BenchShape, ...]) -> dict:
    rows, ours = results["rows"], results["ours"]
    read = results["ceilings"]["read"]["TBps"]
    out = {}
    for shape in shapes:
        s = shape.name
        ours_us = _time(rows, s, ours)
        entry: dict = {"ours_impl": ours, "ours_us": ours_us, "size_class": shape.size_class,
                       "floor_us": shape.floor_us(read), "checks": {}}
        if ours_us is None:
            out[s] = entry
            continue
        entry["fraction_of_read_ceiling"] = shape.floor_us(read) / ours_us
        read_pass = results["shapes"].get(s, {}).get("read_pass")
        if read_pass:
            entry["read_pass_us"] = read_pass["median_us"]
            entry["ratio_to_read_pass"] = ours_us / read_pass["median_us"]
        peers = [(r["median_us"], r["impl"]) for r in rows
                 if r["shape"] == s and r["kind"] == "peer" and "median_us" in r]
        checks = entry["checks"]
        if peers:
            best_us, best = min(peers)
            entry.update({"best_peer": best, "best_peer_us": best_us, "ratio_to_best_peer": ours_us / best_us})
            if shape.size_class == "large":
                checks["read_ceiling_fraction>=0.85"] = entry["fraction_of_read_ceiling"] >= BAR_LARGE_FRACTION
                checks["faster_than_best_peer"] = ours_us < best_us
            elif shape.size_class == "medium":
                checks["ratio_to_best_peer<=0.8"] = ours_us <= BAR_MEDIUM_RATIO * best_us
            else:
                checks["ratio_to_best_peer<=0.9"] = ours_us <= BAR_SMALL_RATIO * best_us
        single = _time(rows, s, "single_pass")
        if single is not None:
            entry["single_pass_us"] = single
            entry["speedup_vs_single_pass"] = single / ours_us
            if s in SPEEDUP_SHAPES:
                checks["speedup_vs_single_pass>=5"] = single / ours_us >= BAR_SPEEDUP
        paged = _time(rows, s, paged_name(ours))
        if paged is not None:
            entry["paged_us"] = paged
            entry["paged_ratio"] = paged / ours_us
            checks["paged_within_1.1x"] = paged / ours_us <= BAR_PAGED_RATIO
        sweep = {r["num_splits"]: r["median_us"] for r in rows
                 if r["shape"] == s and r["impl"] == ours and r["role"] == "sweep" and "median_us" in r}
        if sweep:
            choices = layer_choices(sweep, single)
            best_splits = min(choices, key=choices.get)
            heuristic = results["shapes"][s]["heuristic_splits"]
            entry["sweep_us"] = sweep
            entry["layer_choices_us"] = choices
            entry["sweep_best_splits"] = best_splits
            entry["heuristic_splits"] = heuristic
            if heuristic in choices:
                entry["heuristic_ratio_to_sweep_best"] = choices[heuristic] / choices[best_splits]
                checks["heuristic_within_10pct"] = entry["heuristic_ratio_to_sweep_best"] <= BAR_HEURISTIC_RATIO
        entry["passed"] = all(checks.values()) if checks else None
        out[s] = entry
    return out
