"""A rotated KV loop: the next tile's scores are issued before the current tile's softmax and p.v.

Prototype for the bf16 bars of the serving-path issue (head dim 256, R = 16, one KV head),
kept out of the kernels. In the committed loop (`kernel_partial._online_softmax_range`)
each tile runs q.k -> softmax -> p.v in order, so the tensor cores wait on the softmax and
the softmax on q.k. Here the scores of tile i + 1 are computed at the top of iteration i,
before tile i's softmax and p.v, which leaves the compiler (an async wgmma, or ptxas
interleaving mma.sync with the softmax's arithmetic) independent work to overlap. Every
tile still runs exactly the committed arithmetic in the same order, so the outputs are
expected to be the same bits (checked, not assumed, by `measure.py`).

Contiguous bf16/fp16 caches only; every other case (paged, 8-bit, fp64 dots) runs the
committed loop unchanged. `install()` swaps the loop into `kernel_partial` before any
kernel is compiled in the process.
"""

import triton
import triton.language as tl

from kernels.decode_attention import kernel_partial

_COMMITTED_LOOP = kernel_partial._online_softmax_range


@triton.jit
def _tile_scores(b_q, p_k, n0, n_end, stride_ks, o_d, m_d, BLOCK_N: tl.constexpr):
    o_n = n0 + tl.arange(0, BLOCK_N)  # [BLOCK_N]
    m_kv = (o_n < n_end)[:, None] & m_d[None, :]
    b_k = tl.load(p_k + (o_n * stride_ks)[:, None] + o_d[None, :], mask=m_kv, other=0.0)  # [BLOCK_N, BLOCK_D]
    return tl.dot(b_q, tl.trans(b_k))  # [BLOCK_M, BLOCK_N]


@triton.jit
def _rotated_contiguous(b_q, acc, m_i, l_i, p_k, p_v, stride_ks, stride_vs, n_start, n_end, row_limit, qk_scale,
                        o_d, m_d, n_unmasked, BLOCK_N: tl.constexpr):
    b_s_next = _tile_scores(b_q, p_k, n_start, n_end, stride_ks, o_d, m_d, BLOCK_N)
    for n0 in range(n_start, n_end, BLOCK_N):
        b_s = b_s_next
        b_s_next = _tile_scores(b_q, p_k, n0 + BLOCK_N, n_end, stride_ks, o_d, m_d, BLOCK_N)
        o_n = n0 + tl.arange(0, BLOCK_N)  # [BLOCK_N]
        m_n = o_n < n_end
        m_kv = m_n[:, None] & m_d[None, :]
        b_s = b_s * qk_scale
        if n0 + BLOCK_N > n_unmasked:
            m_s = m_n[None, :] & (o_n[None, :] < row_limit[:, None])  # [BLOCK_M, BLOCK_N]
            b_s = tl.where(m_s, b_s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(b_s, 1))  # [BLOCK_M]
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)  # [BLOCK_M]
        b_p = tl.exp2(b_s - m_safe[:, None])  # [BLOCK_M, BLOCK_N]
        l_i = l_i * alpha + tl.sum(b_p, 1)
        b_v = tl.load(p_v + (o_n * stride_vs)[:, None] + o_d[None, :], mask=m_kv, other=0.0)  # [BLOCK_N, BLOCK_D]
        b_p = b_p.to(b_v.dtype)
        acc = acc * alpha[:, None]
        acc = tl.dot(b_p, b_v, acc)
        m_i = m_new
    return acc, m_i, l_i


@triton.jit
def rotated_online_softmax_range(
    b_q, acc, m_i, l_i, p_k, p_v, p_block_table, p_ks, p_vs, stride_kblk, stride_ks, stride_vblk, stride_vs,
    stride_sblk, n_start, n_end, row_limit, qk_scale, o_d, m_d,
    BLOCK_N: tl.constexpr, PAGE_SIZE: tl.constexpr, IS_PAGED: tl.constexpr, PREFETCH_PAGES: tl.constexpr,
    SCALAR_PAGES: tl.constexpr, DOT_FP64: tl.constexpr, n_unmasked, num_blocks, KV_SCALES: tl.constexpr,
):
    if IS_PAGED or DOT_FP64 or KV_SCALES != 0:
        acc, m_i, l_i = _committed_loop(
            b_q, acc, m_i, l_i, p_k, p_v, p_block_table, p_ks, p_vs, stride_kblk, stride_ks, stride_vblk, stride_vs,
            stride_sblk, n_start, n_end, row_limit, qk_scale, o_d, m_d, BLOCK_N, PAGE_SIZE, IS_PAGED,
            PREFETCH_PAGES, SCALAR_PAGES, DOT_FP64, n_unmasked, num_blocks, KV_SCALES)
    else:
        acc, m_i, l_i = _rotated_contiguous(b_q, acc, m_i, l_i, p_k, p_v, stride_ks, stride_vs, n_start, n_end,
                                            row_limit, qk_scale, o_d, m_d, n_unmasked, BLOCK_N)
    return acc, m_i, l_i


_committed_loop = _COMMITTED_LOOP


def install() -> None:
    """Make the partial/single-pass kernel use the rotated loop (call before any compile)."""
    kernel_partial._online_softmax_range = rotated_online_softmax_range
