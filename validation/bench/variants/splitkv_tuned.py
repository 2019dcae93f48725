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
    """Launch parameters of the tuning variant."""

    block_n: int = 64
    num_warps: int = 4
    num_stages: int = 3
    fused_combine: bool = True
    combine_warps: int = 4

    def label(self) -> str:
        mode = "fused" if self.fused_combine else "twokernel"
        return f"n{self.block_n}-w{self.num_warps}-s{self.num_stages}-{mode}"

    @classmethod
    def from_label(cls, label: str) -> "LaunchConfig":
        """Parse `n64-w4-s3-fused` (or `-twokernel`) back into a config."""
        parts = label.split("-")
        if len(parts) != 4 or parts[3] not in ("fused", "twokernel") or \
                not all(p[:1] == c and p[1:].isdigit() for p, c in zip(parts[:3], "nws")):
            raise ValueError(f"launch config label must look like n64-w4-s3-fused, got {label!r}")
        return cls(block_n=int(parts[0][1:]), num_warps=int(parts[1][1:]), num_stages=int(parts[2][1:]),
                   fused_combine=parts[3] == "fused")


@triton.jit
def _merge_rows(
    p_acc, p_m, p_l, p_out, i_bh, i_b, i_h, row_begin, num_splits,
    s_ob, s_or, s_oh,
    G: tl.constexpr, R: tl.constexpr, D: tl.constexpr, D_PAD: tl.constexpr,
    ROWS: tl.constexpr, ROWS_BLK: tl.constexpr, S_BLK: tl.constexpr,
):
    o_rb = row_begin + tl.arange(0, ROWS_BLK)
    m_rb = o_rb < G * R
    o_s = tl.arange(0, S_BLK)
    o_d = tl.arange(0, D_PAD)
    m_d = o_d < D
    # first pass: the largest running max of every row over all splits
    b_mmax = tl.full([ROWS_BLK], float("-inf"), dtype=tl.float32)
    for i_s0 in range(0, num_splits, S_BLK):
        m_s = (i_s0 + o_s) < num_splits
        o_ml = (i_bh * num_splits + i_s0 + o_s)[None, :] * ROWS + o_rb[:, None]  # [ROWS_BLK, S_BLK]
        b_mp = tl.load(p_m + o_ml, mask=m_rb[:, None] & m_s[None, :], other=float("-inf"),
                       cache_modifier=".cg")
        b_mmax = tl.maximum(b_mmax, tl.max(b_mp, axis=1))
    b_mref = tl.where(b_mmax == float("-inf"), 0.0, b_mmax)
    b_lsum = tl.zeros([ROWS_BLK], dtype=tl.float32)
    b_o = tl.zeros([ROWS_BLK, D_PAD], dtype=tl.float32)
    for i_s0 in range(0, num_splits, S_BLK):
        m_s = (i_s0 + o_s) < num_splits
        m_rs = m_rb[:, None] & m_s[None, :]
        o_ml = (i_bh * num_splits + i_s0 + o_s)[None, :] * ROWS + o_rb[:, None]  # [ROWS_BLK, S_BLK]
        b_mp = tl.load(p_m + o_ml, mask=m_rs, other=float("-inf"), cache_modifier=".cg")
        b_lp = tl.load(p_l + o_ml, mask=m_rs, other=0.0, cache_modifier=".cg")
        b_w = tl.exp2(b_mp - b_mref[:, None])  # [ROWS_BLK, S_BLK]
        b_lsum += tl.sum(b_w * b_lp, axis=1)
        b_a = tl.load(p_acc + o_ml[:, :, None] * D + o_d[None, None, :],
                      mask=m_rs[:, :, None] & m_d[None, None, :], other=0.0,
                      cache_modifier=".cg")  # [ROWS_BLK, S_BLK, D_PAD]
        b_o += tl.sum(b_w[:, :, None] * b_a, axis=1)
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
    num_kv_heads, num_splits, scale_log2,
    G: tl.constexpr, R: tl.constexpr, D: tl.constexpr, D_PAD: tl.constexpr, M_PAD: tl.constexpr,
    BLOCK_N: tl.constexpr, PAGE: tl.constexpr,
    IS_PAGED: tl.constexpr, IS_SPLIT: tl.constexpr, USE_FUSED_COMBINE: tl.constexpr,
    USE_FP32_DOT: tl.constexpr, ROWS_BLK: tl.constexpr, S_BLK: tl.constexpr,
):
    i_s = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // num_kv_heads
    i_h = i_bh % num_kv_heads
    n_vis = tl.load(p_vis + i_b)
    chunk = tl.cdiv(tl.cdiv(n_vis, num_splits), BLOCK_N) * BLOCK_N
    lo = i_s * chunk
    hi = tl.minimum(lo + chunk, n_vis)

    o_m = tl.arange(0, M_PAD)
    m_m = o_m < G * R
    i_r = o_m // G
    i_g = o_m % G
    row_limit = n_vis - (R - 1 - i_r)  # [M_PAD] tokens each row sees
    o_d = tl.arange(0, D_PAD)
    m_d = o_d < D
    p_qm = p_q + i_b * s_qb + i_r[:, None] * s_qr + (i_h * G + i_g)[:, None] * s_qh + o_d[None, :]
    b_q = tl.load(p_qm, mask=m_m[:, None] & m_d[None, :], other=0.0)  # [M_PAD, D_PAD]
    if USE_FP32_DOT:
        b_q = b_q.to(tl.float32)

    b_m = tl.full([M_PAD], float("-inf"), dtype=tl.float32)
    b_l = tl.zeros([M_PAD], dtype=tl.float32)
    b_acc = tl.zeros([M_PAD, D_PAD], dtype=tl.float32)
    for start in range(lo, hi, BLOCK_N):
        o_n = start + tl.arange(0, BLOCK_N)
        m_n = o_n < hi
        if IS_PAGED:
            i_blk = tl.load(p_bt + i_b * s_btb + o_n // PAGE, mask=m_n, other=0)
            o_k = i_blk.to(tl.int64) * s_kb + (o_n % PAGE) * s_kn
            o_v = i_blk.to(tl.int64) * s_vb + (o_n % PAGE) * s_vn
        else:
            o_k = i_b.to(tl.int64) * s_kb + o_n * s_kn
            o_v = i_b.to(tl.int64) * s_vb + o_n * s_vn
        b_k = tl.load(p_k + i_h * s_kh + o_k[:, None] + o_d[None, :],
                      mask=m_n[:, None] & m_d[None, :], other=0.0)  # [BLOCK_N, D_PAD]
        if USE_FP32_DOT:
            b_k = b_k.to(tl.float32)
        b_s = tl.dot(b_q, tl.trans(b_k)) * scale_log2  # [M_PAD, BLOCK_N]
        b_s = tl.where((o_n[None, :] < row_limit[:, None]) & m_n[None, :], b_s, float("-inf"))
        b_mnew = tl.maximum(b_m, tl.max(b_s, axis=1))
        b_mref = tl.where(b_mnew == float("-inf"), 0.0, b_mnew)
        b_p = tl.exp2(b_s - b_mref[:, None])  # [M_PAD, BLOCK_N]
        b_alpha = tl.exp2(b_m - b_mref)
        b_l = b_l * b_alpha + tl.sum(b_p, axis=1)
        b_v = tl.load(p_v + i_h * s_vh + o_v[:, None] + o_d[None, :],
                      mask=m_n[:, None] & m_d[None, :], other=0.0)  # [BLOCK_N, D_PAD]
        if USE_FP32_DOT:
            b_acc = b_acc * b_alpha[:, None] + tl.dot(b_p, b_v.to(tl.float32))
        else:
            b_acc = b_acc * b_alpha[:, None] + tl.dot(b_p.to(b_v.dtype), b_v)
        b_m = b_mnew

    if IS_SPLIT:
        o_ml = (i_bh * num_splits + i_s) * (G * R) + o_m  # [M_PAD]
        tl.store(p_m + o_ml, b_m, mask=m_m)
        tl.store(p_l + o_ml, b_l, mask=m_m)
        tl.store(p_acc + o_ml[:, None] * D + o_d[None, :], b_acc, mask=m_m[:, None] & m_d[None, :])
        if USE_FUSED_COMBINE:
            tl.debug_barrier()
            n_done = tl.atomic_add(p_cnt + i_bh, 1, sem="acq_rel", scope="gpu")
            if n_done == num_splits - 1:
                for row_begin in range(0, G * R, ROWS_BLK):
                    _merge_rows(p_acc, p_m, p_l, p_out, i_bh, i_b, i_h, row_begin, num_splits,
                                s_ob, s_or, s_oh, G, R, D, D_PAD, G * R, ROWS_BLK, S_BLK)
                tl.atomic_xchg(p_cnt + i_bh, 0, sem="relaxed", scope="gpu")
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
    _merge_rows(p_acc, p_m, p_l, p_out, i_bh, i_b, i_h, i_rb * ROWS_BLK, num_splits,
                s_ob, s_or, s_oh, G, R, D, D_PAD, G * R, ROWS_BLK, S_BLK)


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
        self.counter = torch.zeros(max_batch * num_q_heads, dtype=torch.int32, device=device)

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
    m_pad = max(16, _next_pow2(group * rows))
    s_blk = min(_next_pow2(num_splits), 32)
    rows_blk = max(1, min(_next_pow2(group * rows), 8192 // (s_blk * d_pad)))
    bt = block_table if paged else visible_tokens
    grid = (num_splits, batch * hkv)
    _splitkv_tuned_kernel[grid](
        q4, k_cache, v_cache, bt, visible_tokens, out4, ws_acc, ws_m, ws_l, ws_cnt,
        q4.stride(0), q4.stride(1), q4.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        bt.stride(0),
        out4.stride(0), out4.stride(1), out4.stride(2),
        hkv, num_splits, scale * _LOG2E,
        G=group, R=rows, D=dim, D_PAD=d_pad, M_PAD=m_pad, BLOCK_N=config.block_n, PAGE=page,
        IS_PAGED=paged, IS_SPLIT=is_split, USE_FUSED_COMBINE=config.fused_combine,
        USE_FP32_DOT=_INTERPRET, ROWS_BLK=rows_blk, S_BLK=s_blk,
        num_warps=config.num_warps, num_stages=config.num_stages,
    )
    if is_split and not config.fused_combine:
        grid_c = (triton.cdiv(group * rows, rows_blk), batch * hkv)
        _splitkv_tuned_combine_kernel[grid_c](
            ws_acc, ws_m, ws_l, out4, hkv, num_splits,
            out4.stride(0), out4.stride(1), out4.stride(2),
            G=group, R=rows, D=dim, D_PAD=d_pad, ROWS_BLK=rows_blk, S_BLK=s_blk,
            num_warps=config.combine_warps,
        )
    return out
