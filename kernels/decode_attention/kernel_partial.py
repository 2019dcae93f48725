"""Split-KV decode attention: the shared online-softmax loop and the partial kernel.

One program handles one (request, KV head, block of query rows, split). Its query
rows are all G query heads of the KV group times the R speculative rows, so every
K/V tile is loaded once and used by all of them. With FINALIZE the program owns the
whole visible range and writes the normalized output (the single-pass kernel);
without it, it writes the unnormalized fp32 partials (acc, m, l) of its split for
`kernel_combine.py`. Scores live in the log2 domain: s = q.k * scale * log2(e).

A quantized cache (KV_SCALES > 0; `kv_scales.py`) is loaded as stored (int8 or fp8 e4m3)
and converted exactly to q's dtype for the dots. With KV_SCALES = 1 (int8, a scale per
token) the K scales multiply the scores per column (folded into the softmax scale) and
the V scales multiply p per column before p.v; l sums the unscaled p. With KV_SCALES = 2
(fp8, a scale per KV head or tensor) the K scale is folded into the softmax scale once and
the V scale multiplies the accumulator once after the loop. With KV_SCALES = 0 none of
this is traced: a bf16/fp16 cache runs exactly the code it ran before. The scale
parameters come last, with defaults, so the kernel's signature only grew.

With FUSED_COMBINE there is no combine launch: each program counts its split as done on
its (request, KV head) counter after writing its partials, and the program that counts
last merges all the splits' partials (`kernel_combine.merge_slots`, in split order) and
writes the output, then sets the counter back to 0 for the next call. Which program
merges depends on timing; what it computes does not. With MERGE_TRIGGER that program
lets the next launch (a programmatic dependent) start before it merges.
"""

import triton
import triton.language as tl

from .kernel_combine import merge_slots


@triton.jit
def _tile_page_ids(p_block_table, n0, n_end, PAGE_SIZE: tl.constexpr, PAGES: tl.constexpr):
    """Page ids of the (up to four) pages of the tile that starts at token n0, as scalars; 0 past n_end."""
    i_pg = n0 // PAGE_SIZE
    s0 = tl.load(p_block_table + i_pg, mask=n0 < n_end, other=0)
    s1 = s0
    s2 = s0
    s3 = s0
    if PAGES > 1:
        s1 = tl.load(p_block_table + i_pg + 1, mask=n0 + PAGE_SIZE < n_end, other=0)
    if PAGES > 2:
        s2 = tl.load(p_block_table + i_pg + 2, mask=n0 + 2 * PAGE_SIZE < n_end, other=0)
        s3 = tl.load(p_block_table + i_pg + 3, mask=n0 + 3 * PAGE_SIZE < n_end, other=0)
    return s0, s1, s2, s3


@triton.jit
def _online_softmax_range(
    b_q,
    acc,
    m_i,
    l_i,
    p_k,
    p_v,
    p_block_table,
    p_ks,
    p_vs,
    stride_kblk,
    stride_ks,
    stride_vblk,
    stride_vs,
    stride_sblk,
    n_start,
    n_end,
    row_limit,
    qk_scale,
    o_d,
    m_d,
    BLOCK_N: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    IS_PAGED: tl.constexpr,
    PREFETCH_PAGES: tl.constexpr,
    SCALAR_PAGES: tl.constexpr,
    DOT_FP64: tl.constexpr,
    n_unmasked,
    num_blocks,
    KV_SCALES: tl.constexpr,
):
    # A tile that ends at or before n_unmasked (a token every real row of the program
    # may see: n_unmasked <= n_end and <= every real row's limit; n_start masks every
    # tile) skips the score mask, which would select every score of the real rows
    # unchanged: the same bits, fewer instructions. Padding rows (q = 0) then carry
    # finite values that nothing reads: their partials, merges and outputs are masked.
    #
    # Paged with PREFETCH_PAGES: the page ids of the next tile are loaded one iteration
    # ahead, so the K/V addresses of a tile never wait on a block-table load (addresses
    # only: the same page ids reach the same loads, no arithmetic changes). With
    # SCALAR_PAGES (a tile spans at most four pages; tiles start at multiples of BLOCK_N,
    # so a tile shorter than a page lies inside one), the look-ahead holds one scalar id
    # per page instead of one per token, and each row picks its page's id.
    PAGES_PER_TILE: tl.constexpr = max(1, BLOCK_N // PAGE_SIZE)
    o_tp = tl.arange(0, BLOCK_N) // PAGE_SIZE  # [BLOCK_N], page of each row within its tile
    if PREFETCH_PAGES and SCALAR_PAGES:
        s0, s1, s2, s3 = _tile_page_ids(p_block_table, n_start, n_end, PAGE_SIZE, PAGES_PER_TILE)
    else:
        s0 = n_start * 0  # unused
        s1 = s0
        s2 = s0
        s3 = s0
    if PREFETCH_PAGES and not SCALAR_PAGES:
        o_first = n_start + tl.arange(0, BLOCK_N)  # [BLOCK_N]
        i_page_next = tl.load(p_block_table + o_first // PAGE_SIZE, mask=o_first < n_end, other=0)  # [BLOCK_N]
    else:
        i_page_next = tl.zeros([BLOCK_N], dtype=tl.int32)  # [BLOCK_N], unused
    for n0 in range(n_start, n_end, BLOCK_N):
        o_n = n0 + tl.arange(0, BLOCK_N)  # [BLOCK_N]
        m_n = o_n < n_end
        if IS_PAGED:
            if PREFETCH_PAGES and SCALAR_PAGES:
                i_page = tl.where(o_tp == 0, s0, tl.where(o_tp == 1, s1, tl.where(o_tp == 2, s2, s3))).to(tl.int64)
                page_lo = tl.minimum(tl.minimum(s0, s1), tl.minimum(s2, s3))
                page_hi = tl.maximum(tl.maximum(s0, s1), tl.maximum(s2, s3))
                s0, s1, s2, s3 = _tile_page_ids(p_block_table, n0 + BLOCK_N, n_end, PAGE_SIZE, PAGES_PER_TILE)
            elif PREFETCH_PAGES:
                i_page = i_page_next.to(tl.int64)
                o_next = o_n + BLOCK_N
                i_page_next = tl.load(p_block_table + o_next // PAGE_SIZE, mask=o_next < n_end, other=0)
            else:
                i_page = tl.load(p_block_table + o_n // PAGE_SIZE, mask=m_n, other=0).to(tl.int64)
            # A page id outside 0..num_blocks-1 (a stale or corrupt table) is never read: its
            # tokens are masked like tokens past the visible range, and the id is clamped to
            # page 0 so not even a masked-off address points outside the cache.
            page_ok = (i_page >= 0) & (i_page < num_blocks)  # [BLOCK_N]
            i_page = tl.where(page_ok, i_page, 0)
            m_n = m_n & page_ok
            if PREFETCH_PAGES and SCALAR_PAGES:
                tile_pages_ok = (page_lo >= 0) & (page_hi < num_blocks)
            else:
                tile_pages_ok = tl.min(page_ok.to(tl.int32), 0) > 0
            o_slot = o_n % PAGE_SIZE
            o_k = i_page * stride_kblk + o_slot * stride_ks  # [BLOCK_N]
            o_v = i_page * stride_vblk + o_slot * stride_vs  # [BLOCK_N]
            o_sc = i_page * stride_sblk + o_slot  # [BLOCK_N], per-token scales of a page
        else:
            o_k = o_n * stride_ks  # [BLOCK_N]
            o_v = o_n * stride_vs  # [BLOCK_N]
            o_sc = o_n  # [BLOCK_N]
        m_kv = m_n[:, None] & m_d[None, :]
        b_k = tl.load(p_k + o_k[:, None] + o_d[None, :], mask=m_kv, other=0.0)  # [BLOCK_N, BLOCK_D]
        if KV_SCALES == 1:  # int8 values are exact in q's dtype (through fp32: the interpreter's int8->bf16 is wrong)
            b_k = b_k.to(tl.float32).to(b_q.dtype)
        elif KV_SCALES == 2:  # fp8 e4m3 values are exact in q's dtype
            b_k = b_k.to(b_q.dtype)
        if DOT_FP64:
            b_s = tl.dot(b_q.to(tl.float64), tl.trans(b_k.to(tl.float64))).to(tl.float32)
        else:
            b_s = tl.dot(b_q, tl.trans(b_k))  # [BLOCK_M, BLOCK_N]
        if KV_SCALES == 1:
            b_ks = tl.load(p_ks + o_sc, mask=m_n, other=0.0).to(tl.float32)  # [BLOCK_N]
            b_s = b_s * (b_ks * qk_scale)[None, :]
        else:
            b_s = b_s * qk_scale
        if IS_PAGED:  # a tile with an out-of-range page id takes the masked path
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
        b_v = tl.load(p_v + o_v[:, None] + o_d[None, :], mask=m_kv, other=0.0)  # [BLOCK_N, BLOCK_D]
        if KV_SCALES == 1:
            b_v = b_v.to(tl.float32).to(b_q.dtype)
            b_vs = tl.load(p_vs + o_sc, mask=m_n, other=0.0).to(tl.float32)  # [BLOCK_N]
            b_p = b_p * b_vs[None, :]
        elif KV_SCALES == 2:
            b_v = b_v.to(b_q.dtype)
        b_p = b_p.to(b_v.dtype)
        acc = acc * alpha[:, None]
        if DOT_FP64:
            acc = acc + tl.dot(b_p.to(tl.float64), b_v.to(tl.float64)).to(tl.float32)
        else:
            acc = tl.dot(b_p, b_v, acc)
        m_i = m_new
    return acc, m_i, l_i


@triton.jit
def decode_attention_partial_kernel(
    q,
    k_cache,
    v_cache,
    block_table,
    visible_tokens,
    out,
    partial_acc,
    partial_max,
    partial_sum,
    counters,
    qk_scale,
    num_splits,
    num_m_blocks,
    num_kv_heads,
    num_q_heads,
    capacity,
    num_blocks,
    stride_qb,
    stride_qr,
    stride_qh,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_ob,
    stride_or,
    stride_oh,
    stride_bt,
    ROWS: tl.constexpr,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    IS_PAGED: tl.constexpr,
    PREFETCH_PAGES: tl.constexpr,
    SCALAR_PAGES: tl.constexpr,
    FINALIZE: tl.constexpr,
    FUSED_COMBINE: tl.constexpr,
    MERGE_ROWS: tl.constexpr,
    MERGE_SLOTS: tl.constexpr,
    SPLIT_MAJOR: tl.constexpr,
    PDL_TRIGGER: tl.constexpr,
    MERGE_TRIGGER: tl.constexpr,
    PDL_WAIT: tl.constexpr,
    DOT_FP64: tl.constexpr,
    INNER_UNMASKED: tl.constexpr,
    k_scale=None,
    v_scale=None,
    stride_sb=0,
    stride_sh=0,
    KV_SCALES: tl.constexpr = 0,
):
    if SPLIT_MAJOR:  # consecutive programs walk the splits of one (request, KV head)
        i_s = tl.program_id(0)
        i_bhm = tl.program_id(1)
    else:
        i_bhm = tl.program_id(0)
        i_s = tl.program_id(1)
    if PDL_TRIGGER == 1:  # the combine may be scheduled now; it waits for this grid to finish
        tl.extra.cuda.gdc_launch_dependents()
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

    if PDL_WAIT:  # launched as a PDL dependent of the work before it: read nothing before that is complete
        tl.extra.cuda.gdc_wait()
    p_q = q + i_b.to(tl.int64) * stride_qb + i_r[:, None] * stride_qr + i_h[:, None] * stride_qh + o_d[None, :]
    b_q = tl.load(p_q, mask=m_m[:, None] & m_d[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]

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
        p_block_table = block_table + i_b.to(tl.int64) * stride_bt
    else:
        p_k = k_cache + i_b.to(tl.int64) * stride_kb + i_kvh.to(tl.int64) * stride_kh
        p_v = v_cache + i_b.to(tl.int64) * stride_vb + i_kvh.to(tl.int64) * stride_vh
        p_block_table = block_table
    if KV_SCALES == 1:  # a scale per (request or page, KV head, token)
        p_ks = k_scale + i_kvh.to(tl.int64) * stride_sh
        p_vs = v_scale + i_kvh.to(tl.int64) * stride_sh
        if not IS_PAGED:
            p_ks += i_b.to(tl.int64) * stride_sb
            p_vs += i_b.to(tl.int64) * stride_sb
    else:
        p_ks = k_scale
        p_vs = v_scale
    if KV_SCALES == 2:  # a scale per KV head (stride_sh = 1) or per tensor (stride_sh = 0)
        qk_scale = qk_scale * tl.load(k_scale + i_kvh * stride_sh).to(tl.float32)

    if INNER_UNMASKED:  # tiles every real row sees whole skip the score mask
        n_unmasked = tl.minimum(n_end, visible - (ROWS - 1))
    else:
        n_unmasked = n_start
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)  # [BLOCK_M, BLOCK_D]
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)  # [BLOCK_M]
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)  # [BLOCK_M]
    acc, m_i, l_i = _online_softmax_range(
        b_q, acc, m_i, l_i, p_k, p_v, p_block_table, p_ks, p_vs,
        stride_kb, stride_ks, stride_vb, stride_vs, stride_sb,
        n_start, n_end, row_limit, qk_scale, o_d, m_d,
        BLOCK_N, PAGE_SIZE, IS_PAGED, PREFETCH_PAGES, SCALAR_PAGES, DOT_FP64,
        n_unmasked, num_blocks, KV_SCALES,
    )
    if KV_SCALES == 2:
        acc = acc * tl.load(v_scale + i_kvh * stride_sh).to(tl.float32)
    if PDL_TRIGGER == 2:
        tl.extra.cuda.gdc_launch_dependents()

    if FINALIZE:
        l_safe = tl.where(l_i > 0.0, l_i, 1.0)
        b_o = acc / l_safe[:, None]  # [BLOCK_M, BLOCK_D]
        p_o = out + i_b.to(tl.int64) * stride_ob + i_r[:, None] * stride_or + i_h[:, None] * stride_oh + o_d[None, :]
        tl.store(p_o, b_o.to(out.dtype.element_ty), mask=m_m[:, None] & m_d[None, :])
    else:
        i_part = ((i_b.to(tl.int64) * ROWS + i_r) * num_q_heads + i_h) * num_splits + i_s  # [BLOCK_M]
        tl.store(partial_acc + i_part[:, None] * HEAD_DIM + o_d[None, :], acc, mask=m_m[:, None] & m_d[None, :])
        tl.store(partial_max + i_part, m_i, mask=m_m)
        tl.store(partial_sum + i_part, l_i, mask=m_m)
        if FUSED_COMBINE:  # one query-row block per head: i_bhm is the (request, KV head)
            tl.debug_barrier()  # every thread's partial stores precede the count (released with it)
            done = tl.atomic_add(counters + i_bhm, 1, sem="acq_rel")
            if done == num_splits - 1:  # every split's partials are written and visible
                if MERGE_TRIGGER:  # the next launch may start during the merge (others exit after their count)
                    tl.extra.cuda.gdc_launch_dependents()
                tl.store(counters + i_bhm, 0)
                o_j = tl.arange(0, MERGE_ROWS)  # [MERGE_ROWS], the program's query rows
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
