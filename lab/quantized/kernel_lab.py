"""Lab partial kernel for 8-bit KV caches: the candidate V layouts and compute paths.

A standalone copy of `kernels/decode_attention/kernel_partial.py`'s split program (one
program per (request, KV head, block of query rows, split); partials (acc, m, l) in fp32;
the last program of a (request, KV head) merges in place with the project's
`merge_slots`, or the project's combine kernel runs after it). Nothing in the hot path is
imported except the merge. Compile-time choices:

- KV_FORMAT: 1 int8 with a scale per (token, KV head); 2 FP8 e4m3 with a scale per KV
  head (stride_sh = 1) or per tensor (stride_sh = 0). Dequantized = stored * scale.
- V_TRANS: V is stored transposed, [.., D, tokens] ([B, Hkv, D, S_max] contiguous,
  [num_blocks, Hkv, D, page_size] paged), so the p.v operand is tokens-contiguous like
  K is for q.k: an 8-bit operand that needs no transposition in shared memory.
- CVT: 0 the project's conversions (int8 -> fp32 -> q's dtype, e4m3 -> q's dtype; dots in
  q's dtype); 1 int8 -> fp16 by byte permutes (PTX prmt, the magic number 0x6400 | (x ^ 0x80)
  minus 1152), e4m3 -> fp16 in one conversion, dots in fp16 (q cast to fp16 once);
  2 the same magic number written as Triton bit operations (what the interpreter runs for 1).
- FP8_DOT (FP8 cache only): 1 q quantized to e4m3 with a scale per query row (= per head at
  R = 1) and q.k in FP8 (p.v as CVT says); 2 also p quantized to e4m3 as p * 256 and p.v in
  FP8; fp32 accumulation.
- DOT_F32: dot operands cast to fp32 (the interpreter, whose bf16 and fp8 dots are wrong).

Scores are in the log2 domain, s = q.k * scale * log2(e), as in the project.
"""

import triton
import triton.language as tl

from kernels.decode_attention.kernel_combine import merge_slots

P_FP8_SCALE = tl.constexpr(256.0)  # p in [0, 1] -> [0, 256] in e4m3 (max 448); a power of two, undone exactly
FP8_MAX = tl.constexpr(448.0)


@triton.jit
def _int8_to_fp16(x, CVT: tl.constexpr):
    """int8 -> fp16, exact: fp16 bits 0x6400 | (x ^ 0x80) are 1024 + (x + 128); minus 1152 is x."""
    if CVT == 1:
        return tl.inline_asm_elementwise(
            asm="""{
            .reg .b32 t, m;
            xor.b32 t, $2, 0x80808080;
            mov.b32 m, 0x64806480;
            prmt.b32 $0, t, 0x64646464, 0x5150;
            prmt.b32 $1, t, 0x64646464, 0x5352;
            sub.f16x2 $0, $0, m;
            sub.f16x2 $1, $1, m;
            }""",
            constraints="=r,=r,r",
            args=[x],
            dtype=tl.float16,
            is_pure=True,
            pack=4,
        )
    else:
        u = (x.to(tl.int16, bitcast=False) & 0xFF) ^ 0x80  # x + 128 in 0..255
        h = (u | 0x6400).to(tl.float16, bitcast=True)  # 1024 + u
        return h - 1152.0


@triton.jit
def _to_dot_dtype(b, DOT_DTYPE: tl.constexpr, KV_FORMAT: tl.constexpr, CVT: tl.constexpr):
    """A K or V tile as stored -> the dot's operand dtype, exactly."""
    if KV_FORMAT == 1:
        if CVT == 0:
            return b.to(tl.float32).to(DOT_DTYPE)
        else:
            return _int8_to_fp16(b, CVT)
    else:
        return b.to(DOT_DTYPE)


@triton.jit
def lab_partial_kernel(
    q, k_cache, v_cache, block_table, visible_tokens, out,
    partial_acc, partial_max, partial_sum, counters, k_scale, v_scale,
    qk_scale, num_splits, num_m_blocks, num_kv_heads, num_q_heads, capacity, num_blocks,
    stride_qb, stride_qr, stride_qh,
    stride_kb, stride_kh, stride_ks,
    stride_vb, stride_vh, stride_vs,
    stride_ob, stride_or, stride_oh,
    stride_bt, stride_sb, stride_sh,
    ROWS: tl.constexpr, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PAGE_SIZE: tl.constexpr, IS_PAGED: tl.constexpr,
    FUSED_COMBINE: tl.constexpr, MERGE_ROWS: tl.constexpr, MERGE_SLOTS: tl.constexpr,
    KV_FORMAT: tl.constexpr, V_TRANS: tl.constexpr, CVT: tl.constexpr, FP8_DOT: tl.constexpr,
    DOT_F32: tl.constexpr,
):
    i_s = tl.program_id(0)
    i_bhm = tl.program_id(1)
    i_mb = i_bhm % num_m_blocks
    i_bh = i_bhm // num_m_blocks
    i_kvh = i_bh % num_kv_heads
    i_b = i_bh // num_kv_heads

    o_m = i_mb * BLOCK_M + tl.arange(0, BLOCK_M)  # [BLOCK_M]
    m_m = o_m < GROUP * ROWS
    i_r = o_m // GROUP
    i_h = i_kvh * GROUP + o_m % GROUP
    o_d = tl.arange(0, BLOCK_D)  # [BLOCK_D]
    m_d = o_d < HEAD_DIM

    p_q = q + i_b.to(tl.int64) * stride_qb + i_r[:, None] * stride_qr + i_h[:, None] * stride_qh + o_d[None, :]
    b_q = tl.load(p_q, mask=m_m[:, None] & m_d[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]
    if CVT > 0:
        dot_dtype: tl.constexpr = tl.float16
    else:
        dot_dtype: tl.constexpr = q.dtype.element_ty

    visible = tl.load(visible_tokens + i_b)
    visible = tl.minimum(tl.maximum(visible, 0), capacity)
    row_limit = tl.where(m_m, visible - (ROWS - 1 - i_r), 0)  # [BLOCK_M]
    chunk = tl.cdiv(visible, num_splits)
    chunk = tl.cdiv(chunk, BLOCK_N) * BLOCK_N
    n_start = i_s * chunk
    n_end = tl.minimum(n_start + chunk, visible)

    if IS_PAGED:
        p_k = k_cache + i_kvh.to(tl.int64) * stride_kh
        p_v = v_cache + i_kvh.to(tl.int64) * stride_vh
        p_bt = block_table + i_b.to(tl.int64) * stride_bt
    else:
        p_k = k_cache + i_b.to(tl.int64) * stride_kb + i_kvh.to(tl.int64) * stride_kh
        p_v = v_cache + i_b.to(tl.int64) * stride_vb + i_kvh.to(tl.int64) * stride_vh
        p_bt = block_table
    if KV_FORMAT == 1:  # a scale per (request or page, KV head, token)
        p_ks = k_scale + i_kvh.to(tl.int64) * stride_sh
        p_vs = v_scale + i_kvh.to(tl.int64) * stride_sh
        if not IS_PAGED:
            p_ks += i_b.to(tl.int64) * stride_sb
            p_vs += i_b.to(tl.int64) * stride_sb
    else:  # a scale per KV head or tensor, folded once
        p_ks = k_scale
        p_vs = v_scale
        qk_scale = qk_scale * tl.load(k_scale + i_kvh * stride_sh).to(tl.float32)

    if FP8_DOT:  # q / q_scale in e4m3, q_scale per row; the score takes q_scale back per row
        b_qf = b_q.to(tl.float32)
        q_amax = tl.max(tl.abs(b_qf), 1)  # [BLOCK_M]
        q_scale = tl.where(q_amax > 0.0, q_amax / FP8_MAX, 1.0)  # [BLOCK_M]
        b_qd = (b_qf / q_scale[:, None]).to(tl.float8e4nv)
        row_scale = q_scale * qk_scale  # [BLOCK_M]
    else:
        b_qd = b_q.to(dot_dtype)
        row_scale = tl.full([BLOCK_M], 1.0, dtype=tl.float32)  # [BLOCK_M], unused

    n_unmasked = tl.minimum(n_end, visible - (ROWS - 1))
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)  # [BLOCK_M, BLOCK_D]
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)  # [BLOCK_M]
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)  # [BLOCK_M]
    if IS_PAGED:  # page ids one tile ahead (addresses only)
        o_first = n_start + tl.arange(0, BLOCK_N)  # [BLOCK_N]
        i_page_next = tl.load(p_bt + o_first // PAGE_SIZE, mask=o_first < n_end, other=0)  # [BLOCK_N]
    else:
        i_page_next = tl.zeros([BLOCK_N], dtype=tl.int32)  # [BLOCK_N], unused
    for n_tile in range(n_start, n_end, BLOCK_N):
        n0 = tl.multiple_of(n_tile, BLOCK_N)  # splits start at multiples of BLOCK_N: tokens-contiguous V loads vectorize
        o_n = n0 + tl.arange(0, BLOCK_N)  # [BLOCK_N]
        m_n = o_n < n_end
        if IS_PAGED:
            i_page = i_page_next.to(tl.int64)
            o_next = o_n + BLOCK_N
            i_page_next = tl.load(p_bt + o_next // PAGE_SIZE, mask=o_next < n_end, other=0)
            page_ok = (i_page >= 0) & (i_page < num_blocks)  # [BLOCK_N]
            i_page = tl.where(page_ok, i_page, 0)
            m_n = m_n & page_ok
            tile_pages_ok = tl.min(page_ok.to(tl.int32), 0) > 0
            o_slot = o_n % PAGE_SIZE
            o_k = i_page * stride_kb + o_slot * stride_ks  # [BLOCK_N]
            o_vb = i_page * stride_vb  # [BLOCK_N]
            o_sc = i_page * stride_sb + o_slot  # [BLOCK_N]
        else:
            o_slot = o_n
            o_k = o_n * stride_ks  # [BLOCK_N]
            o_vb = o_n * 0  # [BLOCK_N]
            o_sc = o_n  # [BLOCK_N]
        m_kv = m_n[:, None] & m_d[None, :]  # [BLOCK_N, BLOCK_D]
        b_k = tl.load(p_k + o_k[:, None] + o_d[None, :], mask=m_kv, other=0.0)  # [BLOCK_N, BLOCK_D]
        if FP8_DOT == 0:
            b_k = _to_dot_dtype(b_k, dot_dtype, KV_FORMAT, CVT)
        if DOT_F32:
            b_s = tl.dot(b_qd.to(tl.float32), tl.trans(b_k.to(tl.float32)))
        else:
            b_s = tl.dot(b_qd, tl.trans(b_k))  # [BLOCK_M, BLOCK_N]
        if KV_FORMAT == 1:
            b_ks = tl.load(p_ks + o_sc, mask=m_n, other=0.0).to(tl.float32)  # [BLOCK_N]
            b_s = b_s * (b_ks * qk_scale)[None, :]
        elif FP8_DOT:
            b_s = b_s * row_scale[:, None]
        else:
            b_s = b_s * qk_scale
        if IS_PAGED:
            mask_scores = (n0 + BLOCK_N > n_unmasked) | (tile_pages_ok == 0)
        else:
            mask_scores = n0 + BLOCK_N > n_unmasked
        if mask_scores:
            m_s = m_n[None, :] & (o_n[None, :] < row_limit[:, None])  # [BLOCK_M, BLOCK_N]
            b_s = tl.where(m_s, b_s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(b_s, 1))  # [BLOCK_M]
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)  # [BLOCK_M]
        b_p = tl.exp2(b_s - m_safe[:, None])  # [BLOCK_M, BLOCK_N]
        l_i = l_i * alpha + tl.sum(b_p, 1)
        if V_TRANS:  # [BLOCK_D, BLOCK_N], tokens contiguous
            # The load mask is whole 16-token groups (a per-token mask along the contiguous axis
            # would split the load into bytes); the host guarantees capacity % 16 == 0. Tokens past
            # the range inside the last group are zeroed in registers on masked tiles (a poisoned
            # NaN byte times p = 0 would still be NaN).
            m_v = ((n0 + tl.arange(0, BLOCK_N) // 16 * 16) < n_end)  # [BLOCK_N], constant per 16 tokens
            if IS_PAGED:
                o_vt = o_vb[None, :] + o_d[:, None] * stride_vs + o_slot[None, :]
                m_v = m_v & page_ok
            else:
                o_vt = o_d[:, None] * stride_vs + o_n[None, :]
            b_vt = tl.load(p_v + o_vt, mask=m_d[:, None] & m_v[None, :], other=0.0)  # [BLOCK_D, BLOCK_N]
            if mask_scores:
                b_vt = tl.where(m_n[None, :], b_vt, tl.zeros_like(b_vt))
            if FP8_DOT < 2:
                b_vt = _to_dot_dtype(b_vt, dot_dtype, KV_FORMAT, CVT)
            b_v = tl.trans(b_vt)  # [BLOCK_N, BLOCK_D]
        else:
            if IS_PAGED:
                o_v = o_vb + o_slot * stride_vs
            else:
                o_v = o_n * stride_vs
            b_v = tl.load(p_v + o_v[:, None] + o_d[None, :], mask=m_kv, other=0.0)  # [BLOCK_N, BLOCK_D]
            if FP8_DOT < 2:
                b_v = _to_dot_dtype(b_v, dot_dtype, KV_FORMAT, CVT)
        if KV_FORMAT == 1:
            b_vs = tl.load(p_vs + o_sc, mask=m_n, other=0.0).to(tl.float32)  # [BLOCK_N]
            b_p = b_p * b_vs[None, :]
        if FP8_DOT == 2:
            b_pd = (b_p * P_FP8_SCALE).to(tl.float8e4nv)
        else:
            b_pd = b_p.to(dot_dtype)
        acc = acc * alpha[:, None]
        if DOT_F32:
            acc = acc + tl.dot(b_pd.to(tl.float32), b_v.to(tl.float32))
        else:
            acc = tl.dot(b_pd, b_v, acc)
        m_i = m_new
    if KV_FORMAT == 2:
        v_fold = tl.load(v_scale + i_kvh * stride_sh).to(tl.float32)
        if FP8_DOT == 2:
            v_fold = v_fold / P_FP8_SCALE
        acc = acc * v_fold

    i_part = ((i_b.to(tl.int64) * ROWS + i_r) * num_q_heads + i_h) * num_splits + i_s  # [BLOCK_M]
    tl.store(partial_acc + i_part[:, None] * HEAD_DIM + o_d[None, :], acc, mask=m_m[:, None] & m_d[None, :])
    tl.store(partial_max + i_part, m_i, mask=m_m)
    tl.store(partial_sum + i_part, l_i, mask=m_m)
    if FUSED_COMBINE:  # one query-row block per head: i_bhm is the (request, KV head)
        tl.debug_barrier()
        done = tl.atomic_add(counters + i_bhm, 1, sem="acq_rel")
        if done == num_splits - 1:
            tl.store(counters + i_bhm, 0)
            o_j = tl.arange(0, MERGE_ROWS)  # [MERGE_ROWS]
            m_j = o_j < GROUP * ROWS
            i_rj = o_j // GROUP
            i_hj = i_kvh * GROUP + o_j % GROUP
            p_part = ((i_b.to(tl.int64) * ROWS + i_rj) * num_q_heads + i_hj) * num_splits  # [MERGE_ROWS]
            b_acc, b_l = merge_slots(partial_acc, partial_max, partial_sum, p_part, m_j,
                                     num_splits, o_d, m_d, HEAD_DIM, BLOCK_D, MERGE_ROWS, MERGE_SLOTS)
            l_safe = tl.where(b_l > 0.0, b_l, 1.0)
            b_o = b_acc / l_safe[:, None]  # [MERGE_ROWS, BLOCK_D]
            p_o = (out + i_b.to(tl.int64) * stride_ob + i_rj[:, None] * stride_or + i_hj[:, None] * stride_oh
                   + o_d[None, :])
            tl.store(p_o, b_o.to(out.dtype.element_ty), mask=m_j[:, None] & m_d[None, :])
