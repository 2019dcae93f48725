"""Seeded benchmark inputs: q, a contiguous cache and the same tokens in a paged cache
(block 16, shuffled block table), with SHA-256 identities of their bytes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch

from .shapes import BenchShape

PAGE_SIZE = 16


@dataclass
class BenchInputs:
    q: torch.Tensor  # [B, Hq, D] or [B, R, Hq, D]
    k: torch.Tensor  # [B, Hkv, S, D]
    v: torch.Tensor  # [B, Hkv, S, D]
    k_paged: torch.Tensor  # [num_blocks, Hkv, PAGE_SIZE, D]
    v_paged: torch.Tensor  # [num_blocks, Hkv, PAGE_SIZE, D]
    block_table: torch.Tensor  # int32 [B, S / PAGE_SIZE]
    visible_tokens: torch.Tensor  # int32 [B]
    seed: int


def _paged_copy(cache: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    b, h, s, d = cache.shape
    blocks = cache.view(b, h, s // PAGE_SIZE, PAGE_SIZE, d).permute(0, 2, 1, 3, 4).reshape(-1, h, PAGE_SIZE, d)
    paged = torch.empty_like(blocks)
    paged[perm.flatten().long()] = blocks
    return paged


def make_inputs(shape: BenchShape, *, seed: int, device: str = "cuda", dtype=torch.bfloat16) -> BenchInputs:
    """Random normal q, K, V (never zeros), every context token visible."""
    if shape.context % PAGE_SIZE:
        pad = PAGE_SIZE - shape.context % PAGE_SIZE
    else:
        pad = 0
    capacity = shape.context + pad
    gen = torch.Generator(device=device).manual_seed(seed)
    q_shape = (shape.batch, shape.num_q_heads, shape.head_dim) if shape.rows == 1 else \
        (shape.batch, shape.rows, shape.num_q_heads, shape.head_dim)
    q = torch.randn(q_shape, generator=gen, device=device, dtype=dtype)
    kv_shape = (shape.batch, shape.num_kv_heads, capacity, shape.head_dim)
    k = torch.randn(kv_shape, generator=gen, device=device, dtype=dtype)
    v = torch.randn(kv_shape, generator=gen, device=device, dtype=dtype)
    blocks_per_request = capacity // PAGE_SIZE
    perm = torch.randperm(shape.batch * blocks_per_request, generator=gen, device=device)
    perm = perm.view(shape.batch, blocks_per_request).to(torch.int32)
    visible = torch.full((shape.batch,), shape.context, dtype=torch.int32, device=device)
    return BenchInputs(q, k, v, _paged_copy(k, perm), _paged_copy(v, perm), perm.contiguous(), visible, seed)


def identity(inputs: BenchInputs) -> dict:
    """SHA-256 of the input bytes (q, K, V, block table) and the seed that made them."""
    h = hashlib.sha256()
    for t in (inputs.q, inputs.k, inputs.v, inputs.block_table):
        h.update(t.contiguous().view(torch.uint8).cpu().numpy())
    return {"sha256": h.hexdigest(), "seed": inputs.seed, "generator": f"torch.Generator({inputs.q.device.type}).manual_seed",
            "visible_tokens": "context for every request", "page_size": PAGE_SIZE}
