"""Validation of quantized KV caches and their scales; what the kernel needs to read them.

An int8 cache carries a scale per (token, KV head): k_scale and v_scale have the cache's
first three dimensions ([B, Hkv, S_max] contiguous, [num_blocks, Hkv, block_size] paged),
float16 or float32. A float8_e4m3fn cache carries a float32 scale per KV head ([Hkv]) or
per tensor ([] or [1]). Dequantized value = stored value * scale. A bfloat16/float16 cache
takes no scales. Every failure is a ValueError naming expected and actual.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

QUANTIZED_DTYPES = (torch.int8, torch.float8_e4m3fn)
TOKEN_SCALE_DTYPES = (torch.float16, torch.float32)
NO_SCALES, TOKEN_SCALES, HEAD_SCALES = 0, 1, 2


@dataclass(frozen=True)
class KvScales:
    """How the kernel reads the scales: `mode` (NO_SCALES, TOKEN_SCALES or HEAD_SCALES) and
    the scale tensors' strides of the request/page dimension and of the KV-head dimension."""

    mode: int
    stride_block: int = 0
    stride_head: int = 0


def is_quantized(dtype: torch.dtype) -> bool:
    return dtype in QUANTIZED_DTYPES


def check_kv_scales(k_cache: torch.Tensor, v_cache: torch.Tensor, k_scale, v_scale) -> KvScales:
    """Validate the scales against the (already shape-checked) caches; return how to read them."""
    if not (is_quantized(k_cache.dtype) or is_quantized(v_cache.dtype)):
        for name, scale in (("k_scale", k_scale), ("v_scale", v_scale)):
            if scale is not None:
                raise ValueError(f"{name} must be None for a {k_cache.dtype} cache (scales apply to int8 and "
                                 f"float8_e4m3fn caches), got {type(scale).__name__}")
        return KvScales(NO_SCALES)
    if v_cache.dtype != k_cache.dtype:
        raise ValueError(f"v_cache must have k_cache's dtype {k_cache.dtype}, got {v_cache.dtype}")
    for name, scale in (("k_scale", k_scale), ("v_scale", v_scale)):
        if not isinstance(scale, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor for a {k_cache.dtype} cache, got {type(scale).__name__}")
        if scale.device != k_cache.device:
            raise ValueError(f"{name} must be on k_cache's device {k_cache.device}, got {scale.device}")
    if k_cache.dtype == torch.int8:
        expected = tuple(k_cache.shape[:3])
        for name, scale in (("k_scale", k_scale), ("v_scale", v_scale)):
            if scale.dtype not in TOKEN_SCALE_DTYPES:
                raise ValueError(f"{name} of an int8 cache must be float16 or float32 (one scale per token and "
                                 f"KV head), got {scale.dtype}")
            if tuple(scale.shape) != expected:
                raise ValueError(f"{name} of an int8 cache must have the cache's first three dims {expected} "
                                 f"(one scale per token and KV head), got {tuple(scale.shape)}")
            if not scale.is_contiguous():
                raise ValueError(f"{name} must be contiguous, got strides {tuple(scale.stride())}")
        if v_scale.dtype != k_scale.dtype:
            raise ValueError(f"v_scale must have k_scale's dtype {k_scale.dtype}, got {v_scale.dtype}")
        return KvScales(TOKEN_SCALES, k_scale.stride(0), k_scale.stride(1))
    num_kv_heads = k_cache.shape[1]
    allowed = ((), (1,), (num_kv_heads,))
    for name, scale in (("k_scale", k_scale), ("v_scale", v_scale)):
        if scale.dtype != torch.float32:
            raise ValueError(f"{name} of a float8_e4m3fn cache must be float32, got {scale.dtype}")
        if tuple(scale.shape) not in allowed:
            raise ValueError(f"{name} of a float8_e4m3fn cache must be per tensor, shape () or (1,), or per KV "
                             f"head, shape ({num_kv_heads},); got {tuple(scale.shape)}")
        if scale.dim() == 1 and scale.stride(0) != 1 and scale.shape[0] > 1:
            raise ValueError(f"{name} must be contiguous, got strides {tuple(scale.stride())}")
    if tuple(v_scale.shape) != tuple(k_scale.shape):
        raise ValueError(f"v_scale must have k_scale's shape {tuple(k_scale.shape)}, got {tuple(v_scale.shape)}")
    per_head = k_scale.dim() == 1 and k_scale.shape[0] == num_kv_heads and num_kv_heads > 1
    return KvScales(HEAD_SCALES, 0, 1 if per_head else 0)
