"""Plain-torch decode attention with the kernels' semantics, in a chosen compute dtype.

With compute_dtype = the inputs' dtype this is the "same-dtype torch reference" of the
FlashAttention-style error bound; validation/oracle.py runs it in float64 on the CPU.
"""

from __future__ import annotations

import torch


def gather_paged(cache: torch.Tensor, block_table: torch.Tensor, request: int, tokens: int) -> torch.Tensor:
    """The first `tokens` tokens of one request from a paged cache, as [Hkv, tokens, D]."""
    page_size = cache.shape[2]
    pages = -(-tokens // page_size)
    index = block_table[request, :pages].long()
    slab = cache[index]  # [pages, Hkv, page_size, D]
    return slab.permute(1, 0, 2, 3).reshape(cache.shape[1], pages * page_size, cache.shape[3])[:, :tokens]


def decode_attention_reference(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    visible_tokens: torch.Tensor,
    *,
    block_table: torch.Tensor | None = None,
    scale: float | None = None,
    compute_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Attention of q over the visible cache tokens, computed with torch ops in compute_dtype.

    Args:
        q: [B, Hq, D] or [B, R, Hq, D].
        k_cache, v_cache: [B, Hkv, S_max, D], or [num_blocks, Hkv, block_size, D] with block_table.
        visible_tokens: int [B]; row r of R sees visible - (R - 1 - r) tokens.
        block_table: int [B, max_blocks] for a paged cache, else None.
        scale: default 1 / sqrt(D).
        compute_dtype: dtype of every torch op (default: q's dtype).

    Returns:
        Tensor of q's shape in compute_dtype, on q's device; rows with no visible token are zeros.
    """
    dtype = compute_dtype or q.dtype
    q4 = q if q.dim() == 4 else q.unsqueeze(1)
    batch, rows, num_q_heads, head_dim = q4.shape
    group = num_q_heads // k_cache.shape[1]
    scale = head_dim ** -0.5 if scale is None else scale
    visible = [int(v) for v in visible_tokens.cpu().tolist()]
    out = torch.zeros(q4.shape, dtype=dtype, device=q.device)
    for b in range(batch):
        tokens = max(visible[b], 0)
        if tokens == 0:
            continue
        if block_table is None:
            k = k_cache[b, :, :tokens]
            v = v_cache[b, :, :tokens]
        else:
            k = gather_paged(k_cache, block_table, b, tokens)
            v = gather_paged(v_cache, block_table, b, tokens)
        k = k.to(dtype).repeat_interleave(group, dim=0)  # [Hq, T, D]
        v = v.to(dtype).repeat_interleave(group, dim=0)  # [Hq, T, D]
        for r in range(rows):
            seen = tokens - (rows - 1 - r)
            if seen <= 0:
                continue
            qr = q4[b, r].to(dtype).unsqueeze(1)  # [Hq, 1, D]
            scores = (qr @ k[:, :seen].transpose(1, 2)) * scale  # [Hq, 1, seen]
            probs = torch.softmax(scores, dim=-1)
            out[b, r] = (probs @ v[:, :seen]).squeeze(1)
    return out if q.dim() == 4 else out.squeeze(1)
