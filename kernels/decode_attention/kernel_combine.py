"""Split-KV decode attention: the combine kernel (log-sum-exp merge of the partials).

One program per output vector (request, row, query head). It rescales each split's
unnormalized accumulator by exp2(m_s - max_s m_s), sums, and divides by the rescaled
sum of the softmax denominators: README.md derives it. Split 0 seeds the sums, so with
one split every factor is exp2(0) = 1 and the result is the single-pass division bit
for bit. Empty splits carry m = -inf, l = 0 and contribute exactly nothing.
"""

import triton
import triton.language as tl


@triton.jit
def _load_split(partial_acc, partial_max, partial_sum, p_part, i_s, num_splits, o_d, m_d, HEAD_DIM: tl.constexpr):
    # split i_s's (m, acc, l); past the last split: (-inf, a finite row, 0), weight exp2(-inf) = 0
    i_row = tl.minimum(i_s, num_splits - 1)
    m_s = tl.where(i_s < num_splits, tl.load(partial_max + p_part + i_row), float("-inf"))
    l_s = tl.where(i_s < num_splits, tl.load(partial_sum + p_part + i_row), 0.0)
    b_a = tl.load(partial_acc + (p_part + i_row) * HEAD_DIM + o_d, mask=m_d, other=0.0)  # [BLOCK_D]
    return m_s, b_a, l_s


@triton.jit
def _merge_split(acc, l_sum, m_s, b_a, l_s, m_safe):
    w = tl.exp2(m_s - m_safe)
    return acc + w * b_a, l_sum + w * l_s


@triton.jit
def decode_attention_combine_kernel(
    partial_acc,
    partial_max,
    partial_sum,
    out,
    num_splits,
    num_q_heads,
    stride_ob,
    stride_or,
    stride_oh,
    ROWS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    i_row = tl.program_id(0).to(tl.int64)
    i_h = i_row % num_q_heads
    i_r = (i_row // num_q_heads) % ROWS
    i_b = i_row // (num_q_heads * ROWS)
    o_d = tl.arange(0, BLOCK_D)  # [BLOCK_D]
    m_d = o_d < HEAD_DIM
    o_s = tl.arange(0, BLOCK_S)  # [BLOCK_S]

    p_part = i_row * num_splits
    b_m = tl.load(partial_max + p_part + o_s, mask=o_s < num_splits, other=float("-inf"))  # [BLOCK_S]
    m_max = tl.max(b_m, 0)
    m_safe = tl.where(m_max == float("-inf"), 0.0, m_max)

    w = tl.exp2(tl.load(partial_max + p_part) - m_safe)
    acc = w * tl.load(partial_acc + p_part * HEAD_DIM + o_d, mask=m_d, other=0.0)  # [BLOCK_D]
    l_sum = w * tl.load(partial_sum + p_part)
    # Splits 1.. are merged in order, sixteen at a time: the sixteen row loads are issued
    # before the sixteen updates, so that one L2 latency covers sixteen splits (32 splits
    # take two rounds). A split past the end has weight exp2(-inf) = 0 and adds an exact
    # zero; the order of the updates, hence every bit, is that of a one-at-a-time loop.
    for i_s in range(1, num_splits, 16):
        m_1, a_1, l_1 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s, num_splits, o_d, m_d, HEAD_DIM)
        m_2, a_2, l_2 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 1, num_splits, o_d, m_d, HEAD_DIM)
        m_3, a_3, l_3 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 2, num_splits, o_d, m_d, HEAD_DIM)
        m_4, a_4, l_4 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 3, num_splits, o_d, m_d, HEAD_DIM)
        m_5, a_5, l_5 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 4, num_splits, o_d, m_d, HEAD_DIM)
        m_6, a_6, l_6 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 5, num_splits, o_d, m_d, HEAD_DIM)
        m_7, a_7, l_7 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 6, num_splits, o_d, m_d, HEAD_DIM)
        m_8, a_8, l_8 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 7, num_splits, o_d, m_d, HEAD_DIM)
        m_9, a_9, l_9 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 8, num_splits, o_d, m_d, HEAD_DIM)
        m_10, a_10, l_10 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 9, num_splits, o_d, m_d, HEAD_DIM)
        m_11, a_11, l_11 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 10, num_splits, o_d, m_d, HEAD_DIM)
        m_12, a_12, l_12 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 11, num_splits, o_d, m_d, HEAD_DIM)
        m_13, a_13, l_13 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 12, num_splits, o_d, m_d, HEAD_DIM)
        m_14, a_14, l_14 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 13, num_splits, o_d, m_d, HEAD_DIM)
        m_15, a_15, l_15 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 14, num_splits, o_d, m_d, HEAD_DIM)
        m_16, a_16, l_16 = _load_split(partial_acc, partial_max, partial_sum, p_part, i_s + 15, num_splits, o_d, m_d, HEAD_DIM)
        acc, l_sum = _merge_split(acc, l_sum, m_1, a_1, l_1, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_2, a_2, l_2, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_3, a_3, l_3, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_4, a_4, l_4, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_5, a_5, l_5, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_6, a_6, l_6, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_7, a_7, l_7, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_8, a_8, l_8, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_9, a_9, l_9, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_10, a_10, l_10, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_11, a_11, l_11, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_12, a_12, l_12, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_13, a_13, l_13, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_14, a_14, l_14, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_15, a_15, l_15, m_safe)
        acc, l_sum = _merge_split(acc, l_sum, m_16, a_16, l_16, m_safe)

    l_safe = tl.where(l_sum > 0.0, l_sum, 1.0)
    b_o = acc / l_safe  # [BLOCK_D]
    p_o = out + i_b * stride_ob + i_r * stride_or + i_h * stride_oh + o_d
    tl.store(p_o, b_o.to(out.dtype.element_ty), mask=m_d)
