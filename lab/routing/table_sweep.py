"""Time every own route on a grid of launch keys, for a split-count table the layer could read.

    python lab/routing/table_sweep.py --list                       # the cells, no GPU
    python lab/routing/table_sweep.py --compile-only --part 0/8    # warm the kernel cache (one of 8)
    python lab/routing/table_sweep.py --out OUT.json [--part K/N] [--families 128x8,128x4]
    python lab/routing/table_sweep.py --off-grid 120 --out OUT.json  # seeded shapes between the cells
    python lab/routing/table_sweep.py --off-grid 120 --out OUT.json --evidence docs/evidence/ID.json --id ID

The model matrix's rows differ in what the kernel sees only through the head dim D, the
group G (query rows per KV head), the programs per split P = B x Hkv and the context S.
Rows of one (D, G, P, S) time alike whatever model they come from, and rows that differ in G
alone do not (routing-models-*.json). So the grid is: every (D, G) family of
`validation/model_shapes.py`, P a power of two from 1 to 2048, S in the matrix's contexts, K
and V at most `--max-kv-gb` (default 1.1, as the routing runs); per cell the single pass and
split-KV at 1, 2, 4, ..., 128 splits, each by CUDA-graph replay (`validation.bench.timing`).
No oracle and no peers: the routes' correctness is the suites' (and the bench's) business.
Cells run smallest first; the output is rewritten after every cell, so a run cut short
keeps what it finished.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from validation.bench.shapes import BenchShape  # noqa: E402
from validation.model_shapes import CONTEXTS, per_gpu_configs  # noqa: E402

SPLITS = (1, 2, 4, 8, 16, 32, 64, 128)
PROGRAMS = tuple(2 ** k for k in range(12))  # 1 .. 2048
# B x Hkv of the matrix's models with 5 or 10 KV heads per GPU (Phi-3-medium, Phi-4, Qwen2.5 at TP 4 or 8).
PROGRAMS_FIVES = tuple(5 * 2 ** k for k in range(8))  # 5 .. 640


def families() -> list[tuple[int, int]]:
    return sorted({(c.head_dim, c.num_q_heads // c.num_kv_heads) for c in per_gpu_configs()})


def cells(max_kv_gb: float, chosen: list[tuple[int, int]] | None = None,
          programs_grid=PROGRAMS + PROGRAMS_FIVES) -> list[BenchShape]:
    """Every (D, G, P, S) cell within the KV budget, smallest KV first."""
    found = []
    for head_dim, group in chosen or families():
        for programs in programs_grid:
            kv_heads = min(programs, 8) if programs & (programs - 1) == 0 else min(programs, 5)
            batch = programs // kv_heads
            for context in CONTEXTS:
                shape = BenchShape(f"d{head_dim}-g{group}-p{programs}-s{context}", batch, group * kv_heads,
                                   kv_heads, head_dim, context)
                if shape.kv_bytes <= max_kv_gb * 1e9:
                    found.append(shape)
    return sorted(found, key=lambda s: (s.kv_bytes, s.name))


def off_grid(count: int, max_kv_gb: float, seed: int = 7) -> list[BenchShape]:
    """`count` seeded shapes off the grid: batch, KV heads and context none of the grid's cells has."""
    import random

    rng = random.Random(seed)
    found: dict[str, BenchShape] = {}
    fams = families()
    while len(found) < count:
        head_dim, group = rng.choice(fams)
        kv_heads = rng.choice((1, 2, 4, 8))
        batch = rng.choice((2, 3, 6, 8, 12, 24, 32, 48))
        context = rng.choice((3072, 4096, 12288, 16384, 24576, 49152, 65536, 98304))
        shape = BenchShape(f"og-d{head_dim}-g{group}-hkv{kv_heads}-b{batch}-s{context}", batch, group * kv_heads,
                           kv_heads, head_dim, context)
        if shape.kv_bytes <= max_kv_gb * 1e9:
            found[shape.name] = shape
    return sorted(found.values(), key=lambda s: (s.kv_bytes, s.name))


def routes(shape: BenchShape, x) -> dict:
    """The single pass and split-KV at every count, as callables with preallocated outputs."""
    import torch

    from kernels import LayerWorkspace, attention_decode, attention_decode_splitkv

    out_single = torch.empty_like(x.q)
    calls = {"single": lambda: attention_decode(x.q, x.k, x.v, x.visible_tokens, out=out_single)}
    for splits in SPLITS:
        ws = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, splits, x.q.device)
        out = torch.empty_like(x.q)
        calls[str(splits)] = (lambda s=splits, w=ws, o=out: attention_decode_splitkv(
            x.q, x.k, x.v, x.visible_tokens, num_splits=s, workspace=w, out=o))
    return calls


def measure(shape: BenchShape, *, seed: int, replays: int, compile_only: bool) -> dict:
    import torch

    from validation.bench.fixtures import make_inputs
    from validation.bench.timing import time_graph_replay

    x = make_inputs(shape, seed=seed)
    row = {"name": shape.name, "D": shape.head_dim, "G": shape.group, "Hkv": shape.num_kv_heads, "B": shape.batch,
           "P": shape.batch * shape.num_kv_heads, "S": shape.context, "kv_bytes": shape.kv_bytes, "us": {}}
    reference = None
    for name, call in routes(shape, x).items():
        out = call()
        torch.cuda.synchronize()
        if reference is None:
            reference = out.clone()
        elif name == "1" and not torch.equal(out, reference):
            raise SystemExit(f"{shape.name}: split(1) does not give the single pass's bits")
        if not compile_only:
            row["us"][name] = time_graph_replay(call, flush_l2=not shape.warm_l2, replays=replays).median_us
    del x, reference
    torch.cuda.empty_cache()
    return row


WITHIN = 1.03
COVERS = ("kernels/split_heuristic.py", "kernels/decode_layer.py")


def evidence(result: dict, artifact_id: str) -> dict:
    """A `benchmark` artifact of the run: per shape the routes' times, the fastest own route, and the
    heuristic's count (`layer_num_splits`, 132 SMs) with its time over the fastest; a summary in
    `results.metrics`. Checked against the evidence schema by the caller before it is written."""
    import hashlib

    from kernels.decode_layer import layer_num_splits
    from validation.artifacts import build_artifact

    rows = {}
    for row in result["rows"]:
        times = row["us"]
        best_route = min(times, key=times.get)
        count = layer_num_splits(row["G"] * row["Hkv"], row["Hkv"], row["D"], row["B"], 1, row["S"], num_sms=132)
        layer_us = times["single" if count == 1 else str(count)]
        rows[row["name"]] = {"shape": {k: row[k] for k in ("D", "G", "Hkv", "B", "P", "S")}, "us": times,
                             "best_own_route": best_route, "best_own_us": times[best_route],
                             "heuristic_splits": count, "heuristic_us": layer_us,
                             "heuristic_to_best_own": layer_us / times[best_route],
                             "single_to_split1": times["single"] / times["1"]}
    ratios = {name: row["heuristic_to_best_own"] for name, row in rows.items()}
    worst = max(ratios, key=ratios.get)
    singles = sorted(row["single_to_split1"] for row in rows.values())
    metrics = {"shapes": len(rows), "heuristic_rows_within_own": sum(r <= WITHIN for r in ratios.values()),
               "heuristic_worst_to_best_own": ratios[worst],
               "single_to_split1_min": singles[0], "single_to_split1_max": singles[-1],
               "single_to_split1_median": singles[len(singles) // 2]}
    results = {"tool": "lab/routing/table_sweep.py (cuda-graph replay, validation.bench.timing)",
               "method": f"median of {result['replays']} graph replays per route; best own = the fastest of the "
                         "single pass and split-KV at 1..128 splits; the heuristic's count 1 is the single pass",
               "within_own": WITHIN, "worst_row": worst, "metrics": metrics,
               "rows": [{"name": name, **row} for name, row in rows.items()]}
    fixtures = {"shapes": hashlib.sha256(json.dumps([sorted(rows), result["seed"]]).encode()).hexdigest()}
    return build_artifact(artifact_id=artifact_id, kind="benchmark", results=results, fixtures=fixtures,
                          covers=list(COVERS))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--compile-only", action="store_true")
    parser.add_argument("--part", default="0/1", help="K/N: every N-th cell from the K-th")
    parser.add_argument("--families", default="", help="comma-separated DxG, default all")
    parser.add_argument("--max-kv-gb", type=float, default=1.1)
    parser.add_argument("--off-grid", type=int, default=0, help="time N seeded shapes off the grid instead")
    parser.add_argument("--evidence", type=Path, help="also write the run as a benchmark artifact (inside the checkout)")
    parser.add_argument("--id", default="routing-off-grid-h200", help="the artifact's id")
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--skip", type=Path, nargs="*", default=[], help="earlier outputs whose cells are not re-run")
    args = parser.parse_args(argv)
    chosen = [tuple(int(v) for v in f.split("x")) for f in args.families.split(",") if f] or None
    part, parts = (int(v) for v in args.part.split("/"))
    done = {row["name"] for path in args.skip if path.exists() for row in json.loads(path.read_text())["rows"]}
    grid = off_grid(args.off_grid, args.max_kv_gb) if args.off_grid else cells(args.max_kv_gb, chosen)
    grid = [shape for shape in grid if shape.name not in done]
    if args.compile_only:
        # The smallest cell of each (D, G) family compiles the family's routes.
        grid = sorted({(s.head_dim, s.group): s for s in reversed(grid)}.values(), key=lambda s: s.name)
    grid = grid[part::parts]
    if args.list:
        for shape in grid:
            print(shape.name, f"{shape.kv_bytes / 1e6:.1f} MB")
        print(f"{len(grid)} cells")
        return 0
    result = {"command": " ".join(sys.argv), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "splits": list(SPLITS), "replays": args.replays, "seed": args.seed, "rows": []}
    for shape in grid:
        start = time.perf_counter()
        row = measure(shape, seed=args.seed, replays=args.replays, compile_only=args.compile_only)
        row["wall_s"] = round(time.perf_counter() - start, 2)
        result["rows"].append(row)
        print(f"{shape.name}: {row['wall_s']} s", flush=True)
        if args.out:
            args.out.write_text(json.dumps(result, indent=1) + "\n")
    if args.evidence and not args.compile_only:
        from gates.evidence.artifacts import parse_artifact

        text = json.dumps(evidence(result, args.id), indent=1, ensure_ascii=False) + "\n"
        parse_artifact(text.encode("utf-8"), str(args.evidence))  # the evidence schema, before anything is written
        args.evidence.write_text(text, encoding="utf-8")
        metrics = json.loads(text)["results"]["metrics"]
        print(f"heuristic within {WITHIN}x of the best own route on {metrics['heuristic_rows_within_own']} of "
              f"{metrics['shapes']} (worst {metrics['heuristic_worst_to_best_own']:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
