"""`python -m lab.quantized.measure`: the project's route and the lab variants over 8-bit caches
on the review's bar shapes, on one H200; correctness first, then CUDA-graph replay; JSON + table.

    python -m lab.quantized.measure --out $OUT/quant-lab.json --budget-s 220
    python -m lab.quantized.measure --compile-only --worker 3/12     # warm Triton's cache (no timing)
    TRITON_INTERPRET=1 python -m lab.quantized.measure --smoke --out /tmp/smoke.json   # CPU, tiny shapes

Per shape: bf16, int8 and FP8 through the project's split route (`attention_decode_splitkv`)
at splits {h/2, h, 2h, 4h} (h = the layer's heuristic), and each lab variant at the same counts
(its best is reported; "vs bf16" is against bf16 at h, the route as it ships); the read
pass of the bytes an 8-bit call reads (`validation.bench.read_kernel`, timed the same way).
Every output is checked against fp64 attention over the dequantized cache before it is timed
(the bf16 / fp16 bound for every route but the FP8-dot variants, which carry their own);
its error against fp64 attention over the bf16 cache is recorded beside it. The JSON is
written after every shape; past `--budget-s` no new timing starts (the artifact says so).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from validation.bench.shapes import BenchShape

SMOKE = False
INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


@dataclass(frozen=True)
class Shape(BenchShape):
    bar: float = 1.0  # the review's bar for the faster 8-bit format against bf16

    def label(self) -> str:
        r = f",R={self.rows}" if self.rows > 1 else ""
        return f"({self.batch},{self.num_q_heads},{self.num_kv_heads},{self.head_dim},{self.context}{r})"


BAR_SHAPES = (  # in order of priority: a run out of budget loses the last ones
    Shape("llama8b-b1-32k", 1, 32, 8, 128, 32768, bar=1.65),
    Shape("llama8b-b1-128k", 1, 32, 8, 128, 131072, bar=1.75),
    Shape("h24kv4d256-b1-20k-r16", 1, 24, 4, 256, 20688, rows=16, bar=1.0),
    Shape("llama8b-b8-8k", 8, 32, 8, 128, 8192, bar=1.75),
    Shape("llama70b-tp8-b4-32k", 4, 8, 1, 128, 32768, bar=1.5),
    Shape("h24kv4d256-b1-20k", 1, 24, 4, 256, 20688, bar=1.5),
    Shape("llama8b-b1-64k-r4", 1, 32, 8, 128, 65536, rows=4, bar=1.5),
)
SMOKE_SHAPES = (
    Shape("smoke-a", 1, 4, 2, 64, 300, bar=1.0),
    Shape("smoke-r3", 2, 6, 2, 40, 200, rows=3, bar=1.0),
)
LAB_VARIANTS = {  # ":m64" pads the group to 64 rows: wgmma, the 8-bit tile converted once into shared memory, real FP8 dots
    "int8": ("lab-ref", "vt", "cvt16", "vt-cvt16", "cvt16:m64"),
    "fp8": ("lab-ref", "vt", "cvt16", "vt-cvt16", "vt-fp8qk", "vt-fp8dot", "cvt16:m64", "vt-fp8dot:m64"),
}
FP8_DOT_REL_L2 = 0.125


def progress(msg: str) -> None:
    print(f"[quant-lab {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def device() -> str:
    return "cpu" if INTERPRET else "cuda"


def make_inputs(shape: Shape, seed: int):
    """q, K, V (bf16, or fp16 on the interpreter), visible tokens; capacity a multiple of 16."""
    dtype = torch.float16 if INTERPRET else torch.bfloat16
    dev = device()
    gen = torch.Generator(device=dev).manual_seed(seed)
    cap = -(-shape.context // 16) * 16
    q_shape = (shape.batch, shape.num_q_heads, shape.head_dim) if shape.rows == 1 else \
        (shape.batch, shape.rows, shape.num_q_heads, shape.head_dim)
    q = torch.randn(q_shape, generator=gen, device=dev, dtype=dtype)
    kv = (shape.batch, shape.num_kv_heads, cap, shape.head_dim)
    k = torch.randn(kv, generator=gen, device=dev, dtype=dtype)
    v = torch.randn(kv, generator=gen, device=dev, dtype=dtype)
    visible = torch.full((shape.batch,), shape.context, dtype=torch.int32, device=dev)
    return q, k, v, visible


def dense_fp64(q, k, v, visible):
    from validation.bench.correctness import _dense_fp64

    return _dense_fp64(q, k, v, visible)


def compare(out, ref, ref_bf16) -> dict:
    o = out.double().reshape(-1, out.shape[-1])
    r = ref.double().reshape(-1, ref.shape[-1]).to(o.device)
    rb = ref_bf16.double().reshape(-1, ref.shape[-1]).to(o.device)
    finite = bool(torch.isfinite(o).all())
    rel = ((o - r).norm() / r.norm()).item() if finite else float("inf")
    rel_b = ((o - rb).norm() / rb.norm()).item() if finite else float("inf")
    cos = torch.nn.functional.cosine_similarity(o, r, dim=-1).min().item() if finite else -1.0
    return {"rel_l2": rel, "min_cosine": cos, "rel_l2_vs_bf16_cache": rel_b, "finite": finite}


def time_us(fn, cold: bool) -> float:
    if INTERPRET:  # the smoke: wall time of one call, to exercise the path
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e6
    from validation.bench.timing import time_graph_replay

    return time_graph_replay(fn, flush_l2=cold, replays=15).median_us


def read_pass_us(nbytes: int, cold: bool) -> float | None:
    if INTERPRET:
        return None
    from validation.bench.read_kernel import STREAM_READ, ReadPass

    reader = ReadPass(nbytes, **STREAM_READ)
    us = time_us(reader, cold)
    reader.check()
    return us


def kv_bytes(shape: Shape, fmt: str) -> int:
    tokens = shape.batch * shape.num_kv_heads * shape.context
    if fmt == "bf16":
        return 4 * tokens * shape.head_dim
    if fmt == "int8":
        return 2 * tokens * (shape.head_dim + 4)
    return 2 * tokens * shape.head_dim + 8 * shape.num_kv_heads


def split_counts(h: int, explicit: list[int] | None) -> list[int]:
    if explicit:
        return explicit
    return sorted({max(1, h // 2), h, min(256, 2 * h), min(256, 4 * h)})


def project_call(q, cache, visible, splits, out):
    """The project's split route through its public entry point, with a preallocated workspace."""
    from kernels import attention_decode_splitkv
    from kernels.decode_attention.workspace import LayerWorkspace

    b = q.shape[0]
    rows = q.shape[1] if q.dim() == 4 else 1
    ws = LayerWorkspace(b, rows, q.shape[-2], q.shape[-1], splits, q.device)
    k, v, scales = cache
    return lambda: attention_decode_splitkv(q, k, v, visible, num_splits=splits, workspace=ws, out=out, **scales)


def jobs_for(shape: Shape, formats, splits) -> list[tuple]:
    """(format, route, splits) of a shape, in timing order."""
    jobs = [("bf16", "project", n) for n in splits] if "bf16" in formats else []
    for fmt in (f for f in formats if f != "bf16"):
        jobs += [(fmt, "project", n) for n in splits]
        jobs += [(fmt, var, n) for var in LAB_VARIANTS[fmt] for n in splits]
    return jobs


def run_shape(shape: Shape, args, deadline: float, worker: set | None) -> dict:
    from kernels.decode_layer import layer_num_splits

    from .lab_quantize import quantize_cache
    from .lab_route import LabSplitDecode, variant

    num_sms = 132 if INTERPRET else torch.cuda.get_device_properties(0).multi_processor_count
    h = layer_num_splits(shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.batch, shape.rows,
                         shape.context, num_sms=num_sms)
    splits = split_counts(h, args.splits)
    formats = args.formats
    q, k, v, visible = make_inputs(shape, args.seed)
    cold = 4 * shape.batch * shape.num_kv_heads * shape.context * shape.head_dim >= 64e6
    result = {"shape": shape.name, "label": shape.label(), "bar": shape.bar, "heuristic_splits": h, "splits": splits,
              "cold_l2": cold, "rows": [], "read_pass_us": {}}
    ref_bf16 = None if args.compile_only else dense_fp64(q, k, v, visible)
    jobs = jobs_for(shape, formats, splits)
    if worker is not None:  # one worker compiles all split counts of a (shape, format, route): the later ones hit its cache
        jobs = [j for j in jobs if (shape.name, j[0], j[1]) in worker]
    caches = {}
    for fmt, route, n in jobs:
        if time.time() > deadline:
            result["rows"].append({"format": fmt, "route": route, "num_splits": n, "skipped": "budget"})
            continue
        row = {"format": fmt, "route": route, "num_splits": n}
        try:
            v_trans = route != "project" and variant(route).v_trans
            key = (fmt, v_trans)
            if key not in caches:
                if fmt == "bf16":
                    caches[key] = (k, v, {}), None
                else:
                    lab = quantize_cache(k, v, fmt, v_trans=v_trans)
                    ref = None if args.compile_only else dense_fp64(q, *lab.dequantized(), visible)
                    caches[key] = lab, ref
                    if not args.compile_only and fmt not in result["read_pass_us"]:
                        result["read_pass_us"][fmt] = read_pass_us(kv_bytes(shape, fmt), cold)
            cache, ref = caches[key]
            out = torch.empty_like(q)
            if route == "project":
                triple = cache if fmt == "bf16" else (cache.k, cache.v, {"k_scale": cache.k_scale,
                                                                          "v_scale": cache.v_scale})
                fn = project_call(q, triple, visible, n, out)
                bound = 2 ** -6
            else:
                lab_route = LabSplitDecode(route, q, cache, visible, num_splits=n, out=out)
                row["config"] = lab_route.config
                fn = lab_route
                bound = FP8_DOT_REL_L2 if variant(route).fp8_dot else 2 ** -6
            fn()
            if args.compile_only:
                row["compiled"] = True
                result["rows"].append(row)
                continue
            out.fill_(float("nan"))
            fn()
            check = compare(out, ref_bf16 if fmt == "bf16" else ref, ref_bf16)
            check["bound"] = bound
            check["passed"] = check["finite"] and check["rel_l2"] <= bound
            row["correctness"] = check
            if check["passed"]:
                row["median_us"] = time_us(fn, cold)
            progress(f"  {shape.name} {fmt:5} {route:10} splits {n:3}: "
                     f"{row.get('median_us', float('nan')):9.2f} us  rel_l2 {check['rel_l2']:.2e}"
                     f"{'' if check['passed'] else '  FAILED'}")
        except Exception as exc:  # recorded, not fatal: the table shows it
            row["error"] = f"{type(exc).__name__}: {str(exc)[:500]}"
            progress(f"  {shape.name} {fmt} {route} {n}: error {row['error'][:200]}")
        result["rows"].append(row)
    del caches, q, k, v
    gc.collect()
    if not INTERPRET:
        torch.cuda.empty_cache()
    return result


def summarize(shape_result: dict) -> list[dict]:
    """Best time per (format, route) and speed against bf16; the project at its heuristic count too."""
    rows = [r for r in shape_result["rows"] if "median_us" in r]
    bf16_rows = [r for r in rows if r["format"] == "bf16"]
    # the bf16 reference is the project's route as it ships: the layer's split count (else the best tried)
    bf16 = next((r["median_us"] for r in bf16_rows if r["num_splits"] == shape_result["heuristic_splits"]),
                min((r["median_us"] for r in bf16_rows), default=None))
    best = {}
    for r in rows:
        key = (r["format"], r["route"])
        if key not in best or r["median_us"] < best[key]["median_us"]:
            best[key] = r
    out = []
    for (fmt, route), r in best.items():
        heur = next((x["median_us"] for x in rows if x["format"] == fmt and x["route"] == route
                     and x["num_splits"] == shape_result["heuristic_splits"]), None)
        read = shape_result["read_pass_us"].get(fmt)
        out.append({"shape": shape_result["shape"], "format": fmt, "route": route, "best_splits": r["num_splits"],
                    "best_us": r["median_us"], "heuristic_us": heur,
                    "speed_vs_bf16": None if not bf16 else bf16 / r["median_us"],
                    "of_read_pass": None if not read else read / r["median_us"],
                    "rel_l2": r["correctness"]["rel_l2"], "rel_l2_vs_bf16_cache": r["correctness"]["rel_l2_vs_bf16_cache"]})
    return out


def format_table(artifact: dict) -> str:
    head = ("shape", "fmt", "route", "splits", "best us", "heur us", "vs bf16", "bar", "of read", "rel_l2", "vs bf16 cache")
    lines = [head]
    for s in artifact["shapes"]:
        for r in summarize(s):
            f = lambda x, p="{:.2f}": "-" if x is None else p.format(x)  # noqa: E731
            lines.append((s["shape"], r["format"], r["route"], str(r["best_splits"]), f(r["best_us"]),
                          f(r["heuristic_us"]), f(r["speed_vs_bf16"], "{:.2f}x"), f"{s['bar']:.2f}x",
                          f(r["of_read_pass"], "{:.0%}"), f"{r['rel_l2']:.1e}", f"{r['rel_l2_vs_bf16_cache']:.1e}"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    how = ("INTERPRETER SMOKE: times are the CPU interpreter's wall time of one call, meaningless"
           if artifact["environment"]["interpret"] else "time = CUDA-graph replay (median)")
    text = [f"{how}; best over the split counts tried; of read = read pass of the format's bytes / time"]
    text += ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
             for line in lines]
    bad = [f"{s['shape']}:{r['format']}:{r['route']}:{r['num_splits']}" for s in artifact["shapes"] for r in s["rows"]
           if "error" in r or ("correctness" in r and not r["correctness"]["passed"])]
    text.append(f"correctness failures / errors: {', '.join(bad) if bad else 'none'}")
    return "\n".join(text)


def environment() -> dict:
    import triton

    env = {"torch": torch.__version__, "triton": triton.__version__, "interpret": INTERPRET}
    if not INTERPRET:
        p = torch.cuda.get_device_properties(0)
        env.update({"device": p.name, "sm_count": p.multi_processor_count})
    try:
        from validation.bench.environment import git_commit

        env["commit"] = git_commit()
    except Exception:  # a copy without git metadata
        env["commit"] = None
    return env


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.quantized.measure", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--shapes", nargs="*", help="names of BAR_SHAPES (default: all, in priority order)")
    p.add_argument("--formats", default="bf16,int8,fp8")
    p.add_argument("--splits", type=lambda s: [int(x) for x in s.split(",")], help="split counts instead of {h/2,h,2h,4h}")
    p.add_argument("--budget-s", type=float, default=1e9, help="start no timing after this many seconds")
    p.add_argument("--compile-only", action="store_true", help="call every route once (compile), time nothing")
    p.add_argument("--worker", help="I/N: this process takes every N-th (shape, format, route) from I (with --compile-only)")
    p.add_argument("--smoke", action="store_true", help="tiny shapes; with TRITON_INTERPRET=1 on the CPU")
    p.add_argument("--seed", type=int, default=20261202)
    args = p.parse_args(argv)
    args.formats = [f for f in args.formats.split(",") if f]
    start = time.time()
    deadline = start + args.budget_s
    pool = SMOKE_SHAPES if args.smoke else BAR_SHAPES
    shapes = [s for s in pool if not args.shapes or s.name in args.shapes]
    if not shapes:
        print(f"error: no shape among {[s.name for s in pool]}", file=sys.stderr)
        return 2
    worker = None
    if args.worker:  # the (shape, format, route) groups of the whole run, dealt round-robin
        index, count = (int(x) for x in args.worker.split("/"))
        groups = [(s.name, fmt, route) for s in shapes for fmt in args.formats
                  for route in (("project",) if fmt == "bf16" else ("project",) + LAB_VARIANTS[fmt])]
        worker = set(groups[index::count])
    if not INTERPRET and not torch.cuda.is_available():
        print("error: needs a CUDA device, or TRITON_INTERPRET=1 with --smoke", file=sys.stderr)
        return 2
    artifact = {"kind": "lab benchmark: 8-bit KV cache variants", "command": " ".join(sys.argv),
                "environment": environment(), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "budget_s": args.budget_s, "complete": False, "shapes": []}
    try:
        for shape in shapes:
            progress(f"{shape.name} {shape.label()}")
            artifact["shapes"].append(run_shape(shape, args, deadline, worker))
            artifact["elapsed_s"] = round(time.time() - start, 1)
            if args.out and not args.compile_only:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(artifact, indent=1) + "\n")
    except KeyboardInterrupt:  # `timeout -s INT`: keep the shapes done, say so, print the table
        artifact["interrupted"] = True
        progress("interrupted: writing the shapes done so far")
    artifact["complete"] = not artifact.get("interrupted") and len(artifact["shapes"]) == len(shapes) and not any(
        r.get("skipped") for s in artifact["shapes"] for r in s["rows"])
    if args.compile_only:
        errors = [r for s in artifact["shapes"] for r in s["rows"] if "error" in r]
        progress(f"compiled {sum(len(s['rows']) for s in artifact['shapes'])} routes in {time.time() - start:.0f} s, "
                 f"{len(errors)} errors")
        for r in errors:
            progress(f"  error {r['format']} {r['route']} {r['num_splits']}: {r['error'][:300]}")
        return 0
    if args.out:
        try:  # what this process imported, for `lab.quantized.evidence` to bind
            from validation.artifacts import source_hashes

            artifact["sources"] = source_hashes()
        except Exception as exc:  # noqa: BLE001 - a lab run keeps its timings without the binding
            progress(f"sources not recorded: {type(exc).__name__}: {exc}")
        args.out.write_text(json.dumps(artifact, indent=1) + "\n")
    print(format_table(artifact))
    return 0


if __name__ == "__main__":
    sys.exit(main())
