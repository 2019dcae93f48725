"""Memory ceilings measured in the same run as the kernels: a read-only Triton kernel
over a multi-GB buffer, and a device-to-device copy (read + write bytes)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .timing import time_events

READ_BUFFER_BYTES = 4 << 30
COPY_BUFFER_BYTES = 2 << 30


@triton.jit
def _read_kernel(p_x, p_out, n_elements, BLOCK: tl.constexpr, TILES_PER_PROGRAM: tl.constexpr):
    i_p = tl.program_id(0)
    o_x = tl.arange(0, BLOCK)
    b_acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = i_p.to(tl.int64) * (BLOCK * TILES_PER_PROGRAM)
    for i_t in range(TILES_PER_PROGRAM):
        o = base + i_t * BLOCK + o_x
        b_acc += tl.load(p_x + o, mask=o < n_elements, other=0.0).to(tl.float32)
    tl.store(p_out + i_p, tl.sum(b_acc, axis=0))


def read_ceiling(nbytes: int = READ_BUFFER_BYTES) -> dict:
    """Read `nbytes` of bf16 once per call; report TB/s at the median time."""
    n = nbytes // 2
    x = torch.randn(n, dtype=torch.bfloat16, device="cuda")
    block, tiles = 4096, 16
    grid = (triton.cdiv(n, block * tiles),)
    out = torch.empty(grid[0], dtype=torch.float32, device="cuda")

    def run():
        _read_kernel[grid](x, out, n, BLOCK=block, TILES_PER_PROGRAM=tiles, num_warps=8)

    timing = time_events(run, warmup_ms=50, rep_ms=300)
    tbps = nbytes / (timing.median_us * 1e-6) / 1e12
    expected = x.sum(dtype=torch.float32).item()
    got = out.double().sum().item()
    if abs(got - expected) > 1e-3 * max(1.0, abs(expected)) + 1.0:
        raise RuntimeError(f"read-ceiling kernel summed {got}, torch summed {expected}")
    del x
    return {"TBps": tbps, "bytes": nbytes, "kernel": "triton read-only, bf16, 64 KiB per program tile loop",
            "timing": timing.to_json()}


def copy_ceiling(nbytes: int = COPY_BUFFER_BYTES) -> dict:
    """Device-to-device copy of `nbytes`; TB/s counts bytes read plus bytes written."""
    src = torch.randn(nbytes // 2, dtype=torch.bfloat16, device="cuda")
    dst = torch.empty_like(src)
    timing = time_events(lambda: dst.copy_(src), warmup_ms=50, rep_ms=300)
    if not torch.equal(dst, src):
        raise RuntimeError("copy-ceiling copy is not exact")
    tbps = 2 * nbytes / (timing.median_us * 1e-6) / 1e12
    del src, dst
    return {"TBps": tbps, "bytes_moved": 2 * nbytes, "kernel": "torch copy_", "timing": timing.to_json()}
