"""`python -m validation.bench.loop_sass`: the machine instructions of the decode kernel's
KV loop, per thread and loop iteration, counted without a GPU.

For a shape and cache format it builds the split launch exactly as `attention_decode_splitkv`
would (launch config, compile-time constants, argument types and 16-byte alignment),
compiles it for an NVIDIA architecture with Triton's own backend (ptxas and nvdisasm ship
in the Triton wheel), and counts the SASS instructions of every loop body by opcode. It is
a static count of what one thread issues per iteration (one K/V tile), not a timing: it
shows where a loop's instructions go when a format or a tile changes. Launch options that
need a GPU at run time (programmatic dependent launch) are off, which leaves the loop as
it is.

    python -m validation.bench.loop_sass --out loops.json
    python -m validation.bench.loop_sass --shape 1,24,4,256,2048,16 --formats bf16,int8 --out r16.json
    python -m validation.bench.loop_sass --formats int8 --configs default,n64-w4-s3 --out tiles.json

Run it without TRITON_INTERPRET (the interpreter replaces the kernels at import).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

FORMATS = ("bf16", "int8", "fp8")
_TRITON_TYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "int32": "i32", "int8": "i8",
                 "float8_e4m3fn": "fp8e4nv"}
_LAUNCH_OPTIONS = ("num_warps", "num_stages", "launch_pdl")


def parse_shape(text: str):
    """A `BenchShape` from "B,Hq,Hkv,D,S" or "B,Hq,Hkv,D,S,R"."""
    from .shapes import BenchShape

    try:
        values = [int(v) for v in text.split(",")]
        if len(values) not in (5, 6):
            raise ValueError
    except ValueError:
        raise ValueError(f"--shape takes B,Hq,Hkv,D,S or B,Hq,Hkv,D,S,R (integers), got {text!r}") from None
    return BenchShape(text, *values)


def loop_bodies(sass: str) -> list[Counter]:
    """Opcode counts of each loop body in nvdisasm output: the instructions from a label to a
    later branch back to it, outermost first by address."""
    addresses: dict[str, int] = {}
    instructions: list[tuple[int, str]] = []
    pending: list[str] = []
    for line in sass.splitlines():
        label = re.match(r"\s*\.(L_x_\d+):", line)
        if label:
            pending.append(label.group(1))
            continue
        found = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if not found:
            continue
        address = int(found.group(1), 16)
        for name in pending:
            addresses[name] = address
        pending = []
        instructions.append((address, found.group(2)))
    bodies = []
    for address, text in instructions:
        branch = re.search(r"\bBRA\b.*`?\(?\.(L_x_\d+)", text)
        if branch and addresses.get(branch.group(1), address + 1) <= address:
            start = addresses[branch.group(1)]
            bodies.append((start, Counter(_opcode(t) for a, t in instructions if start <= a <= address)))
    return [counts for _, counts in sorted(bodies, key=lambda b: b[0])]


def _opcode(text: str) -> str:
    if text.startswith("@"):  # a predicate guard
        text = text.split(None, 1)[1]
    return text.split()[0].split(".")[0]


def split_launch(shape, kv_format: str, dtype, num_splits: int):
    """(partial KernelLaunch, its tensors) of an `attention_decode_splitkv` call on CPU tensors."""
    import torch

    from kernels.decode_attention import api
    from kernels.decode_attention.checks import check_inputs
    from kernels.decode_attention.kv_scales import check_kv_scales
    from kernels.decode_attention.workspace import LayerWorkspace
    from kernels.decode_attention.quantize import quantize_kv_fp8, quantize_kv_int8

    if api.INTERPRET:
        raise RuntimeError("run without TRITON_INTERPRET: the interpreter replaces the kernels at import")
    gen = torch.Generator().manual_seed(0)
    q_shape = (shape.batch, shape.num_q_heads, shape.head_dim) if shape.rows == 1 else (
        shape.batch, shape.rows, shape.num_q_heads, shape.head_dim)
    q = torch.randn(q_shape, generator=gen).to(dtype)
    cache_shape = (shape.batch, shape.num_kv_heads, shape.context, shape.head_dim)
    k, v = (torch.randn(cache_shape, generator=gen).to(dtype) for _ in range(2))
    scales = {}
    if kv_format == "int8":
        (k, k_scale), (v, v_scale) = quantize_kv_int8(k), quantize_kv_int8(v)
        scales = {"k_scale": k_scale, "v_scale": v_scale}
    elif kv_format == "fp8":
        (k, k_scale), (v, v_scale) = quantize_kv_fp8(k, per_head=True), quantize_kv_fp8(v, per_head=True)
        scales = {"k_scale": k_scale, "v_scale": v_scale}
    elif kv_format != "bf16":
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {kv_format!r}")
    visible = torch.full((shape.batch,), shape.context, dtype=torch.int32)
    out = torch.empty_like(q)
    decode_shape = check_inputs(q, k, v, visible, None, paged=False, interpret=True)
    kv_scales = check_kv_scales(k, v, scales.get("k_scale"), scales.get("v_scale"))
    partial, _ = api._launches(q, k, v, None, visible, out, decode_shape, num_splits, shape.head_dim ** -0.5,
                               paged=False, finalize=False, kv_scales=kv_scales)
    ws = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, num_splits, q.device)
    k_scale = scales.get("k_scale", visible)
    v_scale = scales.get("v_scale", visible)
    tensors = (q, k, v, visible, visible, out, ws.partial_acc, ws.partial_max, ws.partial_sum, ws.split_counters,
               k_scale, v_scale)
    return partial, tensors


def compile_launch(launch, tensors, arch: int):
    """Compile a KernelLaunch for `sm_<arch>` as its first GPU call would specialize it."""
    kernel = launch.kernel
    values = dict(zip(kernel.arg_names, [tensors[i] for i in launch.picks] + list(launch.scalars)))
    options = dict(launch.options)
    launch_options = {name: options.pop(name) for name in _LAUNCH_OPTIONS if name in options}
    launch_options.pop("launch_pdl", None)
    values.update({name: tensors[i] for name, i in launch.keyword_tensors.items()})
    values.update(options)
    return compile_kernel(kernel, values, launch_options, arch)


def compile_kernel(kernel, values: dict, launch_options: dict, arch: int):
    """Compile a `@triton.jit` kernel for `sm_<arch>` with its arguments by name (`values`; a
    missing one takes its default), specialized as a GPU launch would: 16-byte-aligned
    pointers and integers divisible by 16 marked so."""
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature, constants, attrs = {}, {}, {}
    for index, param in enumerate(kernel.params):
        value = values.get(param.name, param.default)
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constants[param.name] = value
        elif isinstance(value, torch.Tensor):
            signature[param.name] = "*" + _TRITON_TYPES[str(value.dtype).removeprefix("torch.")]
            if value.data_ptr() % 16 == 0:
                attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, float):
            signature[param.name] = "fp32"
        elif isinstance(value, int):
            signature[param.name] = "i32" if -2**31 <= value < 2**31 else "i64"
            if value % 16 == 0 and value != 0:
                attrs[(index,)] = [["tt.divisibility", 16]]
        else:
            raise TypeError(f"parameter {param.name}: cannot type {type(value).__name__}")
    source = ASTSource(kernel, signature, constexprs=constants, attrs=attrs)
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options=launch_options)


def disassemble(compiled) -> str:
    """nvdisasm's text of a compiled kernel's cubin (the disassembler in Triton's wheel)."""
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm"
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as handle:
        handle.write(compiled.asm["cubin"])
    try:
        done = subprocess.run([str(tool), "-c", handle.name], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(handle.name)
    if done.returncode != 0:
        raise RuntimeError(f"nvdisasm failed: {done.stderr.strip()[:400]}")
    return done.stdout


def measure(shape, kv_format: str, dtype, num_splits: int, arch: int, config: str = "default") -> dict:
    """One row: the launch's tiles and the loop bodies' opcode counts; `config` an explore label."""
    from .explore import Candidate, partial_config

    with partial_config(Candidate(config)):
        launch, tensors = split_launch(shape, kv_format, dtype, num_splits)
    compiled = compile_launch(launch, tensors, arch)
    sass = disassemble(compiled)
    bodies = loop_bodies(sass)
    options = launch.options
    return {"format": kv_format, "config": config, "block_m": options["BLOCK_M"], "block_n": options["BLOCK_N"],
            "num_warps": options["num_warps"], "num_stages": options["num_stages"],
            "shared_bytes": compiled.metadata.shared,
            "kernel_instructions": sum(1 for line in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/\s", line)),
            "loops": [{"instructions": sum(c.values()), "opcodes": dict(c.most_common())} for c in bodies]}


def kv_loop(row: dict) -> dict | None:
    """The KV loop of a row: the largest loop body with tensor-core instructions (HMMA/HGMMA)."""
    loops = [lp for lp in row["loops"] if lp["opcodes"].get("HMMA", 0) + lp["opcodes"].get("HGMMA", 0) > 0]
    return max(loops, key=lambda lp: lp["instructions"]) if loops else None


def table(result: dict) -> str:
    lines = ["| format | config | BLOCK_M | BLOCK_N | warps | stages | KV-loop instructions | per 64 tokens | most frequent |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        loop = kv_loop(row)
        top = ", ".join(f"{op} {n}" for op, n in list(loop["opcodes"].items())[:6]) if loop else "-"
        per64 = f"{loop['instructions'] * 64 / row['block_n']:.0f}" if loop else "-"
        lines.append(f"| {row['format']} | {row['config']} | {row['block_m']} | {row['block_n']} | {row['num_warps']} | "
                     f"{row['num_stages']} | {loop['instructions'] if loop else '-'} | {per64} | {top} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.bench.loop_sass", description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="1,32,8,128,4096", help="B,Hq,Hkv,D,S[,R] (default 1,32,8,128,4096)")
    p.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated, of {','.join(FORMATS)}")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16", help="q's dtype (and the 16-bit cache's)")
    p.add_argument("--num-splits", type=int, default=32)
    p.add_argument("--arch", type=int, default=90, help="compute capability, 90 for Hopper")
    p.add_argument("--configs", default="default",
                   help="comma-separated launch configs as python -m validation.bench.explore names them (default, n64-w4-s3, ...)")
    p.add_argument("--out", type=Path, required=True, help="JSON file of the counts")
    args = p.parse_args(argv)
    import torch
    import triton

    from validation.artifacts import command_line, git_commit

    try:
        shape = parse_shape(args.shape)
        formats = [f.strip() for f in args.formats.split(",")]
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
        rows = [measure(shape, f, dtype, args.num_splits, args.arch, config)
                for f in formats for config in args.configs.split(",")]
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = {"kind": "static loop instruction count", "command": command_line(), "commit": git_commit(),
              "triton": triton.__version__, "arch": f"sm_{args.arch}",
              "shape": {"B": shape.batch, "Hq": shape.num_q_heads, "Hkv": shape.num_kv_heads, "D": shape.head_dim,
                        "S": shape.context, "R": shape.rows}, "dtype": args.dtype,
              "num_splits": args.num_splits, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
