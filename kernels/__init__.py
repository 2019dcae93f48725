"""Reference decode-attention kernels (Triton) and their public entry points
(`attention_decode`, `attention_decode_paged`, `attention_decode_splitkv`,
`attention_decode_paged_splitkv`, `LayerWorkspace`)."""

from .decode_attention import *  # noqa: F403 (the names in decode_attention.api.__all__)
from .decode_attention import __all__  # noqa: F401
