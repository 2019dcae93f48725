"""How much of a decode call's host time is the plan lookup, and what a C++ guard would save.

    TRITON_INTERPRET=1 python lab/host_path/guard_probe.py            # CPU, kernels stubbed

`kernels/decode_attention/api.py` keys its launch plans on a Python tuple of every
tensor's (dtype, shape, strides, device, alignment): about half of the project's own
Python per call. The candidate is torch's C++ tensor guard (`TensorGuards`, what
torch.compile checks its graphs' inputs with): it checks dtype, device, sizes, strides,
requires_grad and dispatch keys of all tensors in one call. This probe times, with the
Triton kernels stubbed out (`validation.bench.host_overhead`):
1. each entry point as it is;
2. the plan key alone, and the same admission by one TensorGuards.check plus the
   16-byte alignment of the data pointers;
and prints a table. It changes nothing in `kernels/`: the guard path is timed beside it.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernels.decode_attention import api  # noqa: E402
from validation.bench.host_overhead import build_calls, host_time_us, stubbed_kernels  # noqa: E402

SHAPES = ((1, 32, 8, 128, 4096), (1, 24, 4, 256, 4096), (4, 8, 1, 128, 4096), (16, 40, 8, 128, 1024))


def per_call_us(fn, calls=2000, rounds=15) -> float:
    for _ in range(100):
        fn()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - start) / calls / 1e3)
    return statistics.median(samples)


def admission_probes(shape):
    """(python key, guard check) zero-argument calls over the split route's tensors."""
    from torch._C._dynamo.guards import TensorGuards

    import kernels

    batch, hq, hkv, dim, tokens = shape
    q = torch.randn(batch, hq, dim, dtype=torch.bfloat16)
    k = torch.randn(batch, hkv, tokens, dim, dtype=torch.bfloat16)
    v = torch.randn(batch, hkv, tokens, dim, dtype=torch.bfloat16)
    visible = torch.full((batch,), tokens, dtype=torch.int32)
    out = torch.empty_like(q)
    ws = kernels.LayerWorkspace(batch, 1, hq, dim, 16, "cpu")
    tensors = (q, k, v, visible, out)
    guard = TensorGuards(*tensors, dynamic_dims_sizes=[list(t.shape) for t in tensors],
                         dynamic_dims_strides=[list(t.stride()) for t in tensors])

    def python_key():
        return api._plan_key(api._SPLIT, q, k, v, None, visible, out, ws, 16, None, None, None)

    def guard_key():
        return (guard.check(q, k, v, visible, out)
                and not (q.data_ptr() | k.data_ptr() | v.data_ptr() | visible.data_ptr() | out.data_ptr()) & 15)

    assert guard_key()
    return python_key, guard_key


def main() -> None:
    print("| shape (B, Hq, Hkv, D, S) | attention_decode_splitkv us | DecodeAttention us | plan key us | "
          "guard check us |")
    print("|---|---|---|---|---|")
    with stubbed_kernels():
        for shape in SHAPES:
            calls = build_calls(shape, device="cpu")
            split = host_time_us(calls["attention_decode_splitkv"], calls=2000)["median_us"]
            layer = host_time_us(calls["DecodeAttention"], calls=2000)["median_us"]
            python_key, guard_key = admission_probes(shape)
            print(f"| {', '.join(map(str, shape))} | {split:.2f} | {layer:.2f} | {per_call_us(python_key):.2f} | "
                  f"{per_call_us(guard_key):.2f} |")
    print(f"\ntorch {torch.__version__}; CPU, Triton kernels stubbed (the project's Python only)")


if __name__ == "__main__":
    main()
