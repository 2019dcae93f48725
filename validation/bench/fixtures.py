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


@dataclass
class QuantizedCache:
    """The inputs' K and V in an int8 or FP8 cache, contiguous and paged, with their scales."""

    kv_format: str  # "int8" (per-token scales) or "fp8" (float32 scale per KV head)
    k: torch.Tensor
    v: torch.Tensor
    k_scale: torch.Tensor
    v_scale: torch.Tensor
    k_paged: torch.Tensor
    v_paged: torch.Tensor
    k_page_scale: torch.Tensor
    v_page_scale: torch.Tensor

    def dequantized(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Contiguous (K, V) as stored * scale in float32: what the correctness check takes as truth."""
        from kernels import dequantize_kv

        return dequantize_kv(self.k, self.k_scale), dequantize_kv(self.v, self.v_scale)


def quantize_inputs(inputs: BenchInputs, kv_format: str, *, int8_scale_dtype=torch.float32) -> QuantizedCache:
    """Quantize the inputs' caches: int8 with a scale per token and KV head, or FP8 e4m3 with a
    float32 scale per KV head (the paged cache takes the contiguous cache's scale: the same bytes)."""
    from kernels import quantize_kv_fp8, quantize_kv_int8

    parts = []
    for cache, paged in ((inputs.k, inputs.k_paged), (inputs.v, inputs.v_paged)):
        if kv_format == "int8":
            values, scale = quantize_kv_int8(cache, scale_dtype=int8_scale_dtype)
            paged_values, paged_scale = quantize_kv_int8(paged, scale_dtype=int8_scale_dtype)
        elif kv_format == "fp8":
            values, scale = quantize_kv_fp8(cache, per_head=True)
            paged_values, paged_scale = quantize_kv_fp8(paged, scale)
        else:
            raise ValueError(f"kv_format must be 'int8' or 'fp8', got {kv_format!r}")
        parts.append((values, scale, paged_values, paged_scale))
    (k, ks, kp, kps), (v, vs, vp, vps) = parts
    return QuantizedCache(kv_format, k, v, ks, vs, kp, vp, kps, vps)
