"""`python -m validation.bench.quantized`: bf16 vs int8 vs FP8 KV caches through the same
route, on a CUDA device: correctness first, then timing; a short table last.

    python -m validation.bench.quantized --out quantized-kv-h200.json
    python -m validation.bench.quantized --shapes llama8b-b1-32k --formats bf16,fp8 --out x.json

For every shape of `shapes.QUANT_SHAPES` and every format, our route (split-KV at the
heuristic's split count, or the single pass where it chose one) runs contiguous and
paged; each output is checked against fp64 attention over the dequantized cache (and the
anchors split(1) == single pass and paged == contiguous) before it is timed by CUDA-graph
replay. Each format's time is set against a plain read of the bytes that format makes a
call read (K and V values plus scales), timed the same way, and the read ceiling. The
quantization error of each format against the bf16 cache comes with every shape.
"""

from __future__ import annotations

import argparse
import gc
import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from . import correctness, environment, fixtures, impls
from .shapes import QUANT_SHAPES, BenchShape, kv_bytes_read, select

FORMATS = ("bf16", "int8", "fp8")
SCALE_DTYPES = {"float32": torch.float32, "float16": torch.float16}


@dataclass
class QuantOptions:
    shapes: tuple[BenchShape, ...]
    formats: tuple[str, ...] = FORMATS
    int8_scale_dtype: str = "float32"
    peers: bool = True
    seed: int = 20261129
    command: str = ""
    compile_only: bool = False  # check every route once (compiling it), time nothing


def progress(msg: str) -> None:
    print(f"[quantized {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _check(impl: impls.Impl, ref: torch.Tensor) -> tuple[dict, torch.Tensor]:
    first = impl.call()
    first.fill_(float("nan"))  # preallocated outputs: an unwritten element stays NaN
    out = impl.call()
    torch.cuda.synchronize()
    return correctness.compare(out, ref), out.clone()


def _read_pass_us(nbytes: int, cold_l2: bool) -> float:
    from .read_kernel import STREAM_READ, ReadPass
    from .timing import time_call

    reader = ReadPass(nbytes, **STREAM_READ)
    timing = time_call(reader, cold_l2=cold_l2)
    reader.check()
    return timing.median_us


def _anchors(x, cache, splits: int, contiguous: torch.Tensor, paged: torch.Tensor) -> dict:
    """split(1) == single pass (contiguous) and paged == contiguous at the route's split count."""
    from kernels import attention_decode, attention_decode_splitkv

    k, v = (x.k, x.v) if cache is None else (cache.k, cache.v)
    scales = {} if cache is None else {"k_scale": cache.k_scale, "v_scale": cache.v_scale}
    single = attention_decode(x.q, k, v, x.visible_tokens, **scales)
    split1 = attention_decode_splitkv(x.q, k, v, x.visible_tokens, num_splits=1, **scales)
    return {"split1_equals_single_pass": bool(torch.equal(single, split1)),
            f"paged_equals_contiguous_at_{splits}_splits": bool(torch.equal(contiguous, paged))}


def run_shape(shape: BenchShape, opts: QuantOptions, read_tbps: float, num_sms: int) -> tuple[list[dict], dict]:
    from kernels.decode_layer import layer_num_splits
    from validation.quant_error import quantization_error_table

    from .timing import time_call

    x = fixtures.make_inputs(shape, seed=opts.seed)
    splits = layer_num_splits(shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.batch, shape.rows,
                              shape.context, num_sms=num_sms)
    cold = not shape.warm_l2  # the bf16 cache's rule for every format: the same L2 state
    scale_bytes = SCALE_DTYPES[opts.int8_scale_dtype].itemsize
    meta = {"fixture": fixtures.identity(x), "heuristic_splits": splits, "cold_l2": cold, "anchors": {},
            "shape": {"B": shape.batch, "Hq": shape.num_q_heads, "Hkv": shape.num_kv_heads, "D": shape.head_dim,
                      "S": shape.context, "R": shape.rows}}
    progress(f"{shape.name} ({shape.label()}), {splits} splits")
    rows = []
    for kv_format in opts.formats:
        cache = None if kv_format == "bf16" else fixtures.quantize_inputs(
            x, kv_format, int8_scale_dtype=SCALE_DTYPES[opts.int8_scale_dtype])
        k_ref, v_ref = (x.k, x.v) if cache is None else cache.dequantized()
        ref = correctness._dense_fp64(x.q, k_ref, v_ref, x.visible_tokens)
        del k_ref, v_ref
        nbytes = kv_bytes_read(shape, kv_format, scale_bytes=scale_bytes)
        read_us = None if opts.compile_only else _read_pass_us(nbytes, cold)
        outs = {}
        for impl in impls.quantized_route_impls(shape, x, cache, splits):
            row = {"shape": shape.name, "impl": impl.name, "kind": impl.kind, "format": kv_format,
                   "paged": impl.paged, "num_splits": impl.num_splits, "bytes_read": nbytes,
                   "read_pass_us": read_us}
            try:
                check, outs[impl.paged] = _check(impl, ref)
            except Exception as exc:  # recorded, not fatal: the table shows it
                row["error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
                rows.append(row)
                progress(f"  {impl.name}: error {row['error']}")
                continue
            row["correctness"] = check
            if opts.compile_only:
                rows.append(row)
                continue
            if check["passed"]:
                us = time_call(impl.call, cold_l2=cold).median_us
                row.update({"median_us": us, "TBps": nbytes / (us * 1e-6) / 1e12,
                            "fraction_of_read_ceiling": nbytes / (read_tbps * 1e12) * 1e6 / us,
                            "fraction_of_read_pass": read_us / us})
            progress(f"  {impl.name:<12} {row.get('median_us', float('nan')):9.2f} us  read {read_us:8.2f} us  "
                     f"rel_l2={check['rel_l2']:.2e}{'' if check['passed'] else '  FAILED'}")
            rows.append(row)
        if len(outs) == 2:
            meta["anchors"][kv_format] = _anchors(x, cache, splits, outs[False], outs[True])
        if kv_format == "fp8" and opts.peers and not opts.compile_only:
            rows += _flashinfer_rows(shape, x, nbytes, read_us, read_tbps, cold, meta)
        del cache, ref, outs
    meta["quantization_error"] = quantization_error_table(
        x.q, x.k, x.v, x.visible_tokens, formats=("int8", "fp8-head"), attention=correctness._dense_fp64)
    del x
    gc.collect()
    torch.cuda.empty_cache()
    return rows, meta


def _flashinfer_rows(shape, x, nbytes, read_us, read_tbps, cold, meta) -> list[dict]:
    from .timing import time_call

    try:
        impl, k_deq, v_deq = impls.flashinfer_fp8_impl(x)
        ref = correctness._dense_fp64(x.q, k_deq, v_deq, x.visible_tokens)
        check, _ = _check(impl, ref)
    except Exception as exc:  # FlashInfer missing or without FP8 decode here
        meta["peers_skipped"] = {"flashinfer_fp8": f"{type(exc).__name__}: {str(exc)[:300]}"}
        return []
    row = {"shape": shape.name, "impl": impl.name, "kind": "peer", "format": "fp8", "paged": False,
           "num_splits": None, "bytes_read": nbytes, "read_pass_us": read_us, "correctness": check}
    if check["passed"]:
        us = time_call(impl.call, cold_l2=cold).median_us
        row.update({"median_us": us, "fraction_of_read_ceiling": nbytes / (read_tbps * 1e12) * 1e6 / us,
                    "fraction_of_read_pass": read_us / us})
    return [row]


def summary_rows(artifact: dict) -> list[tuple[str, ...]]:
    """(shape, impl, splits, us, vs bf16, MB read, read us, of read ceiling, rel_l2, pass) per timed row."""
    rows = artifact["results"]["rows"]
    bf16 = {(r["shape"], r["paged"]): r.get("median_us") for r in rows if r.get("format") == "bf16"}
    out = []
    for r in rows:
        us, base = r.get("median_us"), bf16.get((r["shape"], r["paged"]))
        check = r.get("correctness") or {}
        out.append((r["shape"], r["impl"], "-" if r.get("num_splits") is None else str(r["num_splits"]),
                    "-" if us is None else f"{us:.2f}",
                    "-" if us is None or base is None else f"{base / us:.2f}x",
                    f"{r['bytes_read'] / 1e6:.1f}", f"{r['read_pass_us']:.2f}",
                    "-" if r.get("fraction_of_read_ceiling") is None else f"{r['fraction_of_read_ceiling']:.1%}",
                    "-" if "rel_l2" not in check else f"{check['rel_l2']:.1e}",
                    "error" if "error" in r else ("yes" if check.get("passed") else "NO")))
    return out


HEADER = ("shape", "impl", "splits", "us", "vs bf16", "MB read", "read us", "of ceiling", "rel_l2", "pass")


def format_table(artifact: dict) -> str:
    """The summary as aligned text (the last thing the command prints)."""
    lines = [HEADER] + summary_rows(artifact)
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    read = artifact["results"]["ceilings"]["read"]["TBps"]
    text = [f"read ceiling {read:.3f} TB/s; time = CUDA-graph replay; MB read = K + V values + scales"]
    text += ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
             for line in lines]
    return "\n".join(text)


def failures(rows: list[dict], shapes_meta: dict) -> list[str]:
    """Our rows that failed or errored, and anchors that did not hold."""
    bad = [f"{r['shape']}:{r['impl']}" for r in rows if r["kind"] == "ours"
           and ("error" in r or not (r.get("correctness") or {}).get("passed", False))]
    bad += [f"{name}:{fmt}:{anchor}" for name, meta in shapes_meta.items()
            for fmt, anchors in meta["anchors"].items() for anchor, ok in anchors.items() if not ok]
    return bad


def run(opts: QuantOptions) -> dict:
    """Ceiling, then every shape; returns the `benchmark` artifact."""
    from .ceilings import read_ceiling

    if not torch.cuda.is_available():
        raise RuntimeError("the quantized-cache benchmark needs a CUDA device")
    env = environment.environment()
    if opts.compile_only:
        rows = [row for shape in opts.shapes for row in run_shape(shape, opts, 0.0, env["sm_count"])[0]]
        return {"compile_only": True, "rows": len(rows), "correctness_failures": failures(rows, {})}
    read = read_ceiling()
    progress(f"device {env.get('device')}, read ceiling {read['TBps']:.3f} TB/s")
    rows, shapes_meta = [], {}
    for shape in opts.shapes:
        shape_rows, shapes_meta[shape.name] = run_shape(shape, opts, read["TBps"], env["sm_count"])
        rows += shape_rows
    failed = failures(rows, shapes_meta)
    results = {"complete": True, "ceilings": {"read": read}, "rows": rows, "shapes": shapes_meta,
               "formats": list(opts.formats), "int8_scale_dtype": opts.int8_scale_dtype,
               "correctness_passed": not failed, "correctness_failures": failed}
    return {"schema_version": 1, "id": "bench-quantized-kv-h200", "kind": "benchmark", "created": environment.now_utc(),
            "command": opts.command, "environment": env, "commit": environment.git_commit(),
            "sources": (sources := environment.source_hashes()), "source_tokens": environment.source_tokens(sources),
            "fixtures": {f"{n}-bf16": m["fixture"]["sha256"] for n, m in shapes_meta.items()}, "results": results}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m validation.bench.quantized", description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="*", default=list(QUANT_SHAPES), help="shape names of the public matrix")
    p.add_argument("--formats", default=",".join(FORMATS), help="comma-separated, of bf16,int8,fp8")
    p.add_argument("--int8-scale-dtype", choices=sorted(SCALE_DTYPES), default="float32")
    p.add_argument("--no-peers", action="store_true", help="skip FlashInfer's FP8 decode")
    p.add_argument("--seed", type=int, default=20261129)
    p.add_argument("--compile-only", action="store_true",
                   help="check (and so compile) every route once, time nothing and write nothing")
    p.add_argument("--out", type=Path, help="where to write the JSON artifact; required unless --compile-only")
    return p.parse_args(argv)


def options_from(args: argparse.Namespace, argv=None) -> QuantOptions:
    """The run's options; ValueError for an unknown shape or format."""
    formats = tuple(f for f in args.formats.split(",") if f)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"unknown format(s) {unknown}; expected some of {list(FORMATS)}")
    command = "python -m validation.bench.quantized " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    return QuantOptions(shapes=select(args.shapes), formats=formats, int8_scale_dtype=args.int8_scale_dtype,
                        peers=not args.no_peers, seed=args.seed, command=command, compile_only=args.compile_only)


def main(argv=None) -> int:
    args = parse_args(argv)
    if (args.out is None) != args.compile_only:
        print("error: give --out for a timed run, and no --out with --compile-only", file=sys.stderr)
        return 2
    try:
        opts = options_from(args, argv)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: the quantized-cache benchmark needs a CUDA device", file=sys.stderr)
        return 2
    artifact = run(opts)
    if opts.compile_only:
        print(f"compiled and checked {artifact['rows']} route(s); failures: {artifact['correctness_failures'] or 'none'}")
        return 1 if artifact["correctness_failures"] else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(artifact, indent=1) + "\n")
    print(format_table(artifact))
    if not artifact["results"]["correctness_passed"]:
        print("error: correctness failed: " + ", ".join(artifact["results"]["correctness_failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
