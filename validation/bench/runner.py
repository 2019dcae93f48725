"""One benchmark run: ceilings, then per shape correctness first and timing after,
then the split sweep; the result is a `benchmark` evidence artifact."""

from __future__ import annotations

import gc
import sys
import time
from dataclasses import dataclass, field

import torch

from kernels.decode_layer import layer_num_splits

from . import ceilings, correctness, environment, fixtures, impls, summary
from .read_kernel import STREAM_READ, ReadPass
from .shapes import SPLIT_SWEEP, BenchShape
from .timing import time_call, time_eager
from .variants.splitkv_tuned import LaunchConfig


@dataclass
class RunOptions:
    shapes: tuple[BenchShape, ...]
    peers: list[str]
    variant_configs: list[LaunchConfig] = field(default_factory=list)
    sweep: bool = False
    sweep_variant: bool = False
    variant_split_window: bool = False
    flush_l2: bool = False
    seed: int = 20261129
    ours: str = "splitkv"
    command: str = ""
    commit: str | None = None
    compile_only: bool = False  # check every implementation once (compiling it), time nothing


def progress(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _checked(impl: impls.Impl, ref: torch.Tensor) -> dict:
    first = impl.call()
    first.fill_(float("nan"))  # preallocated outputs: an unwritten element stays NaN
    out = impl.call()
    torch.cuda.synchronize()
    return correctness.compare(out, ref)


def _row(shape: BenchShape, impl: impls.Impl, check: dict, timing, read_tbps: float, role: str, eager=None) -> dict:
    row = {"shape": shape.name, "impl": impl.name, "kind": impl.kind, "role": role,
           "num_splits": impl.num_splits, "paged": impl.paged, "config": impl.config,
           "correctness": check}
    if timing is not None:
        us = timing.median_us
        row.update({"timing": timing.to_json(), "median_us": us, "TBps": shape.kv_bytes / (us * 1e-6) / 1e12,
                    "fraction_of_read_ceiling": shape.floor_us(read_tbps) / us})
    if eager is not None:
        row.update({"eager": eager.to_json(), "eager_median_us": eager.median_us})
    return row


def _measure(shape, impl, ref, read_tbps, opts, role="matrix") -> dict:
    """Check, then time; a failed check leaves the row untimed. An implementation that
    cannot run here (compile error, out of resources) is recorded with its error."""
    try:
        check = _checked(impl, ref)
    except Exception as exc:
        progress(f"  {impl.name}: error ({type(exc).__name__}: {str(exc)[:200]})")
        return {"shape": shape.name, "impl": impl.name, "kind": impl.kind, "role": role,
                "num_splits": impl.num_splits, "paged": impl.paged, "config": impl.config,
                "error": f"{type(exc).__name__}: {str(exc)[:500]}"}
    if not check["passed"]:
        progress(f"  {impl.name}: FAILED correctness {check}")
        return _row(shape, impl, check, None, read_tbps, role)
    if opts.compile_only:
        return _row(shape, impl, check, None, read_tbps, role)
    timing = time_call(impl.call, cold_l2=opts.flush_l2 or not shape.warm_l2)
    eager = time_eager(impl.call) if role == "matrix" else None
    progress(f"  {impl.name:<34} splits={impl.num_splits!s:<4} {timing.median_us:9.2f} us graph  "
             f"{'-' if eager is None else format(eager.median_us, '9.2f')} us eager  rel_l2={check['rel_l2']:.2e}")
    return _row(shape, impl, check, timing, read_tbps, role, eager)


def _anchors(shape: BenchShape, x, splits: int) -> dict:
    """Byte equality on this shape's inputs: split(1) == single pass, paged == contiguous."""
    from kernels import attention_decode, attention_decode_paged_splitkv, attention_decode_splitkv

    single = attention_decode(x.q, x.k, x.v, x.visible_tokens)
    split1 = attention_decode_splitkv(x.q, x.k, x.v, x.visible_tokens, num_splits=1)
    contig = attention_decode_splitkv(x.q, x.k, x.v, x.visible_tokens, num_splits=splits)
    paged = attention_decode_paged_splitkv(x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens,
                                           num_splits=splits)
    return {"split1_equals_single_pass": bool(torch.equal(single, split1)),
            f"paged_equals_contiguous_at_{splits}_splits": bool(torch.equal(contig, paged))}


def _read_pass(shape: BenchShape, opts: RunOptions) -> dict:
    """The read kernel over exactly this shape's KV bytes, timed like every implementation:
    what a kernel that only streams the cache costs under the same method (launches, L2 state)."""
    reader = ReadPass(shape.kv_bytes, **STREAM_READ)
    if opts.compile_only:
        reader()
        reader.check()
        return {"bytes": shape.kv_bytes}
    timing = time_call(reader, cold_l2=opts.flush_l2 or not shape.warm_l2)
    reader.check()
    del reader
    return {"median_us": timing.median_us, "bytes": shape.kv_bytes, "timing": timing.to_json()}


def _split_window(splits: int) -> tuple[int, ...]:
    """The heuristic's split count with its neighbours (half, double, four times)."""
    return tuple(s for s in (splits // 2, splits, 2 * splits, 4 * splits) if s in SPLIT_SWEEP)


def run_shape(shape: BenchShape, read_tbps: float, num_sms: int, opts: RunOptions) -> tuple[list[dict], dict]:
    floor = "" if opts.compile_only else f", floor {shape.floor_us(read_tbps):.2f} us"
    progress(f"{shape.name} ({shape.label()}, KV {shape.kv_mb:.1f} MB{floor})")
    x = fixtures.make_inputs(shape, seed=opts.seed)
    ref, ref_name = correctness.reference(x)
    splits = layer_num_splits(shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.batch, shape.rows,
                              shape.context, num_sms=num_sms)
    meta = {"fixture": fixtures.identity(x), "reference": ref_name, "heuristic_splits": splits,
            "kv_bytes": shape.kv_bytes, "size_class": shape.size_class, "warm_l2": shape.warm_l2 and not opts.flush_l2,
            "shape": {"B": shape.batch, "Hq": shape.num_q_heads, "Hkv": shape.num_kv_heads, "D": shape.head_dim,
                      "S": shape.context, "R": shape.rows}}
    candidates = [(impl, "matrix") for impl in impls.project_impls(shape, x, splits)]
    window = _split_window(splits) if opts.variant_split_window else (splits,)
    for cfg in opts.variant_configs:
        for s in window:
            impl = impls.variant_impl(shape, x, s, cfg, name=f"tuned[{cfg.label()}]")
            candidates.append((impl, "matrix" if s == splits else "config-sweep"))
    if opts.variant_configs:
        candidates.append((impls.variant_impl(shape, x, splits, opts.variant_configs[0], paged=True,
                                              name=f"tuned_paged[{opts.variant_configs[0].label()}]"), "matrix"))
    meta["anchors"] = _anchors(shape, x, splits)
    progress(f"  anchors {meta['anchors']}")
    meta["read_pass"] = _read_pass(shape, opts)
    if not opts.compile_only:
        progress(f"  plain read of the KV bytes, same timing: {meta['read_pass']['median_us']:.2f} us")
    peers, skipped = impls.peer_impls(shape, x, opts.peers)
    meta["peers_skipped"] = skipped
    rows = [_measure(shape, impl, ref, read_tbps, opts, role) for impl, role in candidates]
    rows += [_measure(shape, peer, ref, read_tbps, opts) for peer in peers]
    if opts.sweep:
        for s in SPLIT_SWEEP:
            call = impls.project_split_call(shape, x, s)
            rows.append(_measure(shape, impls.Impl("splitkv", "ours", call, s), ref, read_tbps, opts, role="sweep"))
            if opts.sweep_variant and opts.variant_configs:
                cfg = opts.variant_configs[0]
                rows.append(_measure(shape, impls.variant_impl(shape, x, s, cfg, name=f"tuned[{cfg.label()}]"),
                                     ref, read_tbps, opts, role="sweep"))
    del x, ref, candidates, peers
    gc.collect()
    torch.cuda.empty_cache()
    return rows, meta


def run(opts: RunOptions, on_progress=None) -> dict:
    """Run the benchmark and return the artifact (a dict in the evidence format).

    `on_progress(artifact)` receives the artifact so far after every shape (its
    `results.complete` is False until the end), so an interrupted run keeps its data."""
    if not torch.cuda.is_available():
        raise RuntimeError("the benchmark needs a CUDA device")
    env = environment.environment()
    progress(f"device {env.get('device')}, torch {env['torch']}, triton {env['triton']}")
    if opts.compile_only:
        return _compile_only(opts, env)
    read = ceilings.read_ceiling()
    copy = ceilings.copy_ceiling()
    progress(f"read ceiling {read['TBps']:.3f} TB/s, copy ceiling {copy['TBps']:.3f} TB/s")
    from .host_overhead import measure as measure_host_overhead

    host = measure_host_overhead(device="cuda", stub=False)
    progress("host time per call (real launches, no sync): "
             + ", ".join(f"{k} {v['median_us']:.1f} us" for k, v in host["entries"].items()))
    rows, shapes_meta = [], {}
    done: list[BenchShape] = []
    for shape in opts.shapes:
        shape_rows, meta = run_shape(shape, read["TBps"], env["sm_count"], opts)
        rows += shape_rows
        shapes_meta[shape.name] = meta
        done.append(shape)
        if on_progress is not None and len(done) < len(opts.shapes):
            on_progress(_artifact(opts, env, read, copy, rows, shapes_meta, tuple(done), complete=False, host=host))
    return _artifact(opts, env, read, copy, rows, shapes_meta, opts.shapes, complete=True, host=host)


def _compile_only(opts: RunOptions, env: dict) -> dict:
    """Check (and so compile) every implementation of every shape once; no timing, no artifact:
    what a timed run finds in the kernel cache afterwards is then only loaded, not compiled."""
    rows = []
    for shape in opts.shapes:
        rows += run_shape(shape, 0.0, env["sm_count"], opts)[0]
    failed = [f"{r['shape']}:{r['impl']}:s{r['num_splits']}" for r in rows
              if r["kind"] in ("ours", "baseline") and not r.get("correctness", {}).get("passed", False)]
    return {"compile_only": True, "rows": len(rows), "correctness_failures": failed}


def _artifact(opts, env, read, copy, rows, shapes_meta, shapes, *, complete: bool, host: dict | None = None) -> dict:
    results = {"complete": complete, "ceilings": {"read": read, "copy": copy}, "rows": rows,
               "shapes": shapes_meta, "ours": opts.ours, "host_overhead": host}
    results["summary"] = summary.summarize(results, shapes)
    failed = [f"{r['shape']}:{r['impl']}:s{r['num_splits']}" for r in rows
              if r["kind"] in ("ours", "baseline") and not r.get("correctness", {}).get("passed", False)]
    failed += [f"{name}:anchor:{anchor}" for name, meta in shapes_meta.items()
               for anchor, ok in meta["anchors"].items() if not ok]
    results["correctness_passed"] = not failed
    results["correctness_failures"] = failed
    return {
        "schema_version": 1,
        "id": "bench-splitkv-h200",
        "kind": "benchmark",
        "created": environment.now_utc(),
        "command": opts.command,
        "environment": env,
        "commit": opts.commit or environment.git_commit(),
        "sources": (sources := environment.source_hashes()),
        "source_tokens": environment.source_tokens(sources),
        "fixtures": {f"{name}-bf16": meta["fixture"]["sha256"] for name, meta in shapes_meta.items()},
        "results": results,
    }
