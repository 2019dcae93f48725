"""Reference decode-attention kernels (Triton) and their public entry points."""

from .decode_attention import (
    LayerWorkspace,
    attention_decode,
    attention_decode_paged,
    attention_decode_paged_splitkv,
    attention_decode_splitkv,
)

__all__ = [
    "attention_decode",
    "attention_decode_paged",
    "attention_decode_splitkv",
    "attention_decode_paged_splitkv",
    "LayerWorkspace",
]
