"""Peer decode-attention implementations, run in the same process as ours.

Each peer takes q ``[B, Hq, D]`` and a contiguous cache ``[B, Hkv, S, D]`` with every
token visible, and returns ``[B, Hq, D]``. A peer that is not available in this
environment (no cuDNN backend, no FlashInfer) is reported as skipped with the reason.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F


def _sdpa(backend):
    def build(q, k, v):
        q4 = q.unsqueeze(2)  # [B, Hq, 1, D]

        if backend is None:
            def call():
                return F.scaled_dot_product_attention(q4, k, v, enable_gqa=True).squeeze(2)
        else:
            from torch.nn.attention import sdpa_kernel

            def call():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q4, k, v, enable_gqa=True).squeeze(2)

        return call

    return build


def _flex(q, k, v):
    from torch.nn.attention.flex_attention import flex_attention

    compiled = torch.compile(flex_attention, dynamic=False)
    q4 = q.unsqueeze(2)

    def call():
        return compiled(q4, k, v, enable_gqa=True).squeeze(2)

    return call


def _flashinfer(q, k, v):
    import flashinfer  # noqa: F401  (optional peer)

    from flashinfer.decode import single_decode_with_kv_cache

    if q.shape[0] != 1:
        raise RuntimeError("flashinfer single-request decode peer covers batch 1 only")
    k_nhd, v_nhd = k[0].transpose(0, 1).contiguous(), v[0].transpose(0, 1).contiguous()  # [S, Hkv, D]

    def call():
        return single_decode_with_kv_cache(q[0], k_nhd, v_nhd, kv_layout="NHD").unsqueeze(0)

    return call


def flashinfer_fp8(q, k, v):
    """FlashInfer's single-request decode over an FP8 e4m3 cache with per-tensor scales:
    (call, dequantized K, dequantized V). Raises where FlashInfer is missing or lacks FP8."""
    import flashinfer  # noqa: F401  (optional peer)

    from flashinfer.decode import single_decode_with_kv_cache

    from kernels import dequantize_kv, quantize_kv_fp8

    if q.shape[0] != 1 or q.dim() != 3:
        raise RuntimeError("flashinfer FP8 decode peer covers batch 1, one query row")
    k8, ks = quantize_kv_fp8(k, per_head=False)
    v8, vs = quantize_kv_fp8(v, per_head=False)
    k_nhd, v_nhd = k8[0].transpose(0, 1).contiguous(), v8[0].transpose(0, 1).contiguous()  # [S, Hkv, D]
    k_scale, v_scale = float(ks), float(vs)

    def call():
        return single_decode_with_kv_cache(q[0], k_nhd, v_nhd, kv_layout="NHD", k_scale=k_scale,
                                           v_scale=v_scale).unsqueeze(0)

    return call, dequantize_kv(k8, ks), dequantize_kv(v8, vs)


def peer_builders() -> dict[str, Callable]:
    """Name -> builder(q, k, v) -> zero-argument call. Builders raise when unavailable."""
    from torch.nn.attention import SDPBackend

    return {
        "sdpa_default": _sdpa(None),
        "sdpa_cudnn": _sdpa(SDPBackend.CUDNN_ATTENTION),
        "sdpa_flash": _sdpa(SDPBackend.FLASH_ATTENTION),
        "flex_decode": _flex,
        "flashinfer": _flashinfer,
    }
