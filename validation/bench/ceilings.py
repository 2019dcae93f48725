"""Memory ceilings measured in the same run as the kernels: a read-only Triton kernel
over a multi-GB buffer, and a device-to-device copy (read + write bytes)."""

from __future__ import annotations

import torch

from .read_kernel import STREAM_READ, ReadPass
from .timing import time_events

READ_BUFFER_BYTES = 4 << 30
COPY_BUFFER_BYTES = 2 << 30


def read_ceiling(nbytes: int = READ_BUFFER_BYTES) -> dict:
    """Read `nbytes` of bf16 once per call; report TB/s at the median time."""
    reader = ReadPass(nbytes, **STREAM_READ)
    timing = time_events(reader, warmup_ms=50, rep_ms=300)
    reader.check()
    tbps = reader.nbytes / (timing.median_us * 1e-6) / 1e12
    del reader
    return {"TBps": tbps, "bytes": nbytes, "kernel": "validation/bench/read_kernel.py, bf16, "
            f"{STREAM_READ['block']} x {STREAM_READ['tiles']} elements per program, {STREAM_READ['num_warps']} warps",
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
