"""The fp64 oracle: decode attention in float64 on the CPU, written independently of the kernels."""

from __future__ import annotations

import torch


def _visible_keys(cache: torch.Tensor, block_table: torch.Tensor | None, request: int, tokens: int) -> torch.Tensor:
    """Tokens 0..tokens-1 of one request as float64 [Hkv, tokens, D], gathered token by page."""
    if block_table is None:
        return cache[request, :, :tokens].double()
    page_size = cache.shape[2]
    t = torch.arange(tokens)
    pages = block_table[request].long()[t // page_size]
    return cache[pages, :, t % page_size].double().transpose(0, 1)


def decode_attention_fp64(q, k_cache, v_cache, visible_tokens, *, block_table=None, scale=None) -> torch.Tensor:
    """Exact-as-possible decode attention, the kernels' arguments, float64 on the CPU.

    Args:
        q: [B, Hq, D] or [B, R, Hq, D] (any device, any float dtype).
        k_cache, v_cache: [B, Hkv, S_max, D], or [num_blocks, Hkv, block_size, D] with block_table.
        visible_tokens: int [B]; row r of R attends to the first visible - (R - 1 - r) tokens.
        block_table: int [B, max_blocks] for a paged cache.
        scale: default 1 / sqrt(D).

    Returns:
        float64 CPU tensor of q's shape; a row with no visible token is zeros.
    """
    q = q.detach().cpu()
    k_cache = k_cache.detach().cpu()
    v_cache = v_cache.detach().cpu()
    block_table = None if block_table is None else block_table.detach().cpu()
    q4 = q if q.dim() == 4 else q.unsqueeze(1)
    batch, rows, num_q_heads, head_dim = q4.shape
    num_kv_heads = k_cache.shape[1]
    group = num_q_heads // num_kv_heads
    scale = head_dim ** -0.5 if scale is None else float(scale)
    out = torch.zeros(q4.shape, dtype=torch.float64)
    for b, visible in enumerate(visible_tokens.detach().cpu().tolist()):
        if visible <= 0:
            continue
        keys = _visible_keys(k_cache, block_table, b, visible)  # [Hkv, T, D]
        values = _visible_keys(v_cache, block_table, b, visible)  # [Hkv, T, D]
        for h in range(num_q_heads):
            kv = h // group
            scores = torch.einsum("rd,td->rt", q4[b, :, h].double(), keys[kv]) * scale  # [R, T]
            limits = visible - (rows - 1 - torch.arange(rows))  # [R]
            seen = torch.arange(visible)[None, :] < limits[:, None]  # [R, T]
            scores = scores.masked_fill(~seen, float("-inf"))
            top = scores.max(dim=1, keepdim=True).values
            weights = torch.where(seen, torch.exp(scores - top.clamp_min(-1e300)), torch.zeros(()))
            total = weights.sum(dim=1, keepdim=True)
            mixed = weights @ values[kv]  # [R, D]
            out[b, :, h] = torch.where(total > 0, mixed / total.clamp_min(1e-300), torch.zeros(()))
    return out if q.dim() == 4 else out.squeeze(1)
