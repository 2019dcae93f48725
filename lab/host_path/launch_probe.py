"""One H200 call: host time per decode call, which launch path ran and why, and the guard candidate.

    python -m lab.host_path.launch_probe --out $OUT/host-path.json

Per shape (the serving issue's five, and three more model shapes), in one process:
1. every entry point as it ships, `DecodeAttention` and torch SDPA: host microseconds per call
   (`validation.bench.host_overhead.host_time_us`: 300 calls without synchronization, median
   of 15 rounds), and per launch of each plan whether it replays the recorded direct launch,
   and where it does not, the first check of `launcher._direct_launch` that refused it;
2. the same entry points through `guarded_path.GuardedPath` (plans by scalars, one C++ guard):
   host time, and its output against the shipped path's, bit for bit;
3. eager (100 back-to-back calls between events) and graph-replay time of the layer, the
   guarded split call and SDPA;
4. the parts of one guarded split call (guard check, pointer alignment,
   launch hooks, current device, the launch objects' calls).
Table last; JSON after every shape.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from kernels.decode_attention import api, launcher
from lab.host_path.guarded_path import GuardedPath

SHAPES = ((1, 32, 8, 128, 32768), (1, 24, 4, 256, 20688), (4, 8, 1, 128, 32768), (16, 40, 8, 128, 4096),
          (64, 32, 8, 128, 2048), (1, 14, 2, 64, 32768), (8, 32, 8, 128, 8192), (1, 32, 8, 128, 131072))
PAGE = 16
REFUSALS: list = []


def log(msg):
    print(f"[host-path {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _explain(kernel, grid, args, options, compiled, picks, keyword_tensors=None):
    """The first condition of `_direct_launch` that does not hold, or None when all hold."""
    if compiled is None:
        return "Triton returned no compiled kernel"
    if launcher.launch_hooks_installed():
        return "a launch hook is installed"
    recorded = launcher._record(kernel, grid, args, options, compiled)
    if recorded is None:
        return "recording: no launcher attribute, another compiled kernel, or not exactly one call"
    call, _ = recorded
    g0, g1, g2, stream, function, packed, metadata, enter_hook, exit_hook, *kernel_args = call
    if (g0, g1, g2) != tuple(grid) + (1,) * (3 - len(grid)):
        return f"grid {(g0, g1, g2)} != {grid}"
    if launcher._hook_active(enter_hook) or launcher._hook_active(exit_hook):
        return "hook chain active in the recorded call"
    if function is not getattr(compiled, "function", None):
        return "function handle differs"
    params = list(zip(kernel.arg_names, (p.is_constexpr for p in kernel.params)))
    non_constexpr = sum(1 for _, c in params if not c)
    if len(kernel_args) not in (len(params), non_constexpr):
        return f"{len(kernel_args)} launcher arguments, kernel has {len(params)} ({non_constexpr} not constexpr)"
    return "a value or the stream differs from the recorded call"


def _watch_direct_launches():
    original = launcher._direct_launch

    def watched(kernel, grid, args, options, compiled, picks, keyword_tensors=None):
        result = original(kernel, grid, args, options, compiled, picks, keyword_tensors)
        if result is None:
            try:
                reason = _explain(kernel, grid, args, options, compiled, picks, keyword_tensors)
            except Exception as exc:  # noqa: BLE001 - a probe reports, it does not stop
                reason = f"{type(exc).__name__}: {exc}"
            REFUSALS.append({"kernel": getattr(kernel, "__name__", str(kernel)), "grid": list(grid),
                             "options": sorted(k for k in options), "reason": reason})
        return result

    launcher._direct_launch = watched


def host_us(fn, calls=300, rounds=15):
    from validation.bench.host_overhead import host_time_us

    return host_time_us(fn, calls=calls, rounds=rounds, cuda=True)["median_us"]


def inputs(shape):
    from kernels import LayerWorkspace
    from kernels.decode_layer import DecodeAttention

    batch, hq, hkv, dim, tokens = shape
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(batch, hq, dim, generator=gen).to("cuda", torch.bfloat16)
    k = torch.randn(batch, hkv, tokens, dim, generator=gen).to("cuda", torch.bfloat16)
    v = torch.randn(batch, hkv, tokens, dim, generator=gen).to("cuda", torch.bfloat16)
    pages = -(-tokens // PAGE)
    cap = pages * PAGE
    if cap != tokens:
        k = torch.nn.functional.pad(k, (0, 0, 0, cap - tokens))
        v = torch.nn.functional.pad(v, (0, 0, 0, cap - tokens))
    kp = k.reshape(batch, hkv, pages, PAGE, dim).permute(0, 2, 1, 3, 4).reshape(batch * pages, hkv, PAGE, dim).contiguous()
    vp = v.reshape(batch, hkv, pages, PAGE, dim).permute(0, 2, 1, 3, 4).reshape(batch * pages, hkv, PAGE, dim).contiguous()
    table = torch.arange(batch * pages, dtype=torch.int32, device="cuda").view(batch, pages)
    visible = torch.full((batch,), tokens, dtype=torch.int32, device="cuda")
    layer = DecodeAttention(hq, hkv, dim, max_batch=batch, dtype=torch.bfloat16, device="cuda", split_kv=True)
    route = layer.route_for(batch, 1, tokens)
    splits = route.num_splits if route.is_split else 16
    ws = LayerWorkspace(batch, 1, hq, dim, splits, "cuda")
    return dict(q=q, k=k, v=v, kp=kp, vp=vp, table=table, visible=visible, layer=layer, route=route, splits=splits,
                ws=ws, tokens=tokens)


def entry_calls(x, guarded: GuardedPath, outs: dict):
    import kernels

    q, k, v, kp, vp, table, vis, ws, n = (x[name] for name in ("q", "k", "v", "kp", "vp", "table", "visible", "ws",
                                                                 "splits"))
    o = {name: torch.full_like(q, float("nan")) for name in ("split", "paged_split", "single", "paged_single", "layer",
                                                              "g_split", "g_paged_split", "g_single", "g_paged_single")}
    outs.update(o)
    q4 = q.unsqueeze(2)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return {
        "split": lambda: kernels.attention_decode_splitkv(q, k, v, vis, num_splits=n, workspace=ws, out=o["split"]),
        "paged_split": lambda: kernels.attention_decode_paged_splitkv(q, kp, vp, table, vis, num_splits=n,
                                                                      workspace=ws, out=o["paged_split"]),
        "single": lambda: kernels.attention_decode(q, k, v, vis, out=o["single"]),
        "paged_single": lambda: kernels.attention_decode_paged(q, kp, vp, table, vis, out=o["paged_single"]),
        "layer": lambda: x["layer"](q, k, v, vis, max_visible_tokens=x["tokens"], out=o["layer"]),
        "sdpa": lambda: sdpa(q4, k, v, enable_gqa=True),
        "g_split": lambda: guarded.splitkv(q, k, v, vis, num_splits=n, workspace=ws, out=o["g_split"]),
        "g_paged_split": lambda: guarded.paged_splitkv(q, kp, vp, table, vis, num_splits=n, workspace=ws,
                                                       out=o["g_paged_split"]),
        "g_single": lambda: guarded.single(q, k, v, vis, out=o["g_single"]),
        "g_paged_single": lambda: guarded.paged(q, kp, vp, table, vis, out=o["g_paged_single"]),
    }


def parts(x, guarded: GuardedPath) -> dict:
    """Microseconds of the pieces of one guarded split call (10,000 calls each, median of 7)."""
    q, k, v, vis, ws = x["q"], x["k"], x["v"], x["visible"], x["ws"]
    out = torch.empty_like(q)
    guarded.splitkv(q, k, v, vis, num_splits=x["splits"], workspace=ws, out=out)
    guarded.splitkv(q, k, v, vis, num_splits=x["splits"], workspace=ws, out=out)
    entry = next(e for lst in guarded._plans.values() for e in lst if not e.plan.finalize and not e.plan.paged)
    plan = entry.plan
    tensors = (q, k, v, vis, vis, out, ws.partial_acc, ws.partial_max, ws.partial_sum, ws.split_counters, vis, vis)

    def per_call(fn, n=200):  # rounds short enough that the launch queue never fills
        samples = []
        for _ in range(25):
            torch.cuda.synchronize()
            start = time.perf_counter_ns()
            for _ in range(n):
                fn()
            samples.append((time.perf_counter_ns() - start) / n / 1e3)
        torch.cuda.synchronize()
        return statistics.median(samples)

    result = {
        "guard_check": per_call(lambda: entry.guard.check(q, k, v, vis, out)),
        "alignment": per_call(lambda: (q.data_ptr() | k.data_ptr() | v.data_ptr() | vis.data_ptr() | out.data_ptr())
                              & 15),
        "launch_hooks_installed": per_call(launcher.launch_hooks_installed),
        "current_device": per_call(torch.cuda.current_device),
        "plan_key": per_call(lambda: api._plan_key(api._SPLIT, q, k, v, None, vis, out, ws, x["splits"], None, None,
                                                   None)),
        "partial_launch": per_call(lambda: plan.partial(tensors)),
        "partial_direct_replay": per_call(lambda: plan.partial.direct(tensors)),
        "get_stream": per_call(lambda: launcher.stream_source()[0](0)),
    }
    if plan.combine is not None:
        result["combine_launch"] = per_call(lambda: plan.combine(tensors))
    return result


def main(argv=None) -> int:
    from validation.bench.timing import time_eager, time_graph_replay

    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--shapes", type=int, default=len(SHAPES), help="the first N shapes only")
    p.add_argument("--evidence", type=Path, help="also write the profile artifact `decode-host-path-h200` here")
    p.add_argument("--from-report", action="store_true", help="--out is a finished report: only write --evidence")
    args = p.parse_args(argv)
    if args.from_report:
        import validation.bench.host_overhead  # noqa: F401 - bound as the measuring process bound them
        import validation.bench.timing  # noqa: F401

        write_evidence(json.loads(args.out.read_text()), args.evidence)
        return 0
    _watch_direct_launches()
    report = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "shapes": []}
    import triton

    report["triton"] = triton.__version__
    for shape in SHAPES[:args.shapes]:
        api._PLANS.clear()
        REFUSALS.clear()
        x = inputs(shape)
        guarded = GuardedPath()
        outs: dict = {}
        calls = entry_calls(x, guarded, outs)
        row = {"shape": list(shape), "route": x["route"].path, "num_splits": x["splits"], "host_us": {}}
        for name, fn in calls.items():
            fn()
        torch.cuda.synchronize()
        pairs = (("split", "g_split"), ("paged_split", "g_paged_split"), ("single", "g_single"),
                 ("paged_single", "g_paged_single"))
        row["bitwise_guarded_equals_project"] = {a: bool(torch.equal(outs[a], outs[b])) for a, b in pairs}
        row["bitwise_split_equals_paged"] = bool(torch.equal(outs["split"], outs["paged_split"]))
        for name, fn in calls.items():
            row["host_us"][name] = host_us(fn)
        row["guarded_stats"] = dict(guarded.stats)
        row["plans"] = [{"paged": plan.paged, "single_pass": plan.finalize, "partial_direct": plan.partial.is_direct,
                         "combine": None if plan.combine is None else plan.combine.is_direct}
                        for plan in api._PLANS.values()]
        row["refusals"] = list(REFUSALS)
        row["eager_us"], row["graph_us"] = {}, {}
        for name in ("layer", "g_split", "sdpa"):
            row["eager_us"][name] = statistics.median(time_eager(calls[name]).samples_us)
            row["graph_us"][name] = statistics.median(time_graph_replay(calls[name], flush_l2=False).samples_us)
        row["parts_us"] = parts(x, guarded)
        report["shapes"].append(row)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        log(f"{shape}: {json.dumps(row['host_us'])} refusals {len(REFUSALS)}")
        del x, calls, outs
        torch.cuda.empty_cache()
    names = ("split", "paged_split", "single", "paged_single", "layer", "sdpa", "g_split", "g_paged_split", "g_single",
             "g_paged_single")
    print("host us per call | " + " | ".join(names) + " | layer e/g | g_split e/g | sdpa e/g | direct | bits")
    for row in report["shapes"]:
        direct = all(p["partial_direct"] and p["combine"] in (None, True) for p in row["plans"])
        cells = " | ".join(f"{row['host_us'][n]:.1f}" for n in names)
        eg = " | ".join(f"{row['eager_us'][n]:.1f}/{row['graph_us'][n]:.1f}" for n in ("layer", "g_split", "sdpa"))
        print(f"{row['shape']} {row['route']}:{row['num_splits']} | {cells} | {eg} | {direct} | "
              f"{all(row['bitwise_guarded_equals_project'].values())}")
        for r in row["refusals"]:
            print(f"   not direct: {r['kernel']} grid {r['grid']}: {r['reason']}")
    for row in report["shapes"]:
        if "parts_us" in row:
            print(row["shape"], {k: round(v, 2) for k, v in row["parts_us"].items()})
    if args.evidence:
        write_evidence(report, args.evidence)
    return 0


def write_evidence(report: dict, path: Path) -> None:
    """The profile artifact: per shape `host_us.<entry>`, `eager_us`, `graph_us`, `parts_us`, keyed by shape."""
    import hashlib

    from validation.artifacts import build_artifact

    shapes = {"b{}-hq{}-hkv{}-d{}-s{}".format(*row["shape"]): row for row in report["shapes"]}
    metrics = {f"{name}.host_us.{entry}": us for name, row in shapes.items() for entry, us in row["host_us"].items()}
    results = {"tool": "time.perf_counter_ns around host loops, cuda events, cuda-graph replay", "metrics": metrics,
               "method": "host_us: median over 15 rounds of 300 calls without synchronization, per call; eager_us: "
                         "100 back-to-back calls between cuda events; graph_us: cuda-graph replay; parts_us: "
                         "rounds of 200 calls with a synchronization between rounds",
               "torch": report["torch"], "triton": report["triton"], "shapes": shapes}
    fixtures = {"shapes": hashlib.sha256(json.dumps(sorted(shapes)).encode()).hexdigest()}
    artifact = build_artifact(artifact_id="decode-host-path-h200", kind="profile", results=results, fixtures=fixtures)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(artifact, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
