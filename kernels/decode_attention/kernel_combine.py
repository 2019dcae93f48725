"""Split-KV decode attention: the combine kernel (log-sum-exp merge of the partials).

One program per output vector (request, row, query head). Split 0 seeds the merge
unscaled: acc = acc_0, l = l_0, running max m_0. Then splits 1.. arrive in tiles of
BLOCK_S rows, each tile loaded in one go ([BLOCK_S, D] accumulators, [BLOCK_S] maxima
and sums): the running max moves to the tile's, the merge so far is rescaled by
exp2(m_old - m_new), and the tile's rows are added with weights exp2(m_s - m_new).
README.md derives it. With one split no tile runs and the output is acc_0 / l_0, the
single-pass division bit for bit. Empty splits carry m = -inf, l = 0 and weigh exactly
nothing; so do the masked rows past the last split.

`merge_slots` is the same merge done in place by the partial kernel's last program of a
(request, KV head) when the launch fuses the combine (`launch_config.fused_merge_tile`):
all query rows of the program at once, slots in tiles of MERGE_SLOTS.

With USE_PDL the kernel is launched as a programmatic dependent of the partial kernel
(Hopper and later): its programs may start before the partial grid ends and wait at
`gdc_wait` until the partials are complete and visible. With TRIGGER_NEXT it then
lets the next launch on the stream start early (the next partial kernel waits for
this grid before it reads anything).
"""

import triton
import triton.language as tl


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
    USE_PDL: tl.constexpr,
    TRIGGER_NEXT: tl.constexpr,
):
    i_row = tl.program_id(0).to(tl.int64)
    i_h = i_row % num_q_heads
    i_r = (i_row // num_q_heads) % ROWS
    i_b = i_row // (num_q_heads * ROWS)
    o_d = tl.arange(0, BLOCK_D)  # [BLOCK_D]
    m_d = o_d < HEAD_DIM
    o_s = tl.arange(0, BLOCK_S)  # [BLOCK_S]
    p_part = i_row * num_splits
    if USE_PDL:
        tl.extra.cuda.gdc_wait()
    if TRIGGER_NEXT:  # the next launch may be scheduled now; it waits for this grid to finish
        tl.extra.cuda.gdc_launch_dependents()

    m_run = tl.load(partial_max + p_part)
    l_sum = tl.load(partial_sum + p_part)
    acc = tl.load(partial_acc + p_part * HEAD_DIM + o_d, mask=m_d, other=0.0)  # [BLOCK_D]
    for i_s0 in range(1, num_splits, BLOCK_S):
        o_t = i_s0 + o_s  # [BLOCK_S]
        m_t = o_t < num_splits
        b_m = tl.load(partial_max + p_part + o_t, mask=m_t, other=float("-inf"))  # [BLOCK_S]
        b_l = tl.load(partial_sum + p_part + o_t, mask=m_t, other=0.0)  # [BLOCK_S]
        b_a = tl.load(
            partial_acc + (p_part + o_t)[:, None] * HEAD_DIM + o_d[None, :],
            mask=m_t[:, None] & m_d[None, :],
            other=0.0,
        )  # [BLOCK_S, BLOCK_D]
        m_new = tl.maximum(m_run, tl.max(b_m, 0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_run - m_safe)
        w = tl.exp2(b_m - m_safe)  # [BLOCK_S]
        acc = acc * alpha + tl.sum(w[:, None] * b_a, 0)
        l_sum = l_sum * alpha + tl.sum(w * b_l, 0)
        m_run = m_new

    l_safe = tl.where(l_sum > 0.0, l_sum, 1.0)
    b_o = acc / l_safe  # [BLOCK_D]
    p_o = out + i_b * stride_ob + i_r * stride_or + i_h * stride_oh + o_d
    tl.store(p_o, b_o.to(out.dtype.element_ty), mask=m_d)


@triton.jit
def merge_slots(
    partial_acc,
    partial_max,
    partial_sum,
    p_part,
    m_rows,
    num_slots,
    o_d,
    m_d,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    MERGE_ROWS: tl.constexpr,
    MERGE_SLOTS: tl.constexpr,
):
    """Merged (acc, l) of rows whose slots start at p_part [MERGE_ROWS]; masked rows stay 0.

    The running max starts at -inf with nothing accumulated, so one slot returns its own
    (acc, l) exactly (exp2(-inf) = 0 and weight exp2(0) = 1), and empty slots weigh 0.
    Loads bypass L1 (.cg): the slots were written by other programs of the same grid.
    """
    o_s = tl.arange(0, MERGE_SLOTS)  # [MERGE_SLOTS]
    m_run = tl.full([MERGE_ROWS], float("-inf"), dtype=tl.float32)  # [MERGE_ROWS]
    l_run = tl.zeros([MERGE_ROWS], dtype=tl.float32)  # [MERGE_ROWS]
    acc = tl.zeros([MERGE_ROWS, BLOCK_D], dtype=tl.float32)  # [MERGE_ROWS, BLOCK_D]
    for i_s0 in range(0, num_slots, MERGE_SLOTS):
        o_t = i_s0 + o_s  # [MERGE_SLOTS]
        m_t = m_rows[:, None] & (o_t[None, :] < num_slots)  # [MERGE_ROWS, MERGE_SLOTS]
        p_t = p_part[:, None] + o_t[None, :]  # [MERGE_ROWS, MERGE_SLOTS]
        b_m = tl.load(partial_max + p_t, mask=m_t, other=float("-inf"), cache_modifier=".cg")
        b_l = tl.load(partial_sum + p_t, mask=m_t, other=0.0, cache_modifier=".cg")
        b_a = tl.load(
            partial_acc + p_t[:, :, None] * HEAD_DIM + o_d[None, None, :],
            mask=m_t[:, :, None] & m_d[None, None, :],
            other=0.0,
            cache_modifier=".cg",
        )  # [MERGE_ROWS, MERGE_SLOTS, BLOCK_D]
        m_new = tl.maximum(m_run, tl.max(b_m, 1))  # [MERGE_ROWS]
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_run - m_safe)  # [MERGE_ROWS]
        w = tl.exp2(b_m - m_safe[:, None])  # [MERGE_ROWS, MERGE_SLOTS]
        acc = acc * alpha[:, None] + tl.sum(w[:, :, None] * b_a, 1)
        l_run = l_run * alpha + tl.sum(w * b_l, 1)
        m_run = m_new
    return acc, l_run
