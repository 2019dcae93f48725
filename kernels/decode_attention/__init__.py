"""Decode attention (one query row or a few speculative rows per request) over a
contiguous or paged KV cache: single-pass and split-KV Triton kernels."""

from .api import *  # noqa: F403 (the public entry points)
from .api import __all__  # noqa: F401
