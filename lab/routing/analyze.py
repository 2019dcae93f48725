"""Read a model-matrix benchmark run (lab/routing/measure.sh) and judge the layer's split choice.

    python lab/routing/analyze.py lab/routing/routing-models-a3eaa15.json [more runs ...]

Per row: the layer's route (the heuristic's split count), the fastest of the project's own
routes (the single pass and split-KV at 1..128 splits), the faster of cuDNN and flash SDPA.
Then two candidate choices are scored on the same rows: the current heuristic retuned over
a grid of its constants, and a linear cost model of the split kernel (waves x bytes per
program, total bytes, merge bytes, a split step), scored in-sample and leaving each model
out of the fit; a wave-fill rule (the most splits that fit in k waves of the SMs' slots with
a minimum of tokens per split), its two constants over a grid; and a table read by nearest neighbours (the split count that is best on
average over the three measured rows of the same head dim and group closest in programs and
context), scored with each model left out. Several runs are read as one set of rows. Needs the repository on sys.path (kernels.decode_layer) and numpy.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernels.decode_layer import layer_num_splits, partial_launch_config, programs_per_sm  # noqa: E402
from kernels.split_heuristic import SPLIT_CHOICES, SplitPolicy  # noqa: E402

WITHIN = 1.03


def load_rows(path: str) -> list[dict]:
    artifact = json.loads(Path(path).read_text())
    by_shape = defaultdict(list)
    for row in artifact["results"]["rows"]:
        by_shape[row["shape"]].append(row)
    out = []
    for name, rows in by_shape.items():
        meta = artifact["results"]["shapes"].get(name)
        sweep = {r["num_splits"]: r["median_us"] for r in rows if r["role"] == "sweep" and r.get("median_us")}
        if meta is None or len(sweep) < len(SPLIT_CHOICES):
            continue  # the run ended inside this shape
        pick = {r["impl"]: r.get("median_us") for r in rows if r["role"] == "matrix"}
        peers = [r["median_us"] for r in rows if r["kind"] == "peer" and r.get("median_us")]
        shape = meta["shape"]
        out.append({"name": name, "model": name.split("-tp")[0], "B": shape["B"], "Hq": shape["Hq"],
                    "Hkv": shape["Hkv"], "D": shape["D"], "S": shape["S"], "splits": meta["heuristic_splits"],
                    "layer": pick["splitkv"], "paged": pick["splitkv_paged"], "single": pick["single_pass"],
                    "sweep": sweep, "peer": min(peers) if peers else None,
                    "best_own": min(min(sweep.values()), pick["single_pass"])})
    return out


def heuristic_ratios(rows, policy: SplitPolicy) -> list[float]:
    return [r["sweep"][layer_num_splits(r["Hq"], r["Hkv"], r["D"], r["B"], 1, r["S"], policy=policy, num_sms=132)]
            / r["best_own"] for r in rows]


def features(r: dict, splits: int) -> list[float]:
    group = r["Hq"] // r["Hkv"]
    blocks = -(-group // partial_launch_config(r["D"], group, torch.bfloat16).block_m)
    slots = 132 * programs_per_sm(r["D"], group, torch.bfloat16)
    waves = math.ceil(r["B"] * r["Hkv"] * blocks * splits / slots)
    bytes_per_program = math.ceil(r["S"] / splits) * r["D"] * 4  # K and V, bf16
    total = r["B"] * r["Hkv"] * r["S"] * r["D"] * 4
    merge = (splits > 1) * r["B"] * r["Hq"] * splits * r["D"] * 4
    return [1.0, waves * bytes_per_program / 1e6, total / 1e9, merge / 1e6, float(splits > 1), float(waves)]


def fit(rows) -> np.ndarray:
    x = np.array([features(r, s) for r in rows for s in SPLIT_CHOICES])
    y = np.array([r["sweep"][s] for r in rows for s in SPLIT_CHOICES])
    weight = np.array([1.0 / r["best_own"] for r in rows for _ in SPLIT_CHOICES])
    return np.linalg.lstsq(x * weight[:, None], y * weight, rcond=None)[0]


def model_ratios(rows, coef) -> list[float]:
    out = []
    for r in rows:
        chosen = min(SPLIT_CHOICES, key=lambda s: float(np.dot(features(r, s), coef)))
        out.append(r["sweep"][chosen] / r["best_own"])
    return out


def summary(label: str, ratios: list[float]) -> str:
    return (f"{label}: {sum(x <= WITHIN for x in ratios)} of {len(ratios)} rows within {WITHIN:.2f}x of the best own "
            f"route, worst {max(ratios):.3f}x")


def fill_rule(r: dict, waves: float, min_tokens: int) -> int:
    """The largest split count whose programs fit in `waves` waves of the SMs' slots, with at
    least `min_tokens` tokens per split (1 when none does)."""
    group = r["Hq"] // r["Hkv"]
    programs = r["B"] * r["Hkv"] * -(-group // partial_launch_config(r["D"], group, torch.bfloat16).block_m)
    slots = 132 * programs_per_sm(r["D"], group, torch.bfloat16)
    fitting = [s for s in SPLIT_CHOICES if programs * s <= waves * slots and r["S"] / s >= min_tokens]
    return max(fitting, default=1)


def neighbour_ratios(rows, training, k: int = 3) -> list[float]:
    """Each row's time at the split count that is best on average over its k nearest training rows."""
    out = []
    for r in rows:
        family = [t for t in training if (t["D"], t["Hq"] // t["Hkv"]) == (r["D"], r["Hq"] // r["Hkv"])] or training

        def distance(t):
            return (math.log2(t["B"] * t["Hkv"]) - math.log2(r["B"] * r["Hkv"])) ** 2 \
                + (math.log2(t["S"]) - math.log2(r["S"])) ** 2

        near = sorted(family, key=distance)[:k]
        chosen = min(SPLIT_CHOICES, key=lambda s: sum(t["sweep"][s] / t["best_own"] for t in near))
        out.append(r["sweep"][chosen] / r["best_own"])
    return out


def main(*paths: str) -> None:
    rows = [row for path in paths for row in load_rows(path)]
    print(f"{len(rows)} complete rows, {len({r['model'] for r in rows})} models")
    print("\n| row | splits | layer us | best own | best own us | layer / best own | layer / best peer | single / split(1) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: -r["layer"] / r["best_own"]):
        best = min(r["sweep"], key=r["sweep"].get)
        best_name = "single pass" if r["single"] <= r["sweep"][best] else f"split {best}"
        peer = "-" if r["peer"] is None else f"{r['layer'] / r['peer']:.3f}"
        print(f"| {r['name']} | {r['splits']} | {r['layer']:.2f} | {best_name} | {r['best_own']:.2f} | "
              f"{r['layer'] / r['best_own']:.3f} | {peer} | {r['single'] / r['sweep'][1]:.3f} |")
    print()
    print(summary("layer as measured", [r["layer"] / r["best_own"] for r in rows]))
    print(summary("current heuristic, split times from the sweep", heuristic_ratios(rows, SplitPolicy())))
    grid = []
    for tokens, tolerance, fill in itertools.product((64, 128, 256, 512, 1024), (0.0, 0.05, 0.1, 0.2, 0.3),
                                                     (0.5, 0.8, 1.0, 1.5, 2.0)):
        ratios = heuristic_ratios(rows, SplitPolicy(min_tokens_per_split=tokens, tolerance=tolerance,
                                                    fill_fraction=fill))
        grid.append((sum(x <= WITHIN for x in ratios), -max(ratios), tokens, tolerance, fill, ratios))
    best = max(grid, key=lambda g: g[:2])
    print(summary(f"best retuned heuristic (min_tokens_per_split={best[2]}, tolerance={best[3]}, "
                  f"fill_fraction={best[4]})", best[5]))
    print(summary("cost model, in-sample", model_ratios(rows, fit(rows))))
    held_out = []
    for model in sorted({r["model"] for r in rows}):
        held_out += model_ratios([r for r in rows if r["model"] == model],
                                 fit([r for r in rows if r["model"] != model]))
    print(summary("cost model, each model left out of the fit", held_out))
    grid = []
    for waves, tokens in itertools.product((0.5, 0.75, 1, 1.5, 2, 3, 4), (32, 64, 128, 256, 384, 512, 768, 1024)):
        ratios = [r["sweep"][fill_rule(r, waves, tokens)] / r["best_own"] for r in rows]
        grid.append((sum(x <= WITHIN for x in ratios), -max(ratios), waves, tokens, ratios))
    best = max(grid, key=lambda g: g[:2])
    print(summary(f"best wave-fill rule (waves={best[2]}, min tokens per split={best[3]})", best[4]))
    held_out = []
    for model in sorted({r["model"] for r in rows}):
        held_out += neighbour_ratios([r for r in rows if r["model"] == model],
                                     [r for r in rows if r["model"] != model])
    print(summary("nearest-neighbour table, each model left out", held_out))
    peers = [r["layer"] / r["peer"] for r in rows if r["peer"]]
    print(f"layer over the best peer: {sum(x > 1.02 for x in peers)} of {len(peers)} rows above 1.02x, "
          f"worst {max(peers):.3f}x")
    ratios = sorted(r["single"] / r["sweep"][1] for r in rows)
    print(f"single pass over split(1): median {ratios[len(ratios) // 2]:.3f}, from {ratios[0]:.3f} to {ratios[-1]:.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
