"""Input validation of the decode-attention entry points: every failure is a ValueError
that states what was expected and what was given. Nothing here reads device memory."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .kv_scales import is_quantized
from .launch_config import MAX_SPLITS

SUPPORTED_DTYPES = (torch.bfloat16, torch.float16)
MAX_ROWS = 16
MAX_HEAD_DIM = 256


@dataclass(frozen=True)
class DecodeShape:
    batch: int
    rows: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    capacity: int
    page_size: int


def _require_tensor(name: str, value) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    return value


def _require_last_dim_contiguous(name: str, t: torch.Tensor) -> None:
    if t.stride(-1) != 1:
        raise ValueError(f"{name} must have stride 1 in its last dimension, got strides {tuple(t.stride())}")


def check_num_splits(num_splits) -> int:
    if isinstance(num_splits, bool) or not isinstance(num_splits, int):
        raise ValueError(f"num_splits must be a Python int in 1..{MAX_SPLITS}, got {type(num_splits).__name__}")
    if not 1 <= num_splits <= MAX_SPLITS:
        raise ValueError(f"num_splits must be in 1..{MAX_SPLITS}, got {num_splits}")
    return num_splits


def check_scale(scale, head_dim: int) -> float:
    if scale is None:
        return head_dim ** -0.5
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ValueError(f"scale must be a Python float or None, got {type(scale).__name__}")
    scale = float(scale)
    if not (scale > 0.0 and scale != float("inf")):
        raise ValueError(f"scale must be a positive finite float, got {scale}")
    return scale


def check_inputs(q, k_cache, v_cache, visible_tokens, block_table=None, *, paged: bool, interpret: bool) -> DecodeShape:
    """Validate q, the caches, visible_tokens and (paged) block_table; return the sizes."""
    q = _require_tensor("q", q)
    k_cache = _require_tensor("k_cache", k_cache)
    v_cache = _require_tensor("v_cache", v_cache)
    visible_tokens = _require_tensor("visible_tokens", visible_tokens)

    if q.dtype not in SUPPORTED_DTYPES:
        raise ValueError(f"q must be bfloat16 or float16, got {q.dtype}")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        if t.dtype != q.dtype and not is_quantized(t.dtype):  # quantized caches: kv_scales.check_kv_scales
            raise ValueError(f"{name} must have q's dtype {q.dtype}, got {t.dtype}")
    if q.dim() not in (3, 4):
        raise ValueError(f"q must be [B, Hq, D] or [B, R, Hq, D], got shape {tuple(q.shape)}")
    if q.dim() == 3:
        batch, num_q_heads, head_dim = q.shape
        rows = 1
    else:
        batch, rows, num_q_heads, head_dim = q.shape
    layout = "[num_blocks, Hkv, block_size, D]" if paged else "[B, Hkv, S_max, D]"
    if k_cache.dim() != 4:
        raise ValueError(f"k_cache must be {layout}, got shape {tuple(k_cache.shape)}")
    if v_cache.shape != k_cache.shape:
        raise ValueError(f"v_cache must have k_cache's shape {tuple(k_cache.shape)}, got {tuple(v_cache.shape)}")
    num_kv_heads, slots, kv_dim = k_cache.shape[1], k_cache.shape[2], k_cache.shape[3]

    if batch < 1:
        raise ValueError(f"q batch must be >= 1, got {batch}")
    if not 1 <= rows <= MAX_ROWS:
        raise ValueError(f"q rows R must be in 1..{MAX_ROWS}, got {rows}")
    if head_dim % 8 != 0 or not 8 <= head_dim <= MAX_HEAD_DIM:
        raise ValueError(f"head dim D must be a multiple of 8 in 8..{MAX_HEAD_DIM}, got {head_dim}")
    if kv_dim != head_dim:
        raise ValueError(f"k_cache head dim must equal q's {head_dim}, got {kv_dim}")
    if num_kv_heads < 1 or num_q_heads % num_kv_heads != 0:
        raise ValueError(f"q heads Hq must be a multiple of the cache's KV heads {num_kv_heads}, got Hq={num_q_heads}")
    if not paged and k_cache.shape[0] != batch:
        raise ValueError(f"k_cache batch must equal q's batch {batch}, got {k_cache.shape[0]}")
    for name, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        _require_last_dim_contiguous(name, t)

    if visible_tokens.dtype != torch.int32:
        raise ValueError(f"visible_tokens must be int32, got {visible_tokens.dtype}")
    if tuple(visible_tokens.shape) != (batch,):
        raise ValueError(f"visible_tokens must have shape ({batch},), got {tuple(visible_tokens.shape)}")
    if not visible_tokens.is_contiguous():
        raise ValueError(f"visible_tokens must be contiguous, got strides {tuple(visible_tokens.stride())}")

    tensors = [("k_cache", k_cache), ("v_cache", v_cache), ("visible_tokens", visible_tokens)]
    page_size = 1
    capacity = slots
    if paged:
        block_table = _require_tensor("block_table", block_table)
        if block_table.dtype != torch.int32:
            raise ValueError(f"block_table must be int32, got {block_table.dtype}")
        if block_table.dim() != 2 or block_table.shape[0] != batch or block_table.shape[1] < 1:
            raise ValueError(f"block_table must be [B={batch}, max_blocks >= 1], got shape {tuple(block_table.shape)}")
        _require_last_dim_contiguous("block_table", block_table)
        page_size = slots
        if page_size < 1 or page_size & (page_size - 1):
            raise ValueError(f"block size (k_cache.shape[2]) must be a power of two, got {page_size}")
        capacity = block_table.shape[1] * page_size
        tensors.append(("block_table", block_table))

    check_device("q", q, tensors, interpret=interpret)
    return DecodeShape(batch, rows, num_q_heads, num_kv_heads, head_dim, capacity, page_size)


def check_device(anchor_name: str, anchor: torch.Tensor, others, *, interpret: bool) -> None:
    device = anchor.device
    if device.type != "cuda" and not interpret:
        raise ValueError(
            f"{anchor_name} must be on a CUDA device (or set TRITON_INTERPRET=1 before import to run on the CPU), got {device}"
        )
    for name, t in others:
        if t.device != device:
            raise ValueError(f"{name} must be on {anchor_name}'s device {device}, got {t.device}")


def check_out(out, q: torch.Tensor) -> None:
    out = _require_tensor("out", out)
    if out.dtype != q.dtype:
        raise ValueError(f"out must have q's dtype {q.dtype}, got {out.dtype}")
    if out.shape != q.shape:
        raise ValueError(f"out must have q's shape {tuple(q.shape)}, got {tuple(out.shape)}")
    if out.device != q.device:
        raise ValueError(f"out must be on q's device {q.device}, got {out.device}")
    _require_last_dim_contiguous("out", out)


def check_block_table(block_table: torch.Tensor, visible_tokens: torch.Tensor, num_blocks: int, page_size: int) -> None:
    """Opt-in check that every page id a request reads lies in 0..num_blocks-1.

    Reads `block_table` and `visible_tokens` on the host (a device synchronization), so it
    is off by default and must stay off inside CUDA-graph capture. Without it the kernels
    never read outside the cache either: out-of-range ids are masked in the kernel (their
    tokens count as not visible). Entries past a request's visible pages are not checked.
    """
    table = block_table.detach().to("cpu", torch.int64)
    visible = visible_tokens.detach().to("cpu", torch.int64).clamp(0, table.shape[1] * page_size)
    used = torch.arange(table.shape[1]) < ((visible + page_size - 1) // page_size)[:, None]
    bad = used & ((table < 0) | (table >= num_blocks))
    if bool(bad.any()):
        request, position = (int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"block_table[{request}, {position}] must be a page id in 0..{num_blocks - 1} (k_cache.shape[0] = "
            f"{num_blocks}), got {int(table[request, position])} ({int(bad.sum())} such entries in the visible pages)"
        )
