"""Tunables of the decode-attention kernels, chosen in one place.

The tiles (BLOCK_M, BLOCK_N) and warps may depend only on the head dimension, the
number of query rows a KV group packs (G x R) and the dtype: never on the batch, the
cache length, the number of splits or paging. The bitwise anchors rely on that (split
with one split equals the single pass, paged equals contiguous, a request alone equals
it inside a batch), since BLOCK_N fixes both the tile order of the loop and the rounding
of split boundaries. The pipeline depth, the grid order and where the combine may start
change no arithmetic, so they may follow the grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton

MAX_SPLITS = 256


@dataclass(frozen=True)
class LaunchConfig:
    """Partial/single-pass kernel: tile sizes, warps, pipeline depth, grid order, PDL trigger.

    `pdl_trigger`: where the partial kernel lets the combine start early (programmatic
    dependent launch): 0 never, 1 at program start, 2 after the KV loop.
    `prefetch_pages`: paged split programs load the next tile's page ids one tile ahead
    (the single pass never does: it measured slower there).
    `scalar_pages`: that look-ahead keeps one page id per page of the tile (at most
    four), not one per token: fewer loads and registers; the same addresses.
    `chain_pdl`: the partial/single-pass kernel itself launches as a programmatic
    dependent of whatever precedes it on the stream and waits (`gdc_wait`) before its
    first read, and the combine lets the next launch start early; so a kernel's launch
    overlaps the end of the work before it. Timing only, never the bits.
    `fused_combine`: where `fused_merge_tile` allows it, a split launch has no combine
    kernel; the last program of each (request, KV head) to finish merges the partials.
    `merge_trigger`: with the chain, a launch that merges in place lets the next launch
    start from its merging programs, before they merge (`pdl_triggers`).
    `inner_unmasked`: tiles that every real row of the program sees whole skip the score
    mask (it would change none of their scores). The same bits, fewer instructions.
    """

    block_m: int
    block_n: int
    num_warps: int
    num_stages: int
    split_major: bool = True
    pdl_trigger: int = 1
    prefetch_pages: bool = True
    scalar_pages: bool = True
    chain_pdl: bool = True
    fused_combine: bool = True
    merge_trigger: bool = True
    inner_unmasked: bool = True


@dataclass(frozen=True)
class CombineConfig:
    """Combine kernel: split rows per tile, warps, and whether it launches as a PDL dependent."""

    block_s: int
    num_warps: int
    use_pdl: bool


def block_d_for(head_dim: int) -> int:
    """Head dim padded to a power of two (masked lanes), at least 16 for `tl.dot`."""
    return max(16, triton.next_power_of_2(head_dim))


def block_m_for(group_rows: int) -> int:
    """Query rows per program: G x R padded to a power of two, 16 (the smallest `tl.dot`) to 64."""
    return min(max(16, triton.next_power_of_2(group_rows)), 64)


FULL_GRID_PROGRAMS_PER_SM = 3


EIGHT_BIT_CACHE_DTYPES = (torch.int8, torch.float8_e4m3fn)


def partial_launch_config(head_dim: int, group_rows: int, dtype: torch.dtype, *,
                          programs_per_sm: float | None = None, kv_dtype: torch.dtype | None = None) -> LaunchConfig:
    """BLOCK_M, BLOCK_N, warps and stages of the partial/single-pass kernel.

    Args:
        head_dim: D of the caches (a multiple of 8, at most 256).
        group_rows: query rows one KV group carries, G x R.
        dtype: torch.bfloat16 or torch.float16 (q's).
        kv_dtype: the cache's dtype when it differs from q's (int8, float8_e4m3fn); an
            8-bit tile takes half the shared memory of a 16-bit one.
        programs_per_sm: for a single-pass launch on a GPU, its grid over the SM count;
            None for the split partial kernel. It sets the pipeline depth only, which
            changes no arithmetic (anchor A1 compares a two-stage single pass with the
            three-stage partial kernel on the GPU), so no bits depend on the batch.
    """
    block_d = block_d_for(head_dim)
    block_m = block_m_for(group_rows)
    eight_bit = kv_dtype in EIGHT_BIT_CACHE_DTYPES
    if eight_bit and block_d <= 128 and block_m <= 32:
        # An 8-bit K/V tile of 128 tokens takes the shared memory of a 16-bit tile of 64: an
        # int8 cache ran (1,32,8,128,32768) in 31.8 us against 36.7 with 64-token tiles, at
        # 128K 102.3 against 127.1 (H200; docs/results/perf-notes.md, V11).
        block_n = 128
    elif block_d <= 64:
        block_n = 64
    elif block_d <= 128:
        block_n = 64 if block_m <= 32 else 32
    else:
        # BLOCK_M 64 at D 256: a 64-token tile left the paged loop spilling registers
        # (ncu: 517 K local-memory requests against 70 K contiguous); 32 tokens ran R16
        # at 46.5 us contiguous and 55.2 paged against 48.2 and 65.4 (perf-notes, V4).
        block_n = 32 if block_m >= 64 else 64
    # Four warps (one warpgroup) at every 16-bit tile: at BLOCK_M 64 and D 256 (R = 16 rows
    # of a group of 6) they ran the split path in 48-49 us on an H200 against 60 us with eight
    # (docs/results/perf-notes.md, V4; runs/explore-v4-1.json). An 8-bit tile at D 256 and
    # up to 32 rows spreads its conversions over eight: they ran an int8 cache at
    # (1,24,4,256,20688) in 32.2 us against 36.1 with four (perf-notes, V11).
    num_warps = 8 if eight_bit and block_d > 128 and block_m <= 32 else 4
    # Three stages keep two K/V tiles in flight per program (measured on an H200:
    # docs/results/perf-notes.md); at D = 256 that is 3 x 64 KiB of shared memory. A
    # single pass whose grid is several programs per SM (large batch) runs in fewer
    # waves with two stages' shared memory; with a small grid it needs the third.
    full_grid = programs_per_sm is not None and programs_per_sm >= FULL_GRID_PROGRAMS_PER_SM
    num_stages = 2 if full_grid else 3
    return LaunchConfig(block_m=block_m, block_n=block_n, num_warps=num_warps, num_stages=num_stages)


def combine_launch_config(head_dim: int, num_splits: int, *, pdl_available: bool) -> CombineConfig:
    """The combine kernel's tile of split rows (splits 1.. in one or a few loads) and warps.

    Args:
        head_dim: D.
        num_splits: splits of the call.
        pdl_available: the device and Triton support programmatic dependent launch.
    """
    block_s = min(triton.next_power_of_2(max(num_splits - 1, 1)), 64 if head_dim <= 128 else 32)
    return CombineConfig(block_s=max(block_s, 2), num_warps=4, use_pdl=pdl_available)


# The fused merge (kernel_partial.py, FUSED_COMBINE) loads [rows, slots, D] fp32 tiles of
# at most MERGE_TILE_ELEMENTS (64 KiB: 128 registers a thread at four warps) and runs at
# most MERGE_MAX_ROUNDS of them; larger merges keep the combine kernel, whose programs
# split the work by output row.
MERGE_TILE_ELEMENTS = 16384
MERGE_MAX_ROUNDS = 2


def fused_merge_tile(group_rows: int, block_m: int, num_splits: int, head_dim: int) -> tuple[int, int] | None:
    """(MERGE_ROWS, MERGE_SLOTS) of a split launch that merges in place, or None for the combine kernel.

    Args:
        group_rows: query rows of a KV group, G x R.
        block_m: BLOCK_M of the partial kernel (the merge needs the group in one program).
        num_splits: splits of the launch (2 or more).
        head_dim: D.

    The choice depends on G x R, the split count and D only, never on the batch or the
    cache length, so a request's bits are the same alone or in a batch.
    """
    if num_splits < 2 or group_rows > block_m:
        return None
    rows = triton.next_power_of_2(group_rows)
    block_d = block_d_for(head_dim)
    slots = min(triton.next_power_of_2(num_splits), max(1, MERGE_TILE_ELEMENTS // (rows * block_d)))
    if rows * block_d > MERGE_TILE_ELEMENTS or -(-num_splits // slots) > MERGE_MAX_ROUNDS:
        return None
    return rows, slots


def pdl_triggers(config: LaunchConfig, *, finalize: bool, fused: bool, combine_pdl: bool, chain: bool) -> tuple[int, bool]:
    """Where a partial or single-pass launch lets the next launch start: (PDL_TRIGGER, MERGE_TRIGGER).

    Args:
        config: the launch config (`pdl_trigger`, `merge_trigger`).
        finalize: a single-pass launch.
        fused: a split launch that merges in place (no combine kernel).
        combine_pdl: the combine kernel follows as a programmatic dependent.
        chain: the next partial or single-pass launch is a programmatic dependent (the chain).

    A launch that merges in place triggers only from its merging programs, once every other
    program has exited: a trigger at the start of every program let the next launch take SM
    slots while the grid still ran (4k: 8.64 against 7.91 us, docs/results/perf-notes.md,
    V6), one before every program's count ran 4k in 8.37-8.47 us; from the merging programs
    it ran in 7.55-7.60 against 7.90-7.92 (V7). A trigger changes when the next launch
    starts, never what any program computes.
    """
    if fused:
        return 0, chain and config.merge_trigger
    if combine_pdl or (finalize and chain):
        return config.pdl_trigger, False
    return 0, False
