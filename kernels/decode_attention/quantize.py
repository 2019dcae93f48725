"""Quantizing K/V when they are written to the cache: int8 with a scale per (token, KV head),
FP8 e4m3 with a scale per KV head or per tensor. In both, dequantized = stored * scale
(the `k_scale` / `v_scale` convention of vLLM and FlashInfer).

The scale is rounded to its storage dtype before the values are divided by it, so the
stored values times the stored scale are exactly what the kernels and the oracle read.
"""

from __future__ import annotations

import torch

INT8_MAX = 127
FP8_E4M3_MAX = 448.0
FP8_DTYPE = torch.float8_e4m3fn
SCALE_DTYPES = (torch.float16, torch.float32)


def quantize_kv_int8(x: torch.Tensor, *, scale_dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 with one scale per token and KV head.

    Args:
        x: [B, Hkv, S, D] (contiguous cache) or [num_blocks, Hkv, block_size, D] (paged), any float dtype.
        scale_dtype: torch.float16 or torch.float32.

    Returns:
        (values, scales): int8 of x's shape in -127..127, and scales [..., Hkv, S] in
        scale_dtype with x ~ values * scales[..., None]. A token whose head is all zeros
        gets scale 1 (its values are 0).
    """
    if scale_dtype not in SCALE_DTYPES:
        raise ValueError(f"scale_dtype must be torch.float16 or torch.float32, got {scale_dtype}")
    if x.dim() < 1 or not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor [..., D], got {x.dtype} of shape {tuple(x.shape)}")
    xf = x.float()
    amax = xf.abs().amax(dim=-1)  # [..., S]
    scales = torch.where(amax > 0, amax / INT8_MAX, torch.ones_like(amax)).to(scale_dtype)
    scales = torch.where(scales.float() > 0, scales, torch.ones_like(scales))  # fp16 underflow: keep scale 1
    values = torch.round(xf / scales.float()[..., None]).clamp_(-INT8_MAX, INT8_MAX).to(torch.int8)
    return values, scales


def quantize_kv_fp8(x: torch.Tensor, scale: torch.Tensor | None = None, *,
                    per_head: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """FP8 e4m3 (torch.float8_e4m3fn) with a float32 scale per KV head or per tensor.

    Args:
        x: [B, Hkv, S, D] or [num_blocks, Hkv, block_size, D], any float dtype.
        scale: float32 [Hkv] or [] to use as is (values outside +-448 saturate); None
            computes amax / 448 per KV head (`per_head=True`) or over the whole tensor.
        per_head: granularity of a computed scale.

    Returns:
        (values, scale): float8_e4m3fn of x's shape, and the float32 scale ([Hkv] or [])
        with x ~ values * scale (broadcast over the KV-head dimension, dim 1).
    """
    if x.dim() != 4 or not x.is_floating_point():
        raise ValueError(f"x must be a floating-point [N, Hkv, S, D] tensor, got {x.dtype} of shape {tuple(x.shape)}")
    xf = x.float()
    if scale is None:
        amax = xf.abs().amax(dim=(0, 2, 3)) if per_head else xf.abs().amax()
        scale = torch.where(amax > 0, amax / FP8_E4M3_MAX, torch.ones_like(amax))
    if not isinstance(scale, torch.Tensor) or scale.dtype != torch.float32:
        raise ValueError(f"scale must be a float32 tensor or None, got {getattr(scale, 'dtype', type(scale).__name__)}")
    if scale.shape not in ((), (x.shape[1],)):
        raise ValueError(f"scale must have shape () or ({x.shape[1]},), got {tuple(scale.shape)}")
    scale = scale.to(x.device)
    divisor = scale.view(1, -1, 1, 1) if scale.dim() else scale
    values = (xf / divisor).clamp_(-FP8_E4M3_MAX, FP8_E4M3_MAX).to(FP8_DTYPE)
    return values, scale


def dequantize_kv(values: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """values * scale in float32: the cache the kernels compute with (int8 per-token or fp8 per-head/tensor scales)."""
    vf = values.float()
    s = scale.float()
    if values.dtype == torch.int8:
        return vf * s[..., None]
    return vf * (s.view(1, -1, 1, 1) if s.dim() else s)
