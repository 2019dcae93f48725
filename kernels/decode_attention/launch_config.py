"""Tunables of the decode-attention kernels, chosen in one place.

The choice may depend only on the head dimension, the number of query rows a KV
group packs (G x R) and the dtype: never on the batch, the cache length, the number
of splits or paging. The bitwise anchors rely on that (split with one split equals the
single pass, paged equals contiguous, a request alone equals it inside a batch), since
BLOCK_N fixes both the tile order of the loop and the rounding of split boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton

MAX_SPLITS = 256


@dataclass(frozen=True)
class LaunchConfig:
    block_m: int
    block_n: int
    num_warps: int
    num_stages: int


def block_d_for(head_dim: int) -> int:
    """Head dim padded to a power of two (masked lanes), at least 16 for `tl.dot`."""
    return max(16, triton.next_power_of_2(head_dim))


def partial_launch_config(head_dim: int, group_rows: int, dtype: torch.dtype) -> LaunchConfig:
    """BLOCK_M, BLOCK_N, warps and stages of the partial/single-pass kernel.

    Args:
        head_dim: D of the caches (a multiple of 8, at most 256).
        group_rows: query rows one KV group carries, G x R.
        dtype: torch.bfloat16 or torch.float16.
    """
    block_d = block_d_for(head_dim)
    block_m = min(max(16, triton.next_power_of_2(group_rows)), 64)
    if block_d <= 64:
        block_n = 64
    elif block_d <= 128:
        block_n = 64 if block_m <= 32 else 32
    else:
        block_n = 64
    num_warps = 4 if block_m * block_d <= 64 * 128 else 8
    # Three stages keep two K/V tiles in flight per program (measured on an H200:
    # docs/results/perf-notes.md); at D = 256 that is 3 x 64 KiB of shared memory.
    return LaunchConfig(block_m=block_m, block_n=block_n, num_warps=num_warps, num_stages=3)


def combine_launch_config(head_dim: int, num_splits: int) -> LaunchConfig:
    """Warps of the combine kernel (one program per output vector)."""
    return LaunchConfig(block_m=1, block_n=triton.next_power_of_2(num_splits), num_warps=1 if head_dim <= 128 else 2, num_stages=1)
