"""Which keys a split-count table needs: the unknowns U1 and U2 of `splitkv-split-table`.

    python lab/routing/key_probe.py --list                   # the base cells and their variants, no GPU
    python lab/routing/key_probe.py --out OUT.json [--cells 12] [--replays 10]

A table cell is keyed by what the partial kernel sees: head dim D, query rows per KV head G x R,
programs per split P = B x Hkv, context S. For each of a seeded sample of base cells (contiguous
bf16 cache, R = 1), this times every own route (the single pass and split-KV at 1..128) of
variants that present the same key in another way, and says whether the base cell's fastest
route is within 1.03x of the variant's own fastest:

- `hkv`: the same P split the other way between requests and KV heads (U1);
- `paged`: the same shape over a paged cache (U2);
- `int8`, `fp8`: the same shape over an 8-bit cache, int8 with per-token scales, FP8 with
  per-head scales (U2);
- `rows4` against `group4`: R = 4 query rows at group G, and the R = 1 cell of group 4 G, whose
  G x R is the same (U2: whether the R = 1 cell serves R > 1).

Each variant's split(1) is checked to give its single pass's bits (anchor A1). No oracle: the
suites judge correctness. Times are the median of CUDA-graph replays (`validation.bench.timing`);
the output is rewritten after every cell, so a run cut short keeps what it finished.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from table_sweep import SPLITS, families  # noqa: E402
from validation.bench.shapes import BenchShape  # noqa: E402

WITHIN = 1.03
PROGRAMS = (2, 8, 32, 128, 512)
CONTEXTS = (4096, 32768)
VARIANTS = ("base", "hkv", "paged", "int8", "fp8", "group4", "rows4")


def base_cells(count: int, max_kv_gb: float, seed: int) -> list[BenchShape]:
    """`count` seeded (D, G, P, S) cells with R = 1, KV heads as the grid splits P (8 where P allows)."""
    rng = random.Random(seed)
    pool = []
    for head_dim, group in families():
        for programs in PROGRAMS:
            kv_heads = min(programs, 8)
            for context in CONTEXTS:
                shape = BenchShape(f"d{head_dim}-g{group}-p{programs}-s{context}", programs // kv_heads,
                                   group * kv_heads, kv_heads, head_dim, context)
                if shape.kv_bytes <= max_kv_gb * 1e9:
                    pool.append(shape)
    return sorted(rng.sample(pool, min(count, len(pool))), key=lambda s: (s.kv_bytes, s.name))


def variant_shape(base: BenchShape, variant: str) -> BenchShape | None:
    """The variant's shape (None where it does not exist for this cell)."""
    programs = base.batch * base.num_kv_heads
    if variant == "hkv":
        kv_heads = 1 if base.num_kv_heads > 1 else min(programs, 8)
        if kv_heads == base.num_kv_heads:
            return None
        return BenchShape(f"{base.name}-hkv{kv_heads}", programs // kv_heads, base.group * kv_heads, kv_heads,
                          base.head_dim, base.context)
    if variant == "group4":
        return BenchShape(f"{base.name}-g{4 * base.group}", base.batch, 4 * base.num_q_heads, base.num_kv_heads,
                          base.head_dim, base.context)
    if variant == "rows4":
        return BenchShape(f"{base.name}-r4", base.batch, base.num_q_heads, base.num_kv_heads, base.head_dim,
                          base.context, rows=4)
    return base


def routes(shape: BenchShape, variant: str, x) -> dict:
    """The single pass and split-KV at every count over the variant's cache, with preallocated outputs."""
    import torch

    from kernels import (LayerWorkspace, attention_decode, attention_decode_paged, attention_decode_paged_splitkv,
                         attention_decode_splitkv, quantize_kv_fp8, quantize_kv_int8)

    k, v, scales = x.k, x.v, {}
    if variant == "int8":
        (k, k_scale), (v, v_scale) = quantize_kv_int8(x.k), quantize_kv_int8(x.v)
        scales = {"k_scale": k_scale, "v_scale": v_scale}
    elif variant == "fp8":
        (k, k_scale), (v, v_scale) = quantize_kv_fp8(x.k), quantize_kv_fp8(x.v)
        scales = {"k_scale": k_scale, "v_scale": v_scale}
    paged = variant == "paged"
    out_single = torch.empty_like(x.q)
    if paged:
        calls = {"single": lambda: attention_decode_paged(x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens,
                                                          out=out_single)}
    else:
        calls = {"single": lambda: attention_decode(x.q, k, v, x.visible_tokens, out=out_single, **scales)}
    for splits in SPLITS:
        ws = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, splits, x.q.device)
        out = torch.empty_like(x.q)
        if paged:
            calls[str(splits)] = (lambda s=splits, w=ws, o=out: attention_decode_paged_splitkv(
                x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens, num_splits=s, workspace=w, out=o))
        else:
            calls[str(splits)] = (lambda s=splits, w=ws, o=out: attention_decode_splitkv(
                x.q, k, v, x.visible_tokens, num_splits=s, workspace=w, out=o, **scales))
    return calls


def measure(shape: BenchShape, variant: str, *, seed: int, replays: int) -> dict:
    """Every route's median µs for one variant; stops the run where split(1) breaks anchor A1."""
    import torch

    from validation.bench.fixtures import make_inputs
    from validation.bench.timing import time_graph_replay

    x = make_inputs(shape, seed=seed)
    times, reference = {}, None
    for name, call in routes(shape, variant, x).items():
        out = call()
        torch.cuda.synchronize()
        if reference is None:
            reference = out.clone()
        elif name == "1" and not torch.equal(out, reference):
            raise SystemExit(f"{shape.name} {variant}: split(1) does not give the single pass's bits")
        times[name] = time_graph_replay(call, flush_l2=not shape.warm_l2, replays=replays).median_us
    del x, reference
    torch.cuda.empty_cache()
    return times


def judged(cell: dict) -> dict:
    """Per variant: its fastest route, and the time of the route its reference cell chose over its own fastest."""
    found = {}
    for variant, times in cell["us"].items():
        reference = cell["us"]["group4" if variant == "rows4" else "base"]
        if reference is None or times is None:
            continue
        chosen = min(reference, key=reference.get)
        best = min(times, key=times.get)
        found[variant] = {"best": best, "reference_choice": chosen, "reference_choice_to_best": times[chosen] / times[best]}
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--cells", type=int, default=12)
    parser.add_argument("--max-kv-gb", type=float, default=0.6)
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args(argv)
    bases = base_cells(args.cells, args.max_kv_gb, args.seed)
    if args.list:
        for base in bases:
            print(base.name, [(variant, shape.name) for variant in VARIANTS
                              if (shape := variant_shape(base, variant)) is not None])
        return 0
    if args.out is None:
        parser.error("--out is required unless --list")
    import torch

    result = {"tool": "lab/routing/key_probe.py", "device": torch.cuda.get_device_name(), "seed": args.seed,
              "replays": args.replays, "within": WITHIN, "cells": []}
    start = time.time()
    for base in bases:
        cell = {"name": base.name, "D": base.head_dim, "G": base.group, "Hkv": base.num_kv_heads, "B": base.batch,
                "S": base.context, "us": {}}
        for variant in VARIANTS:
            shape = variant_shape(base, variant)
            cell["us"][variant] = None if shape is None else measure(shape, variant, seed=1, replays=args.replays)
        cell["judged"] = judged(cell)
        result["cells"].append(cell)
        result["summary"] = summary(result["cells"])
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"{time.time() - start:6.0f} s {base.name}: " + ", ".join(
            f"{variant} {row['best']} ({row['reference_choice_to_best']:.3f})" for variant, row in cell["judged"].items()),
            flush=True)
    print(json.dumps(result.get("summary", {}), indent=1))
    return 0


def summary(cells: list[dict]) -> dict:
    """Per variant: the cells judged, those whose reference choice is within 1.03x of the variant's own best, the worst."""
    found = {}
    for variant in VARIANTS[1:]:
        ratios = [cell["judged"][variant]["reference_choice_to_best"] for cell in cells if variant in cell["judged"]]
        if ratios:
            found[variant] = {"cells": len(ratios), "within": sum(r <= WITHIN for r in ratios), "worst": max(ratios)}
    return found


if __name__ == "__main__":
    sys.exit(main())
