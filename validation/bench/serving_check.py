"""One H200 run for the serving work: correctness, host time per call, eager and graph timings.

In order, each step in the same process:
1. correctness: a quick subset of the model cases against the fp64 oracle (every route),
   the bitwise anchors split(1) == single pass and paged == contiguous, the direct launch
   == Triton's launch bit for bit, and out-of-range page ids (masked, finite);
2. host time per call of every entry point, `DecodeAttention` and torch SDPA (median us,
   no synchronization), and whether the plans launch directly;
3. eager and CUDA-graph timings of ours, the single pass and SDPA on a handful of
   model-matrix rows;
then a short table, and a JSON artifact under the output folder. Exit 1 if a check failed.

    python -m validation.bench.serving_check .out/serving
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

ROWS = ("Llama-3.1-8B-tp1-b1-32k", "Llama-3.1-8B-tp1-b16-8k", "Qwen2.5-14B-tp1-b16-8k", "Qwen2.5-7B-tp1-b4-32k",
        "Llama-3.1-405B-tp8-b4-32k", "GLM-4-9B-tp1-b1-128k", "Gemma-2-9B-tp1-b4-8k", "Phi-3-mini-4k-tp1-b16-2k")


def log(msg):
    print(f"[serving {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def correctness() -> dict:
    import kernels
    from kernels.decode_attention import api
    from kernels.decode_attention.reference import decode_attention_reference
    from validation.anchors import bytes_equal
    from validation.fixtures import build_fixture
    from validation.metrics import compare
    from validation.oracle import decode_attention_fp64
    from validation.routes import NUMERIC_ROUTES, Route, run_route
    from validation.shapes import CPU_CASES, model_cases
    from validation.tolerances import TORCH_DTYPES, tolerance_for, violations

    failures, checked = [], 0
    cases = CPU_CASES[-4:] + model_cases()[::3]
    for case in cases:
        for dtype in ("bf16", "fp16"):
            fx = build_fixture(case, dtype, "cuda")
            oracle = decode_attention_fp64(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens)
            same_dtype = compare(decode_attention_reference(fx.q.cpu(), fx.k_cache.cpu(), fx.v_cache.cpu(),
                                                            fx.visible_tokens.cpu(), compute_dtype=TORCH_DTYPES[dtype]),
                                 oracle)
            for route in NUMERIC_ROUTES:
                out = run_route(fx, route)
                bad = violations(compare(out, oracle), same_dtype, tolerance_for(dtype), oracle.abs().max().item())
                if bad:
                    failures.append(f"{case.id}-{dtype}-{route.id}: {'; '.join(bad)}")
                checked += 1
            single = run_route(fx, Route(paged=False))
            if not bytes_equal(run_route(fx, Route(paged=False, num_splits=1)), single):
                failures.append(f"{case.id}-{dtype}: A1 split(1) != single pass")
            for splits in (None, 5):
                if not bytes_equal(run_route(fx, Route(paged=True, num_splits=splits)),
                                   run_route(fx, Route(paged=False, num_splits=splits))):
                    failures.append(f"{case.id}-{dtype}: A2 paged != contiguous at {splits}")
            # the recorded direct launch against Triton's own launch path, bit for bit
            direct = run_route(fx, Route(paged=True, num_splits=5))
            saved = dict(api._PLANS)
            for plan in api._PLANS.values():
                for launch in (plan.partial, plan.combine):
                    if launch is not None:
                        launch.direct = None
            triton_path = run_route(fx, Route(paged=True, num_splits=5))
            api._PLANS.clear()
            api._PLANS.update(saved)
            if not bytes_equal(direct, triton_path):
                failures.append(f"{case.id}-{dtype}: direct launch != Triton's launch")
    # out-of-range page ids: masked, finite, on every paged entry point
    fx = build_fixture(cases[0], "bf16", "cuda")
    table = fx.block_table.clone()
    table[0, 0] = fx.k_pages.shape[0] + 1000
    table[-1, 0] = -1
    for name, call in (("paged", lambda: kernels.attention_decode_paged(fx.q, fx.k_pages, fx.v_pages, table,
                                                                        fx.visible_tokens)),
                       ("paged-split", lambda: kernels.attention_decode_paged_splitkv(
                           fx.q, fx.k_pages, fx.v_pages, table, fx.visible_tokens, num_splits=4))):
        out = call()
        torch.cuda.synchronize()
        if not torch.isfinite(out).all():
            failures.append(f"out-of-range page ids: {name} output not finite")
    return {"checked_routes": checked, "cases": [c.id for c in cases], "failures": failures,
            "passed": not failures}


def timings(rows=ROWS) -> list[dict]:
    from kernels import LayerWorkspace, attention_decode
    from kernels.decode_layer import DecodeAttention

    from .fixtures import make_inputs
    from .shapes import select
    from .timing import time_eager, time_graph_replay

    results = []
    for shape in select(list(rows), "models"):
        x = make_inputs(shape, seed=1)
        layer = DecodeAttention(shape.num_q_heads, shape.num_kv_heads, shape.head_dim, max_batch=shape.batch,
                                device="cuda", split_kv=True)
        out_l, out_s = torch.empty_like(x.q), torch.empty_like(x.q)
        route = layer.route_for(shape.batch, 1, shape.context)
        q4 = x.q.unsqueeze(2)
        calls = {
            "layer": lambda: layer(x.q, x.k, x.v, x.visible_tokens, max_visible_tokens=shape.context, out=out_l),
            "single_pass": lambda: attention_decode(x.q, x.k, x.v, x.visible_tokens, out=out_s),
            "sdpa": lambda: torch.nn.functional.scaled_dot_product_attention(q4, x.k, x.v, enable_gqa=True),
        }
        row = {"shape": shape.name, "label": shape.label(), "route": route.path, "num_splits": route.num_splits}
        for name, fn in calls.items():
            try:
                graph = time_graph_replay(fn, flush_l2=not shape.warm_l2).median_us
            except Exception as exc:  # SDPA may not capture on some builds: keep its eager time
                graph = None
                row[f"{name}_graph_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            row[name] = {"graph_us": graph, "eager_us": time_eager(fn).median_us}
        log(f"  {shape.name}: " + ", ".join(f"{k} {v['graph_us'] or float('nan'):.1f}/{v['eager_us']:.1f}"
                                           for k, v in row.items() if isinstance(v, dict)))
        results.append(row)
        del x, layer
        torch.cuda.empty_cache()
    return results


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m validation.bench.serving_check OUT_DIR", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: needs a CUDA device", file=sys.stderr)
        return 2
    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    from .environment import environment
    from .host_overhead import format_result, measure

    artifact = {"kind": "serving-check", "environment": environment()}
    log("correctness")
    artifact["correctness"] = correctness()
    log(f"  {artifact['correctness']['checked_routes']} routes, failures: {artifact['correctness']['failures']}")
    log("host time per call")
    artifact["host_overhead"] = measure(device="cuda", stub=False)
    artifact["host_overhead_stubbed"] = measure(device="cuda", stub=True)
    log("eager and graph timings")
    artifact["timings"] = timings()
    path = out_dir / "serving-check-h200.json"
    path.write_text(json.dumps(artifact, indent=1) + "\n")
    print(format_result(artifact["host_overhead"]))
    print(f"direct-launch plans: {artifact['host_overhead'].get('direct_launch_plans')} of "
          f"{artifact['host_overhead'].get('plans')}")
    print(format_result(artifact["host_overhead_stubbed"]))
    print(f"{'shape':32s} {'route':12s} {'layer g/e us':>16s} {'single g/e us':>16s} {'sdpa g/e us':>16s}")
    for r in artifact["timings"]:
        cells = [f"{(r[k]['graph_us'] or float('nan')):7.1f}/{r[k]['eager_us']:7.1f}" for k in ("layer", "single_pass", "sdpa")]
        print(f"{r['shape']:32s} {r['route'] + str(r['num_splits']):12s} " + " ".join(f"{c:>16s}" for c in cells))
    print(f"correctness: {'PASS' if artifact['correctness']['passed'] else 'FAIL'}; artifact {path}")
    return 0 if artifact["correctness"]["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
