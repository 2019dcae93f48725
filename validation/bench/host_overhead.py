"""Host time of one decode-attention call: Python, validation, launch-config choice, launch.

Each entry point (and `DecodeAttention`) is called back to back with preallocated `out`
and workspace and no synchronization; the median over rounds of many calls, divided by
the calls per round, is the host time per call. On a GPU the real kernels launch (the
device runs behind; the queue is drained between rounds), and torch SDPA on the same
tensors is the reference. `--stub` replaces the two Triton kernels with a launcher that
does nothing, so the time is the project's own Python alone; that is how the host path
is measured on a machine without a GPU (through the interpreter's device check).

Examples:
    TRITON_INTERPRET=1 python -m validation.bench.host_overhead --stub          # CPU: our Python only
    python -m validation.bench.host_overhead --out host.json                    # GPU: real launches and SDPA
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ENTRY_POINTS = ("attention_decode", "attention_decode_paged", "attention_decode_splitkv",
                "attention_decode_paged_splitkv", "DecodeAttention")
# (B, Hq, Hkv, D, S): the shape whose eager layer call took 146.6 us against 35.9 us of kernels.
DEFAULT_SHAPE = (1, 32, 8, 128, 32768)
PAGE_SIZE = 16


class _NoopKernel:
    """Stands in for a `@triton.jit` kernel: `kernel[grid](*args, **options)` launches nothing."""

    def __getitem__(self, grid):
        return self._launch

    @staticmethod
    def _launch(*args, **kwargs):
        return None


@contextlib.contextmanager
def stubbed_kernels():
    """Inside, the entry points run every host step but launch no kernel."""
    from kernels.decode_attention import api

    saved = api.decode_attention_partial_kernel, api.decode_attention_combine_kernel
    api.decode_attention_partial_kernel = api.decode_attention_combine_kernel = _NoopKernel()
    try:
        yield
    finally:
        api.decode_attention_partial_kernel, api.decode_attention_combine_kernel = saved


def build_calls(shape=DEFAULT_SHAPE, *, device, dtype=torch.bfloat16, num_splits: int = 16, seed: int = 0) -> dict:
    """Zero-argument calls of every entry point (and of SDPA on a GPU) on one shape."""
    import kernels
    from kernels.decode_layer import DecodeAttention

    batch, hq, hkv, dim, tokens = shape
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, hq, dim, generator=gen).to(device=device, dtype=dtype)
    k = torch.randn(batch, hkv, tokens, dim, generator=gen).to(device=device, dtype=dtype)
    v = torch.randn(batch, hkv, tokens, dim, generator=gen).to(device=device, dtype=dtype)
    pages = tokens // PAGE_SIZE
    k_pages = k.reshape(batch, hkv, pages, PAGE_SIZE, dim).permute(0, 2, 1, 3, 4).reshape(batch * pages, hkv, PAGE_SIZE, dim)
    v_pages = v.reshape(batch, hkv, pages, PAGE_SIZE, dim).permute(0, 2, 1, 3, 4).reshape(batch * pages, hkv, PAGE_SIZE, dim)
    table = torch.arange(batch * pages, dtype=torch.int32, device=device).view(batch, pages)
    visible = torch.full((batch,), tokens, dtype=torch.int32, device=device)
    ws = kernels.LayerWorkspace(batch, 1, hq, dim, num_splits, device)
    out = torch.empty_like(q)
    layer = DecodeAttention(hq, hkv, dim, max_batch=batch, dtype=dtype, device=device, split_kv=True,
                            num_sms=None if torch.device(device).type == "cuda" else 132)
    calls = {
        "attention_decode": lambda: kernels.attention_decode(q, k, v, visible, out=out),
        "attention_decode_paged": lambda: kernels.attention_decode_paged(q, k_pages, v_pages, table, visible, out=out),
        "attention_decode_splitkv": lambda: kernels.attention_decode_splitkv(
            q, k, v, visible, num_splits=num_splits, workspace=ws, out=out),
        "attention_decode_paged_splitkv": lambda: kernels.attention_decode_paged_splitkv(
            q, k_pages, v_pages, table, visible, num_splits=num_splits, workspace=ws, out=out),
        "DecodeAttention": lambda: layer(q, k, v, visible, max_visible_tokens=tokens, out=out),
    }
    if torch.device(device).type == "cuda":
        q4 = q.unsqueeze(2)  # [B, Hq, 1, D]
        sdpa = torch.nn.functional.scaled_dot_product_attention
        calls["sdpa"] = lambda: sdpa(q4, k, v, enable_gqa=True)
    return calls


def host_time_us(fn, *, calls: int = 200, rounds: int = 15, cuda: bool = False) -> dict:
    """Median host microseconds per call over `rounds` rounds of `calls` back-to-back calls."""
    for _ in range(3):
        fn()
    if cuda:
        torch.cuda.synchronize()
    per_call = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter_ns() - start) / calls / 1e3)
        if cuda:
            torch.cuda.synchronize()  # drain the queue between rounds, outside the timed loop
    return {"median_us": statistics.median(per_call), "min_us": min(per_call), "samples_us": per_call,
            "calls_per_round": calls}


def measure(shape=DEFAULT_SHAPE, *, device, stub: bool, calls: int = 200, rounds: int = 15) -> dict:
    """Host time per call of every entry point (and SDPA on a GPU, not stubbed)."""
    cuda = torch.device(device).type == "cuda"
    result = {"shape": dict(zip(("batch", "num_q_heads", "num_kv_heads", "head_dim", "tokens"), shape)),
              "stubbed_kernels": stub, "device": str(device), "entries": {}}
    with stubbed_kernels() if stub else contextlib.nullcontext():
        for name, fn in build_calls(shape, device=device).items():
            if stub and name == "sdpa":
                continue
            result["entries"][name] = host_time_us(fn, calls=calls, rounds=rounds, cuda=cuda)
    if not stub:
        from kernels.decode_attention import api

        result["direct_launch_plans"] = sum(1 for plan in api._PLANS.values() if plan.is_direct)
        result["plans"] = len(api._PLANS)
    return result


def format_result(result: dict) -> str:
    lines = [f"host time per call ({'stubbed kernels' if result['stubbed_kernels'] else 'real launches'}, "
             f"{result['device']}, shape {result['shape']}):"]
    for name, timing in result["entries"].items():
        lines.append(f"  {name:34s} {timing['median_us']:8.2f} us  (min {timing['min_us']:.2f})")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.bench.host_overhead", description=__doc__.splitlines()[0])
    p.add_argument("--stub", action="store_true", help="launch nothing: time the project's Python alone")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tokens", type=int, default=None, help="context length (default 32768 on a GPU, 4096 on CPU)")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--out", type=Path, default=None, help="write the result as JSON here")
    args = p.parse_args(argv)
    tokens = args.tokens or (DEFAULT_SHAPE[4] if args.device.startswith("cuda") else 4096)
    shape = DEFAULT_SHAPE[:4] + (tokens,)
    if not args.device.startswith("cuda") and not args.stub:
        print("error: without a GPU only --stub measures the host path (the interpreter runs the kernels)",
              file=sys.stderr)
        return 2
    result = measure(shape, device=args.device, stub=args.stub, calls=args.calls, rounds=args.rounds)
    print(format_result(result))
    if args.out is not None:
        from validation.artifacts import command_line, git_commit

        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"command": command_line(), "commit": git_commit(), **result}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
