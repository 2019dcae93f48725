"""Decode attention (one query row or a few speculative rows per request) over a
contiguous or paged KV cache: single-pass and split-KV Triton kernels."""

from .api import (
    LayerWorkspace,
    attention_decode,
    attention_decode_paged,
    attention_decode_paged_splitkv,
    attention_decode_splitkv,
)
from .quantize import dequantize_kv, quantize_kv_fp8, quantize_kv_int8

__all__ = [
    "attention_decode",
    "attention_decode_paged",
    "attention_decode_splitkv",
    "attention_decode_paged_splitkv",
    "LayerWorkspace",
    "quantize_kv_int8",
    "quantize_kv_fp8",
    "dequantize_kv",
]
