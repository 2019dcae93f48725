"""Static SASS counts of the lab variants' KV loop for sm_90, without a GPU.

Builds each variant's launch on CPU tensors (as `LabSplitDecode` would on the GPU: tiles,
constexprs, argument types, 16-byte alignment), compiles it with Triton's own backend for
sm_90 and counts the loop body's instructions by opcode, with the project's
`validation.bench.loop_sass` helpers (the same method as lab/perf-notes.md, V11).

    python -m lab.quantized.sass_counts --out lab/quantized/runs/sass-sm90.json
    python -m lab.quantized.sass_counts --shape 1,24,4,256,2048,16 --variants vt-cvt16 --out r16.json

Run without TRITON_INTERPRET. A static count per thread and tile, not a timing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import torch

FORMATS = ("int8", "fp8")


def build_route(shape, kv_format: str, variant_spec: str, num_splits: int, dtype, paged: bool = False):
    from .lab_quantize import quantize_cache
    from .lab_route import LabSplitDecode, variant

    b, hq, hkv, d, s, r = shape
    gen = torch.Generator().manual_seed(0)
    q = torch.randn((b, hq, d) if r == 1 else (b, r, hq, d), generator=gen).to(dtype)
    page = 16
    k, v = (torch.randn(b, hkv, s, d, generator=gen) for _ in range(2))
    table = None
    if paged:
        k, v = (x.view(b, hkv, s // page, page, d).permute(0, 2, 1, 3, 4).reshape(b * s // page, hkv, page, d)
                for x in (k, v))
        table = torch.arange(b * s // page, dtype=torch.int32).view(b, s // page)
    cache = quantize_cache(k, v, kv_format, v_trans=variant(variant_spec).v_trans)
    visible = torch.full((b,), s, dtype=torch.int32)
    return LabSplitDecode(variant_spec, q, cache, visible, num_splits=num_splits, block_table=table)


def compile_route(route, arch: int = 90):
    """Compile the route's partial kernel for sm_<arch> as its first GPU launch would specialize it."""
    from validation.bench.loop_sass import compile_kernel

    from .kernel_lab import lab_partial_kernel as kernel

    constexprs = dict(route._constexprs)
    options = {k: constexprs.pop(k) for k in ("num_warps", "num_stages")}
    values = dict(zip([p.name for p in kernel.params if not p.is_constexpr], route._args))
    values.update(constexprs)
    return compile_kernel(kernel, values, options, arch)


def measure(shape, kv_format, variant_spec, num_splits, dtype, arch, paged=False) -> dict:
    from validation.bench.loop_sass import disassemble, loop_bodies

    route = build_route(shape, kv_format, variant_spec, num_splits, dtype, paged)
    start = time.time()
    compiled = compile_route(route, arch)
    seconds = time.time() - start
    sass = disassemble(compiled)
    ptx = compiled.asm["ptx"]
    bodies = loop_bodies(sass)
    return {"format": kv_format, "variant": variant_spec, "paged": paged, **route.config,
            "compile_s": round(seconds, 2), "shared_bytes": compiled.metadata.shared,
            "registers": getattr(compiled, "n_regs", None), "spills": getattr(compiled, "n_spills", None),
            "ptx_ldmatrix": len(re.findall(r"ldmatrix", ptx)), "ptx_wgmma": len(re.findall(r"wgmma\.mma_async", ptx)),
            "ptx_mma_sync": len(re.findall(r"\bmma\.sync", ptx)), "ptx_prmt": len(re.findall(r"\bprmt\.b32", ptx)),
            "loops": [{"instructions": sum(c.values()), "opcodes": dict(c.most_common())} for c in bodies]}


def kv_loop(row: dict) -> dict | None:
    loops = [lp for lp in row["loops"] if lp["opcodes"].get("HMMA", 0) + lp["opcodes"].get("HGMMA", 0)
             + lp["opcodes"].get("QGMMA", 0) > 0]
    return max(loops, key=lambda lp: lp["instructions"]) if loops else None


def table(rows: list[dict]) -> str:
    lines = ["| format | variant | paged | BLOCK_N | warps | KV-loop instr | per 64 tokens | LDSM | LDS | most frequent |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['format']} | {row['variant']} | {row['paged']} | - | - | error: {row['error'][:80]} | | | | |")
            continue
        loop = kv_loop(row)
        top = ", ".join(f"{op} {n}" for op, n in list(loop["opcodes"].items())[:6]) if loop else "-"
        n = loop["instructions"] if loop else 0
        lines.append(f"| {row['format']} | {row['variant']} | {row['paged']} | {row['BLOCK_N']} | {row['num_warps']} | "
                     f"{n or '-'} | {n * 64 / row['BLOCK_N']:.0f} | {loop['opcodes'].get('LDSM', 0) if loop else '-'} | "
                     f"{loop['opcodes'].get('LDS', 0) if loop else '-'} | {top} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.quantized.sass_counts", description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="1,32,8,128,4096,1", help="B,Hq,Hkv,D,S,R")
    p.add_argument("--formats", default="int8,fp8")
    p.add_argument("--variants", default="lab-ref,vt,cvt16,cvt16-bits,vt-cvt16,vt-fp8qk,vt-fp8dot")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    p.add_argument("--num-splits", type=int, default=32)
    p.add_argument("--paged", action="store_true")
    p.add_argument("--arch", type=int, default=90)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    import triton

    from .lab_route import INTERPRET, variant

    if INTERPRET:
        print("error: run without TRITON_INTERPRET", file=sys.stderr)
        return 2
    shape = tuple(int(x) for x in args.shape.split(","))
    shape = shape + (1,) * (6 - len(shape))
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    rows = []
    for fmt in args.formats.split(","):
        for spec in args.variants.split(","):
            if fmt not in variant(spec).formats:
                continue
            try:
                rows.append(measure(shape, fmt, spec, args.num_splits, dtype, args.arch, args.paged))
            except Exception as exc:  # a variant that does not compile is a finding, not a crash
                rows.append({"format": fmt, "variant": spec, "paged": args.paged,
                             "error": f"{type(exc).__name__}: {str(exc)[:600]}"})
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    result = {"kind": "static loop instruction count (lab variants)", "triton": triton.__version__,
              "arch": f"sm_{args.arch}", "shape": args.shape, "dtype": args.dtype, "num_splits": args.num_splits,
              "paged": args.paged, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
