"""Reference decode-attention kernels (Triton) and their public entry points."""

from .decode_attention import (
    LayerWorkspace,
    attention_decode,
    attention_decode_paged,
    attention_decode_paged_splitkv,
    attention_decode_splitkv,
)
from .decode_layer import DecodeAttention  # noqa: F401  (layer-level split-KV integration)

__all__ = [
    "attention_decode",
    "attention_decode_paged",
    "attention_decode_splitkv",
    "attention_decode_paged_splitkv",
    "LayerWorkspace",
]
