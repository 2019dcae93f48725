"""Tuning variant of GQA-packed split-KV decode attention.

The benchmark times this variant next to the project's kernels in
``kernels/decode_attention/``. It takes the same arguments as the public entry
points (``q`` ``[B, Hq, D]`` or ``[B, R, Hq, D]``, contiguous cache
``[B, Hkv, S_max, D]`` or paged cache ``[num_blocks, Hkv, block_size, D]`` with an
int32 ``block_table``, int32 ``visible_tokens`` on the device) plus an explicit
:class:`LaunchConfig`, so that launch parameters can be swept without touching
the project's kernels.

One program handles one (request, KV head, split): all ``G * R`` query rows of
the KV group form the M dimension of ``tl.dot``, so each K/V tile is read once.
With ``num_splits > 1`` the partial state (unnormalized accumulator, running max
in log2 units, running sum) goes to fp32 workspace buffers and is merged either
by the last program of each (request, KV head) to arrive (``fused_combine``: one
launch, an arrival counter that the merging program resets, so graph replay stays
correct) or by a separate light combine kernel.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"
_LOG2E = 1.4426950408889634


@dataclass(frozen=True)
class LaunchConfig:
    """Launch parameters of the tuning variant.

    Attributes:
        block_n: KV tokens per loop tile.
        num_warps, num_stages: Triton launch parameters of the partial kernel.
        fused_combine: merge in the last-arriving program (one launch) instead of a
            separate combine kernel.
        max_block_m: most query rows (G x R, padded) one program carries; larger
            groups are cut into several programs.
        evict_first: mark K/V loads as streaming (evict first from L2).
        prefetch_pages: paged caches load the next tile's page ids one iteration
            ahead, so K/V addresses never wait on the block table.
    """

    block_n: int = 64
    num_warps: int = 4
    num_stages: int = 3
    fused_combine: bool = True
    max_block_m: int = 64
    evict_first: bool = False
    prefetch_pages: bool = False
    combine_warps: int = 4

    def label(self) -> str:
        mode = "fused" if self.fused_combine else "twokernel"
        extra = ("-ef" if self.evict_first else "") + ("-pf" if self.prefetch_pages else "")
        return f"n{self.block_n}-w{self.num_warps}-s{self.num_stages}-m{self.max_block_m}-{mode}{extra}"

    @classmethod
    def from_label(cls, label: str) -> "LaunchConfig":
        """Parse a label such as `n64-w4-s3-m64-fused` or `n32-w8-s2-twokernel-ef`."""
        fields: dict = {}
        names = {"n": "block_n", "w": "num_warps", "s": "num_stages", "m": "max_block_m"}
        for part in label.split("-"):
            if part in ("fused", "twokernel"):
                fields["fused_combine"] = part == "fused"
            elif part == "ef":
                fields["evict_first"] = True
            elif part == "pf":
                fields["prefetch_pages"] = True
            elif part[:1] in names and part[1:].isdigit():
                fields[names[part[:1]]] = int(part[1:])
            else:
                raise ValueError(f"launch config label must look like n64-w4-s3-m64-fused[-ef], got {label!r}")
        if "block_n" not in fields:
            raise ValueError(f"launch config label must name BLOCK_N (n<int>), got {label!r}")
        return cls(**fields)


@triton.jit
def _merge_rows(
    p_acc, p_m, p_l, p_out, i_bh, i_b, i_h, row_begin, row_end, num_splits,
    s_ob, s_or, s_oh,
    G: tl.constexpr, R: tl.constexpr, D: tl.constexpr, D_PAD: tl.constexpr,
    ROWS_BLK: tl.constexpr, S_BLK: tl.constexpr,
):
    o_rb = row_begin + tl.arange(0, ROWS_BLK)
    m_rb = o_rb < row_end
    o_s = tl.arange(0, S_BLK)
    o_d = tl.arange(0, D_PAD)
    m_d = o_d < D
    b_mrun = tl.full([ROWS_BLK], float("-inf"), dtype=tl.float32)
    b_lsum = tl.zeros([ROWS_BLK], dtype=tl.float32)
    b_o = tl.zeros([ROWS_BLK, D_PAD], dtype=tl.float32)
    for i_s0 in range(0, num_splits, S_BLK):
        m_rs = m_rb[:, None] & ((i_s0 + o_s) < num_splits)[None, :]  # [ROWS_BLK, S_BLK]
        o_ml = (i_bh * num_splits + i_s0 + o_s)[None, :] * (G * R) + o_rb[:, None]  # [ROWS_BLK, S_BLK]
        b_mp = tl.load(p_m + o_ml, mask=m_rs, other=float("-inf"), cache_modifier=".cg")
        b_lp = tl.load(p_l + o_ml, mask=m_rs, other=0.0, cache_modifier=".cg")
        b_a = tl.load(p_acc + o_ml[:, :, None] * D + o_d[None, None, :],
                      mask=m_rs[:, :, None] & m_d[None, None, :], other=0.0,
                      cache_modifier=".cg")  # [ROWS_BLK, S_BLK, D_PAD]
        b_mnew = tl.maximum(b_mrun, tl.max(b_mp, axis=1))
        b_mref = tl.where(b_mnew == float("-inf"), 0.0, b_mnew)
        b_alpha = tl.exp2(b_mrun - b_mref)
        b_w = tl.exp2(b_mp - b_mref[:, None])  # [ROWS_BLK, S_BLK]
        b_lsum = b_lsum * b_alpha + tl.sum(b_w * b_lp, axis=1)
        b_o = b_o * b_alpha[:, None] + tl.sum(b_w[:, :, None] * b_a, axis=1)
        b_mrun = b_mnew
    b_o = tl.where(b_lsum[:, None] > 0, b_o / b_lsum[:, None], 0.0)
    i_r = o_rb // G
    i_g = o_rb % G
    p_o = p_out + i_b * s_ob + i_r[:, None] * s_or + (i_h * G + i_g)[:, None] * s_oh + o_d[None, :]
    tl.store(p_o, b_o.to(p_out.dtype.element_ty), mask=m_rb[:, None] & m_d[None, :])


@triton.jit
def _splitkv_tuned_kernel(
    p_q, p_k, p_v, p_bt, p_vis, p_out, p_acc, p_m, p_l, p_cnt,
    s_qb, s_qr, s_qh,
    s_kb, s_kh, s_kn,
    s_vb, s_vh, s_vn,
    s_btb,
    s_ob, s_or, s_oh,
    num_kv_heads, num_m_blocks, num_splits, scale_log2,
    G: tl.constexpr, R: tl.constexpr, D: tl.constexpr, D_PAD: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, PAGE: tl.constexpr,
    IS_PAGED: tl.constexpr, IS_SPLIT: tl.constexpr, USE_FUSED_COMBINE: tl.constexpr,
    USE_FP32_DOT: tl.constexpr, USE_EVICT_FIRST: tl.constexpr, USE_PAGE_PREFETCH: tl.constexpr,
    ROWS_BLK: tl.constexpr, S_BLK: tl.constexpr,
):
    i_s = tl.program_id(0)
    i_bhm = tl.program_id(1)
    i_mb = i_bhm % num_m_blocks
    i_bh = i_bhm // num_m_blocks
    i_b = i_bh // num_kv_heads
    i_h = i_bh % num_kv_heads
    n_vis = tl.load(p_vis + i_b)
    chunk = tl.cdiv(tl.cdiv(n_vis, num_splits), BLOCK_N) * BLOCK_N
    lo = i_s * chunk
    hi = tl.minimum(lo + chunk, n_vis)

    o_m = i_mb * BLOCK_M + tl.arange(0, BLOCK_M)
    m_m = o_m < G * R
    i_r = o_m // G
    i_g = o_m % G
    row_limit = n_vis - (R - 1 - i_r)  # [BLOCK_M] tokens each row sees
    o_d = tl.arange(0, D_PAD)
    m_d = o_d < D
    p_qm = p_q + i_b * s_qb + i_r[:, None] * s_qr + (i_h * G + i_g)[:, None] * s_qh + o_d[None, :]
    b_q = tl.load(p_qm, mask=m_m[:, None] & m_d[None, :], other=0.0)  # [BLOCK_M, D_PAD]
    if USE_FP32_DOT:
        b_q = b_q.to(tl.float32)

    b_m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    b_l = tl.zeros([BLOCK_M], dtype=tl.float32)
    b_acc = tl.zeros([BLOCK_M, D_PAD], dtype=tl.float32)
    if USE_PAGE_PREFETCH:
        o_n0 = lo + tl.arange(0, BLOCK_N)
        i_blk_next = tl.load(p_bt + i_b * s_btb + o_n0 // PAGE, mask=o_n0 < hi, other=0)  # [BLOCK_N]
    else:
        i_blk_next = tl.zeros([BLOCK_N], dtype=tl.int32)
    for start in range(lo, hi, BLOCK_N):
        o_n = start + tl.arange(0, BLOCK_N)
        m_n = o_n < hi
        if IS_PAGED:
            if USE_PAGE_PREFETCH:
                i_blk = i_blk_next
                i_blk_next = tl.load(p_bt + i_b * s_btb + (o_n + BLOCK_N) // PAGE, mask=(o_n + BLOCK_N) < hi,
                                     other=0)
            else:
                i_blk = tl.load(p_bt + i_b * s_btb + o_n // PAGE, mask=m_n, other=0)
            o_k = i_blk.to(tl.int64) * s_kb + (o_n % PAGE) * s_kn
            o_v = i_blk.to(tl.int64) * s_vb + (o_n % PAGE) * s_vn
        else:
            o_k = i_b.to(tl.int64) * s_kb + o_n * s_kn
            o_v = i_b.to(tl.int64) * s_vb + o_n * s_vn
        if USE_EVICT_FIRST:
            b_k = tl.load(p_k + i_h * s_kh + o_k[:, None] + o_d[None, :], mask=m_n[:, None] & m_d[None, :],
                          other=0.0, eviction_policy="evict_first")  # [BLOCK_N, D_PAD]
        else:
            b_k = tl.load(p_k + i_h * s_kh + o_k[:, None] + o_d[None, :], mask=m_n[:, None] & m_d[None, :],
                          other=0.0)  # [BLOCK_N, D_PAD]
        if USE_FP32_DOT:
            b_k = b_k.to(tl.float32)
        b_s = tl.dot(b_q, tl.trans(b_k)) * scale_log2  # [BLOCK_M, BLOCK_N]
        b_s = tl.where((o_n[None, :] < row_limit[:, None]) & m_n[None, :], b_s, float("-inf"))
        b_mnew = tl.maximum(b_m, tl.max(b_s, axis=1))
        b_mref = tl.where(b_mnew == float("-inf"), 0.0, b_mnew)
        b_p = tl.exp2(b_s - b_mref[:, None])  # [BLOCK_M, BLOCK_N]
        b_alpha = tl.exp2(b_m - b_mref)
        b_l = b_l * b_alpha + tl.sum(b_p, axis=1)
        if USE_EVICT_FIRST:
            b_v = tl.load(p_v + i_h * s_vh + o_v[:, None] + o_d[None, :], mask=m_n[:, None] & m_d[None, :],
                          other=0.0, eviction_policy="evict_first")  # [BLOCK_N, D_PAD]
        else:
            b_v = tl.load(p_v + i_h * s_vh + o_v[:, None] + o_d[None, :], mask=m_n[:, None] & m_d[None, :],
                          other=0.0)  # [BLOCK_N, D_PAD]
        if USE_FP32_DOT:
            b_acc = b_acc * b_alpha[:, None] + tl.dot(b_p, b_v.to(tl.float32))
        else:
            b_acc = b_acc * b_alpha[:, None] + tl.dot(b_p.to(b_v.dtype), b_v)
        b_m = b_mnew

    if IS_SPLIT:
        o_ml = (i_bh * num_splits + i_s) * (G * R) + o_m  # [BLOCK_M]
        tl.store(p_m + o_ml, b_m, mask=m_m)
        tl.store(p_l + o_ml, b_l, mask=m_m)
        tl.store(p_acc + o_ml[:, None] * D + o_d[None, :], b_acc, mask=m_m[:, None] & m_d[None, :])
        if USE_FUSED_COMBINE:
            tl.debug_barrier()
            n_done = tl.atomic_add(p_cnt + i_bhm, 1, sem="acq_rel", scope="gpu")
            if n_done == num_splits - 1:
                row_end = tl.minimum(i_mb * BLOCK_M + BLOCK_M, G * R)
                for row_begin in range(i_mb * BLOCK_M, row_end, ROWS_BLK):
                    _merge_rows(p_acc, p_m, p_l, p_out, i_bh, i_b, i_h, row_begin, row_end, num_splits,
                                s_ob, s_or, s_oh, G, R, D, D_PAD, ROWS_BLK, S_BLK)
                tl.atomic_xchg(p_cnt + i_bhm, 0, sem="relaxed", scope="gpu")
    else:
        b_o = tl.where(b_l[:, None] > 0, b_acc / b_l[:, None], 0.0)
        p_o = p_out + i_b * s_ob + i_r[:, None] * s_or + (i_h * G + i_g)[:, None] * s_oh + o_d[None, :]
        tl.store(p_o, b_o.to(p_out.dtype.element_ty), mask=m_m[:, None] & m_d[None, :])


@triton.jit
def _splitkv_tuned_combine_kernel(
    p_acc, p_m, p_l, p_out, num_kv_heads, num_splits,
    s_ob, s_or, s_oh,
    G: tl.constexpr, R: tl.constexpr, D: tl.constexpr, D_PAD: tl.constexpr,
    ROWS_BLK: tl.constexpr, S_BLK: tl.constexpr,
):
    i_rb = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // num_kv_heads
    i_h = i_bh % num_kv_heads
    _merge_rows(p_acc, p_m, p_l, p_out, i_bh, i_b, i_h, i_rb * ROWS_BLK, G * R, num_splits,
                s_ob, s_or, s_oh, G, R, D, D_PAD, ROWS_BLK, S_BLK)


class TunedWorkspace:
    """fp32 partial buffers and arrival counters for the tuning variant."""

    def __init__(self, max_batch: int, max_rows: int, num_q_heads: int, head_dim: int,
                 max_splits: int, device) -> None:
        self.max_batch, self.max_rows, self.num_q_heads = max_batch, max_rows, num_q_heads
        self.head_dim, self.max_splits = head_dim, max_splits
        rows = max_batch * max_rows * num_q_heads * max_splits
        self.acc = torch.empty(rows * head_dim, dtype=torch.float32, device=device)
        self.m = torch.empty(rows, dtype=torch.float32, device=device)
        self.l = torch.empty(rows, dtype=torch.float32, device=device)
        self.counter = torch.zeros(max_batch * max_rows * num_q_heads, dtype=torch.int32, device=device)

    def check(self, batch: int, rows: int, num_q_heads: int, head_dim: int, num_splits: int) -> None:
        need = (batch, rows, num_q_heads, head_dim, num_splits)
        have = (self.max_batch, self.max_rows, self.num_q_heads, self.head_dim, self.max_splits)
        if any(n > h for n, h in zip(need, have)) or head_dim != self.head_dim:
            raise ValueError(f"workspace too small: need (batch, rows, Hq, D, splits) = {need}, "
                             f"have {have}")


def _next_pow2(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


def splitkv_tuned(q, k_cache, v_cache, visible_tokens, *, num_splits: int, config: LaunchConfig,
                  block_table=None, workspace: TunedWorkspace | None = None, scale=None, out=None):
    """Split-KV decode attention with explicit launch parameters.

    Args:
        q: ``[B, Hq, D]`` or ``[B, R, Hq, D]``, bf16 or fp16.
        k_cache, v_cache: ``[B, Hkv, S_max, D]``, or ``[num_blocks, Hkv, block_size, D]``
            when ``block_table`` (int32 ``[B, max_blocks]``) is given.
        visible_tokens: int32 ``[B]`` on q's device.
        num_splits: partitions of each request's visible range (1 = single pass).
        config: launch parameters.
    Returns:
        Tensor of q's shape and dtype.
    """
    q4 = q if q.dim() == 4 else q.unsqueeze(1)
    batch, rows, hq, dim = q4.shape
    hkv = k_cache.shape[1]
    if hq % hkv != 0:
        raise ValueError(f"Hq must be a multiple of Hkv, got Hq={hq}, Hkv={hkv}")
    if not 1 <= num_splits <= 1024:
        raise ValueError(f"num_splits must be in [1, 1024], got {num_splits}")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        if t.stride(-1) != 1:
            raise ValueError(f"{name} must have unit stride in D, got stride {t.stride(-1)}")
    group = hq // hkv
    if out is None:
        out = torch.empty_like(q)
    out4 = out if out.dim() == 4 else out.unsqueeze(1)
    paged = block_table is not None
    page = k_cache.shape[2] if paged else 1
    is_split = num_splits > 1
    if is_split:
        if workspace is None:
            workspace = TunedWorkspace(batch, rows, hq, dim, num_splits, q.device)
        workspace.check(batch, rows, hq, dim, num_splits)
        ws_acc, ws_m, ws_l, ws_cnt = workspace.acc, workspace.m, workspace.l, workspace.counter
    else:
        ws_acc = ws_m = ws_l = ws_cnt = out
    scale = 1.0 / math.sqrt(dim) if scale is None else scale
    d_pad = _next_pow2(max(dim, 16))
    rows_total = group * rows
    block_m = min(max(16, _next_pow2(rows_total)), config.max_block_m)
    num_m_blocks = -(-rows_total // block_m)
    s_blk = 8 if num_splits <= 8 else 32
    rows_blk = max(1, min(_next_pow2(min(rows_total, block_m)), 64 * 32 * config.num_warps // (s_blk * d_pad)))
    bt = block_table if paged else visible_tokens
    grid = (num_splits, batch * hkv * num_m_blocks)
    _splitkv_tuned_kernel[grid](
        q4, k_cache, v_cache, bt, visible_tokens, out4, ws_acc, ws_m, ws_l, ws_cnt,
        q4.stride(0), q4.stride(1), q4.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        bt.stride(0),
        out4.stride(0), out4.stride(1), out4.stride(2),
        hkv, num_m_blocks, num_splits, scale * _LOG2E,
        G=group, R=rows, D=dim, D_PAD=d_pad, BLOCK_M=block_m, BLOCK_N=config.block_n, PAGE=page,
        IS_PAGED=paged, IS_SPLIT=is_split, USE_FUSED_COMBINE=config.fused_combine,
        USE_FP32_DOT=_INTERPRET, USE_EVICT_FIRST=config.evict_first,
        USE_PAGE_PREFETCH=paged and config.prefetch_pages, ROWS_BLK=rows_blk, S_BLK=s_blk,
        num_warps=config.num_warps, num_stages=config.num_stages,
    )
    if is_split and not config.fused_combine:
        rows_blk = 1 if batch * hkv * rows_total <= 4096 else \
            max(1, min(_next_pow2(rows_total), 64 * 32 * config.combine_warps // (s_blk * d_pad)))
        grid_c = (triton.cdiv(rows_total, rows_blk), batch * hkv)
        _splitkv_tuned_combine_kernel[grid_c](
            ws_acc, ws_m, ws_l, out4, hkv, num_splits,
            out4.stride(0), out4.stride(1), out4.stride(2),
            G=group, R=rows, D=dim, D_PAD=d_pad, ROWS_BLK=rows_blk, S_BLK=s_blk,
            num_warps=config.combine_warps,
        )
    return out
