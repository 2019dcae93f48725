"""Host wrappers of the decode-attention kernels: validate, then launch.

With `out` and (split path) `workspace` given, a launch allocates nothing and never
waits for the device, so the calls can be captured in a CUDA graph; `visible_tokens`
stays on the device and `num_splits` is a host int fixed at capture.
"""

from __future__ import annotations

import functools
import math
import os

import torch
import triton.language as tl

from .checks import DecodeShape, check_block_table, check_inputs, check_num_splits, check_out, check_scale
from .kv_scales import KvScales, check_kv_scales
from .kernel_combine import decode_attention_combine_kernel
from .kernel_partial import decode_attention_partial_kernel
from .launch_config import (block_d_for, block_m_for, combine_launch_config, fused_merge_tile, partial_launch_config,
                            pdl_triggers)
from .launcher import KernelLaunch
from .workspace import LayerWorkspace

INTERPRET = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
PDL_ENV = "DESIGN_GATES_DECODE_PDL"
LOG2E = 1.0 / math.log(2.0)
_SINGLE, _SINGLE_PAGED, _SPLIT, _SPLIT_PAGED = (False, True), (True, True), (False, False), (True, False)

__all__ = [
    "attention_decode",
    "attention_decode_paged",
    "attention_decode_splitkv",
    "attention_decode_paged_splitkv",
    "LayerWorkspace",
]


def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, out=None, k_scale=None, v_scale=None):
    """Decode attention over a contiguous KV cache, one pass per (request, KV head).

    Args:
        q: [B, Hq, D] or [B, R, Hq, D] (R in 1..16), bfloat16 or float16. Row r of a
            request attends to its first visible_tokens[b] - (R - 1 - r) tokens.
        k_cache, v_cache: [B, Hkv, S_max, D], q's dtype, or int8 / float8_e4m3fn with
            k_scale and v_scale; Hq must be a multiple of Hkv.
        visible_tokens: int32 [B] on q's device (read by the kernel only).
        scale: softmax scale, default 1 / sqrt(D).
        out: optional output buffer with q's shape and dtype.
        k_scale, v_scale: scales of a quantized cache (dequantized = stored * scale): for an
            int8 cache float16/float32 [B, Hkv, S_max] (one per token and KV head); for a
            float8_e4m3fn cache float32 [Hkv] or [] (per KV head or tensor). None (the
            default) for a bfloat16/float16 cache. See `kernels.quantize_kv_int8` / `quantize_kv_fp8`.

    Returns:
        Tensor with q's shape and dtype; rows with no visible token are zeros.
    """
    return _run(_SINGLE, q, k_cache, v_cache, None, visible_tokens, 1, None, scale, out, k_scale=k_scale,
                v_scale=v_scale)


def attention_decode_paged(q, k_cache, v_cache, block_table, visible_tokens, *, scale=None, out=None,
                           validate_block_table=False, k_scale=None, v_scale=None):
    """Decode attention over a paged KV cache, one pass per (request, KV head).

    Args:
        q: [B, Hq, D] or [B, R, Hq, D], bfloat16 or float16.
        k_cache, v_cache: [num_blocks, Hkv, block_size, D]; block_size a power of two;
            q's dtype, or int8 / float8_e4m3fn with k_scale and v_scale.
        block_table: int32 [B, max_blocks]; token t of request b lives in page
            block_table[b, t // block_size] at slot t % block_size.
        visible_tokens: int32 [B] on q's device.
        scale: softmax scale, default 1 / sqrt(D).
        out: optional output buffer with q's shape and dtype.
        k_scale, v_scale: scales of a quantized cache (dequantized = stored * scale): for an
            int8 cache float16/float32 [num_blocks, Hkv, block_size], beside the pages (one per token and KV head); for a
            float8_e4m3fn cache float32 [Hkv] or [] (per KV head or tensor). None (the
            default) for a bfloat16/float16 cache. See `kernels.quantize_kv_int8` / `quantize_kv_fp8`.

    Returns:
        Tensor with q's shape and dtype; rows with no visible token are zeros.
    """
    return _run(_SINGLE_PAGED, q, k_cache, v_cache, block_table, visible_tokens, 1, None, scale, out,
                validate_block_table, k_scale=k_scale, v_scale=v_scale)


def attention_decode_splitkv(q, k_cache, v_cache, visible_tokens, *, num_splits, workspace=None, scale=None, out=None,
                             k_scale=None, v_scale=None):
    """Split-KV (flash-decoding) attention over a contiguous KV cache.

    Each request's visible range is cut on the device into `num_splits` chunks of
    ceil(visible / num_splits) tokens rounded up to whole tiles; a partial kernel writes
    fp32 (acc, max, sum) per chunk into `workspace`, and a combine kernel merges them;
    where the merge is small, the last partial program of each (request, KV head) does it
    instead, and there is no second launch (`launch_config.fused_merge_tile`).
    num_splits = 1 gives the bits of `attention_decode`.

    Args:
        q, k_cache, v_cache, visible_tokens, scale, out, k_scale, v_scale: as in `attention_decode`.
        num_splits: Python int in 1..256, fixed at graph capture.
        workspace: a `LayerWorkspace` large enough for this call; allocated per call if None.

    Returns:
        Tensor with q's shape and dtype.
    """
    return _run(_SPLIT, q, k_cache, v_cache, None, visible_tokens, num_splits, workspace, scale, out,
                k_scale=k_scale, v_scale=v_scale)


def attention_decode_paged_splitkv(q, k_cache, v_cache, block_table, visible_tokens, *, num_splits, workspace=None,
                                   scale=None, out=None, validate_block_table=False, k_scale=None, v_scale=None):
    """Split-KV (flash-decoding) attention over a paged KV cache.

    Args:
        q, k_cache, v_cache, block_table, visible_tokens, scale, out, k_scale, v_scale: as in
            `attention_decode_paged`.
        num_splits: Python int in 1..256, fixed at graph capture.
        workspace: a `LayerWorkspace` large enough for this call; allocated per call if None.

    Returns:
        Tensor with q's shape and dtype; bit-identical to `attention_decode_splitkv`
        on the same tokens and num_splits.
    """
    return _run(_SPLIT_PAGED, q, k_cache, v_cache, block_table, visible_tokens, num_splits, workspace, scale, out,
                validate_block_table, k_scale=k_scale, v_scale=v_scale)


# --- the host path: one plan per call signature ---------------------------------------------

MAX_PLANS = 1024
_PLANS: dict = {}
_TENSOR_PARAMS = ("q", "k_cache", "v_cache", "block_table", "visible_tokens", "out",
                  "partial_acc", "partial_max", "partial_sum", "counters")
_SCALE_PARAMS = {"k_scale": 10, "v_scale": 11}  # the partial kernel's last tensor parameters, by keyword


def _signature(t):
    """What a compiled launch depends on: dtype, shape, strides, device and 16-byte alignment."""
    return t.dtype, t.shape, t.stride(), t.device, t.data_ptr() & 15


def _plan_key(kind, q, k_cache, v_cache, block_table, visible_tokens, out, workspace, num_splits, scale, k_scale,
              v_scale):
    """The call's signature; AttributeError or TypeError when an input is not what it should be."""
    device = q.device
    return (
        kind, _signature(q), _signature(k_cache), _signature(v_cache),
        None if block_table is None else _signature(block_table), _signature(visible_tokens),
        None if out is None else _signature(out),
        None if workspace is None else (type(workspace), workspace.limits),
        num_splits, num_splits.__class__, scale, scale.__class__,
        None if k_scale is None else _signature(k_scale), None if v_scale is None else _signature(v_scale),
        torch.cuda.current_device() if device.type == "cuda" else None,
        partial_launch_config, combine_launch_config, decode_attention_partial_kernel, decode_attention_combine_kernel,
    )


def _run(kind, q, k_cache, v_cache, block_table, visible_tokens, num_splits, workspace, scale, out,
         validate_block_table=False, *, k_scale=None, v_scale=None):
    """Validate (once per call signature), then launch; returns the output tensor."""
    try:
        key = _plan_key(kind, q, k_cache, v_cache, block_table, visible_tokens, out, workspace, num_splits, scale,
                        k_scale, v_scale)
        plan = _PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors, or something unhashable: the checks name it
        key, plan = None, None
    if plan is None:
        plan = _Plan(kind, q, k_cache, v_cache, block_table, visible_tokens, num_splits, workspace, scale, out,
                     k_scale, v_scale)
        if key is not None:
            if len(_PLANS) >= MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
    if validate_block_table:
        check_block_table(block_table, visible_tokens, k_cache.shape[0], plan.shape.page_size)
    if out is None:
        out = torch.empty_like(q)
    if k_scale is None:  # no scales: the kernel's scale pointers are never read
        k_scale = v_scale = visible_tokens
    if plan.finalize:
        tensors = (q, k_cache, v_cache, block_table if plan.paged else visible_tokens, visible_tokens, out,
                   out, out, out, visible_tokens, k_scale, v_scale)
    else:
        if workspace is None:
            shape = plan.shape
            workspace = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, num_splits, q.device)
        tensors = (q, k_cache, v_cache, block_table if plan.paged else visible_tokens, visible_tokens, out,
                   workspace.partial_acc, workspace.partial_max, workspace.partial_sum, workspace.split_counters,
                   k_scale, v_scale)
    plan.partial(tensors)
    if plan.combine is not None:
        plan.combine(tensors)
    return out


class _Plan:
    """Everything of a call but its tensors: validated once, launched many times."""

    def __init__(self, kind, q, k_cache, v_cache, block_table, visible_tokens, num_splits, workspace, scale, out,
                 k_scale=None, v_scale=None):
        paged, finalize = kind
        shape = check_inputs(q, k_cache, v_cache, visible_tokens, block_table, paged=paged, interpret=INTERPRET)
        kv_scales = check_kv_scales(k_cache, v_cache, k_scale, v_scale)
        if not finalize:
            num_splits = check_num_splits(num_splits)
        scale = check_scale(scale, shape.head_dim)
        if out is None:
            out = torch.empty_like(q)
        else:
            check_out(out, q)
        if not finalize and workspace is not None:
            if not isinstance(workspace, LayerWorkspace):
                raise ValueError(f"workspace must be a LayerWorkspace or None, got {type(workspace).__name__}")
            workspace.fits(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, num_splits, q.device)
        self.shape, self.paged, self.finalize = shape, paged, finalize
        self.partial, self.combine = _launches(q, k_cache, v_cache, block_table, visible_tokens, out, shape,
                                               num_splits, scale, paged=paged, finalize=finalize, kv_scales=kv_scales)

    @property
    def is_direct(self) -> bool:
        return self.partial.is_direct and (self.combine is None or self.combine.is_direct)


def _launches(q, k_cache, v_cache, block_table, visible_tokens, out, shape: DecodeShape, num_splits, scale, *,
              paged, finalize, kv_scales: KvScales):
    """The partial (or single-pass) launch and the combine launch (or None) of a call."""
    # q and out of rank 3 are read with a row stride of 0 (R = 1): no view per call.
    q_strides = (q.stride(0), q.stride(1), q.stride(2)) if q.dim() == 4 else (q.stride(0), 0, q.stride(1))
    o_strides = (out.stride(0), out.stride(1), out.stride(2)) if out.dim() == 4 else (out.stride(0), 0, out.stride(1))
    group = shape.num_q_heads // shape.num_kv_heads
    programs_per_sm = None  # a single pass on a GPU picks its pipeline depth by how full its grid is
    if finalize and q.device.type == "cuda" and not INTERPRET:
        programs = shape.batch * shape.num_kv_heads * -(-group * shape.rows // block_m_for(group * shape.rows))
        programs_per_sm = programs / _sm_count(q.device.index)
    config = partial_launch_config(shape.head_dim, group * shape.rows, q.dtype, programs_per_sm=programs_per_sm,
                                   kv_dtype=k_cache.dtype)
    num_m_blocks = -(-group * shape.rows // config.block_m)
    heads_blocks = shape.batch * shape.num_kv_heads * num_m_blocks
    block_d = block_d_for(shape.head_dim)
    table = block_table if paged else visible_tokens
    grid = (num_splits, heads_blocks) if config.split_major else (heads_blocks, num_splits)
    merge = None
    if not finalize and config.fused_combine:
        merge = fused_merge_tile(group * shape.rows, config.block_m, num_splits, shape.head_dim)
    combine = None
    if not finalize and merge is None:
        combine = combine_launch_config(shape.head_dim, num_splits, pdl_available=pdl_available(q.device))
    chain = config.chain_pdl and pdl_available(q.device)
    trigger, merge_trigger = pdl_triggers(config, finalize=finalize, fused=merge is not None,
                                          combine_pdl=combine is not None and combine.use_pdl, chain=chain)
    direct = q.device.type == "cuda" and not INTERPRET
    partial = KernelLaunch(
        decode_attention_partial_kernel, grid, _TENSOR_PARAMS, range(10),
        (scale * LOG2E, num_splits, num_m_blocks, shape.num_kv_heads, shape.num_q_heads, shape.capacity,
         k_cache.shape[0] if paged else 1,
         *q_strides,
         k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
         v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
         *o_strides,
         table.stride(0)),
        dict(ROWS=shape.rows, GROUP=group, HEAD_DIM=shape.head_dim, BLOCK_D=block_d,
             BLOCK_M=config.block_m, BLOCK_N=config.block_n, PAGE_SIZE=shape.page_size,
             IS_PAGED=paged, PREFETCH_PAGES=paged and not finalize and config.prefetch_pages,
             SCALAR_PAGES=config.scalar_pages and config.block_n // shape.page_size <= 4, FINALIZE=finalize,
             FUSED_COMBINE=merge is not None, MERGE_ROWS=merge[0] if merge else 1,
             MERGE_SLOTS=merge[1] if merge else 1,
             SPLIT_MAJOR=config.split_major, PDL_TRIGGER=trigger, MERGE_TRIGGER=merge_trigger, PDL_WAIT=chain,
             DOT_FP64=INTERPRET, INNER_UNMASKED=config.inner_unmasked,
             stride_sb=kv_scales.stride_block, stride_sh=kv_scales.stride_head, KV_SCALES=kv_scales.mode,
             num_warps=config.num_warps, num_stages=config.num_stages, **({"launch_pdl": True} if chain else {})),
        direct=direct, keyword_tensors=_SCALE_PARAMS,
    )
    if combine is None:
        return partial, None
    return partial, KernelLaunch(
        decode_attention_combine_kernel, (shape.batch * shape.rows * shape.num_q_heads,),
        ("partial_acc", "partial_max", "partial_sum", "out"), (6, 7, 8, 5),
        (num_splits, shape.num_q_heads, *o_strides),
        dict(ROWS=shape.rows, HEAD_DIM=shape.head_dim, BLOCK_D=block_d, BLOCK_S=combine.block_s,
             USE_PDL=combine.use_pdl, TRIGGER_NEXT=chain and combine.use_pdl,
             num_warps=combine.num_warps, **({"launch_pdl": True} if combine.use_pdl else {})),
        direct=direct,
    )


@functools.lru_cache(maxsize=None)
def _sm_count(device_index) -> int:
    return torch.cuda.get_device_properties(device_index if device_index is not None else torch.cuda.current_device()).multi_processor_count


@functools.lru_cache(maxsize=None)
def _pdl_supported(device_type: str, device_index) -> bool:
    if INTERPRET or device_type != "cuda" or os.environ.get(PDL_ENV, "1") == "0":
        return False
    if torch.cuda.get_device_capability(device_index)[0] < 9:
        return False
    try:
        from triton.backends.nvidia.compiler import CUDAOptions
    except ImportError:
        return False
    return "launch_pdl" in getattr(CUDAOptions, "__dataclass_fields__", {}) and hasattr(tl.extra.cuda, "gdc_wait")


def pdl_available(device: torch.device) -> bool:
    """Whether the combine launches as a programmatic dependent of the partial kernel.

    True on Hopper and later with a Triton that has `launch_pdl` (3.3+), unless
    DESIGN_GATES_DECODE_PDL=0. PDL changes when the combine's programs start, not what
    they compute: the outputs are the same bits either way. With a launch config's
    `chain_pdl`, the partial (or single-pass) kernel also launches as a dependent of the
    work before it and waits for that work before reading anything.
    """
    return _pdl_supported(device.type, device.index if device.index is not None else torch.cuda.current_device() if device.type == "cuda" else None)
