"""Reference decode-attention kernels (Triton) and their public entry points."""

from .decode_attention import (
    LayerWorkspace,
    attention_decode,
    attention_decode_paged,
    attention_decode_paged_splitkv,
    attention_decode_splitkv,
    dequantize_kv,
    quantize_kv_fp8,
    quantize_kv_int8,
)

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
