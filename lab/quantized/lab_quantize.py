"""The lab quantizer: the project's int8 / FP8 quantizers, with V stored transposed on request.

A transposed V cache holds the same stored values and scales as the project's layout, so
the fp64 oracle over `dequantized()` is the project's truth for both layouts:

    contiguous  [B, Hkv, S_max, D]           -> V^T [B, Hkv, D, S_max]
    paged       [num_blocks, Hkv, P, D]      -> V^T [num_blocks, Hkv, D, P]   (per page)

Scales are unchanged: int8 [B, Hkv, S_max] / [num_blocks, Hkv, P] per token, FP8 [Hkv] or [].
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.decode_attention.quantize import dequantize_kv, quantize_kv_fp8, quantize_kv_int8

KV_FORMATS = ("int8", "fp8")


@dataclass
class LabCache:
    """One quantized K/V cache: values as stored, scales, and whether V is transposed."""

    kv_format: str
    k: torch.Tensor  # int8 / float8_e4m3fn, [N, Hkv, S, D]
    v: torch.Tensor  # [N, Hkv, S, D], or [N, Hkv, D, S16] with v_trans (S16: S rounded up to 16)
    k_scale: torch.Tensor
    v_scale: torch.Tensor
    v_trans: bool

    def dequantized(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(K, V) as stored * scale in float32, both [N, Hkv, S, D]: the oracle's cache."""
        v = self.v.transpose(-1, -2)[..., :self.k.shape[2], :] if self.v_trans else self.v
        return dequantize_kv(self.k, self.k_scale), dequantize_kv(v.contiguous(), self.v_scale)

    def with_v_layout(self, v_trans: bool) -> "LabCache":
        """The same stored bytes with V in the other layout (or this cache)."""
        if v_trans == self.v_trans:
            return self
        v = transpose_v(self.v) if v_trans else self.v.transpose(-1, -2)[..., :self.k.shape[2], :].contiguous()
        return LabCache(self.kv_format, self.k, v, self.k_scale, self.v_scale, v_trans)


def transpose_v(values: torch.Tensor) -> torch.Tensor:
    """[N, Hkv, S, D] -> [N, Hkv, D, S16], contiguous (per request, or per page of a paged cache),
    S16 = S rounded up to a multiple of 16 with zero bytes: the kernel loads whole 16-token groups."""
    n, h, s, d = values.shape
    out = torch.zeros((n, h, d, -(-s // 16) * 16), dtype=values.dtype, device=values.device)
    out[..., :s] = values.transpose(-1, -2)
    return out


def quantize_cache(k: torch.Tensor, v: torch.Tensor, kv_format: str, *, v_trans: bool,
                   int8_scale_dtype: torch.dtype = torch.float32, fp8_scales=None) -> LabCache:
    """Quantize K and V ([N, Hkv, S, D], any float dtype) into a LabCache.

    int8: a scale per (token, KV head) in `int8_scale_dtype`; fp8: a float32 scale per KV
    head, computed, or `fp8_scales` = (k_scale, v_scale) taken as they are (the paged copy
    of a contiguous cache takes the contiguous cache's scales: the same stored values).
    """
    if kv_format == "int8":
        (kq, ks), (vq, vs) = (quantize_kv_int8(x, scale_dtype=int8_scale_dtype) for x in (k, v))
    elif kv_format == "fp8":
        given = fp8_scales or (None, None)
        (kq, ks), (vq, vs) = (quantize_kv_fp8(x, s, per_head=True) for x, s in zip((k, v), given))
    else:
        raise ValueError(f"kv_format must be one of {KV_FORMATS}, got {kv_format!r}")
    return LabCache(kv_format, kq, transpose_v(vq) if v_trans else vq, ks, vs, v_trans)
