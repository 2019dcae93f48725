"""Host side of the lab kernel: the candidate variants and one preallocated split launch.

    route = LabSplitDecode("vt-cvt16", q, cache, visible_tokens, num_splits=32)
    out = route()          # graph-capturable: no allocation, no host sync per call

The launch config (tiles, warps, stages) is the project's `partial_launch_config` for the
cache dtype unless a variant overrides it; the merge is the project's (`fused_merge_tile`
decides between the in-place merge and the combine kernel, as in the hot path). No PDL:
the lab launches carry no launch overlap, which the project's route has; `lab-ref` (the
project's arithmetic through this launch path) measures what that costs.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace

import torch

from kernels.decode_attention.kernel_combine import decode_attention_combine_kernel
from kernels.decode_attention.launch_config import (block_d_for, combine_launch_config, fused_merge_tile,
                                                    partial_launch_config)

from .kernel_lab import lab_partial_kernel
from .lab_quantize import LabCache

INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"
LOG2E = 1.0 / math.log(2.0)


@dataclass(frozen=True)
class Variant:
    """A candidate: V layout, conversion path, FP8 dots, optional tile overrides."""

    name: str
    v_trans: bool
    cvt: int  # 0 project conversions, dots in q's dtype; 1 prmt magic int8->fp16 + e4m3->fp16, fp16 dots; 2 the same in Triton bit ops
    fp8_dot: int = 0  # 1 q.k in FP8; 2 q.k and p.v in FP8
    formats: tuple[str, ...] = ("int8", "fp8")
    block_m: int | None = None  # 64 puts a decode group on wgmma (Triton takes mma.sync below 64 rows, with FP8 upcast to fp16)
    block_n: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None

    def label(self) -> str:
        extra = "".join(f":{k}{v}" for k, v in (("m", self.block_m), ("n", self.block_n), ("w", self.num_warps),
                                                  ("s", self.num_stages)) if v is not None)
        return self.name + extra


VARIANTS = {
    v.name: v for v in (
        Variant("lab-ref", v_trans=False, cvt=0),  # the project's arithmetic and layout through the lab launch
        Variant("vt", v_trans=True, cvt=0),  # (a) V transposed, conversions as the project
        Variant("cvt16", v_trans=False, cvt=1),  # (b) fp16 conversions and dots, V as the project
        Variant("cvt16-bits", v_trans=False, cvt=2, formats=("int8",)),  # (b) magic number in Triton bit ops
        Variant("vt-cvt16", v_trans=True, cvt=1),  # (a) + (b)
        Variant("vt-fp8qk", v_trans=True, cvt=1, fp8_dot=1, formats=("fp8",)),  # (c) FP8 q.k, fp16 p.v
        Variant("vt-fp8dot", v_trans=True, cvt=1, fp8_dot=2, formats=("fp8",)),  # (c) opt-in FP8 dots, both
    )
}


def variant(spec: str) -> Variant:
    """A variant by name, with optional overrides: "vt-cvt16:n64", "vt:w8:s2", "vt-fp8dot:m64"."""
    name, *overrides = spec.split(":")
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; expected one of {sorted(VARIANTS)}")
    v = VARIANTS[name]
    keys = {"m": "block_m", "n": "block_n", "w": "num_warps", "s": "num_stages"}
    for item in overrides:
        if not item or item[0] not in keys or not item[1:].isdigit():
            raise ValueError(f"override must be m<BLOCK_M>, n<BLOCK_N>, w<warps> or s<stages>, got {item!r} in {spec!r}")
        v = replace(v, **{keys[item[0]]: int(item[1:])})
    return v


class LabSplitDecode:
    """One split-KV launch (partial kernel, then the in-place merge or the combine kernel).

    Args:
        variant: a Variant or its spec string.
        q: [B, Hq, D] or [B, R, Hq, D], bf16 or fp16.
        cache: a LabCache whose V layout is the variant's (contiguous [B, Hkv, S_max, .] or
            paged [num_blocks, Hkv, P, .] with block_table).
        visible_tokens: int32 [B].
        num_splits: 1..256.
        block_table: int32 [B, max_pages] for a paged cache, else None.
    """

    def __init__(self, variant_spec, q: torch.Tensor, cache: LabCache, visible_tokens: torch.Tensor, *,
                 num_splits: int, block_table: torch.Tensor | None = None, scale: float | None = None,
                 out: torch.Tensor | None = None) -> None:
        v = variant(variant_spec) if isinstance(variant_spec, str) else variant_spec
        if q.dtype not in (torch.bfloat16, torch.float16):
            raise ValueError(f"q must be bf16 or fp16, got {q.dtype}")
        if cache.kv_format not in v.formats:
            raise ValueError(f"variant {v.name} takes {v.formats} caches, got {cache.kv_format}")
        if cache.v_trans != v.v_trans:
            raise ValueError(f"variant {v.name} needs v_trans={v.v_trans}, the cache has {cache.v_trans}")
        if not 1 <= num_splits <= 256:
            raise ValueError(f"num_splits must be in 1..256, got {num_splits}")
        paged = block_table is not None
        if v.v_trans and cache.v.shape[-1] % 16:
            raise ValueError(f"a transposed V cache needs tokens per request or page % 16 == 0, got {cache.v.shape[-1]}")
        q4 = q if q.dim() == 4 else q.unsqueeze(1)
        batch, rows, num_q_heads, head_dim = q4.shape
        num_kv_heads = cache.k.shape[1]
        group = num_q_heads // num_kv_heads
        page_size = cache.k.shape[2] if paged else 1
        capacity = block_table.shape[1] * page_size if paged else cache.k.shape[2]
        cfg = partial_launch_config(head_dim, group * rows, q.dtype, kv_dtype=cache.k.dtype)
        block_m = v.block_m or cfg.block_m
        block_n = v.block_n or cfg.block_n
        num_warps = v.num_warps or cfg.num_warps
        num_stages = v.num_stages or cfg.num_stages
        num_m_blocks = -(-group * rows // block_m)
        block_d = block_d_for(head_dim)
        merge = fused_merge_tile(group * rows, block_m, num_splits, head_dim) if num_splits >= 2 else None
        dev = q.device
        slots = batch * rows * num_q_heads * num_splits
        self.partial_acc = torch.empty(slots, head_dim, dtype=torch.float32, device=dev)
        self.partial_max = torch.empty(slots, dtype=torch.float32, device=dev)
        self.partial_sum = torch.empty(slots, dtype=torch.float32, device=dev)
        self.counters = torch.zeros(batch * num_kv_heads * num_m_blocks, dtype=torch.int32, device=dev)
        self.out = torch.empty_like(q) if out is None else out
        o4 = self.out if self.out.dim() == 4 else self.out.unsqueeze(1)
        q_strides = (q4.stride(0), q4.stride(1) if rows > 1 else 0, q4.stride(2))
        o_strides = (o4.stride(0), o4.stride(1) if rows > 1 else 0, o4.stride(2))
        if cache.kv_format == "int8":
            stride_sb, stride_sh, kv_format = cache.k_scale.stride(0), cache.k_scale.stride(1), 1
        else:
            per_head = cache.k_scale.dim() == 1 and cache.k_scale.shape[0] == num_kv_heads and num_kv_heads > 1
            stride_sb, stride_sh, kv_format = 0, 1 if per_head else 0, 2
        cvt = 2 if (INTERPRET and v.cvt == 1) else v.cvt  # the interpreter has no inline asm: the same magic in bit ops
        dot_bf16 = q.dtype == torch.bfloat16 and v.cvt == 0
        self.variant, self.num_splits, self.merge = v, num_splits, merge
        self.config = {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": num_warps, "num_stages": num_stages,
                       "fused_merge": merge is not None}
        self._grid = (num_splits, batch * num_kv_heads * num_m_blocks)
        table = block_table if paged else visible_tokens
        self._args = (q, cache.k, cache.v, table, visible_tokens, self.out,
                      self.partial_acc, self.partial_max, self.partial_sum, self.counters,
                      cache.k_scale, cache.v_scale,
                      (head_dim ** -0.5 if scale is None else scale) * LOG2E, num_splits, num_m_blocks,
                      num_kv_heads, num_q_heads, capacity, cache.k.shape[0] if paged else 1,
                      *q_strides,
                      cache.k.stride(0), cache.k.stride(1), cache.k.stride(2),
                      cache.v.stride(0), cache.v.stride(1), cache.v.stride(2),
                      *o_strides,
                      table.stride(0), stride_sb, stride_sh)
        self._constexprs = dict(
            ROWS=rows, GROUP=group, HEAD_DIM=head_dim, BLOCK_D=block_d, BLOCK_M=block_m, BLOCK_N=block_n,
            PAGE_SIZE=page_size, IS_PAGED=paged, FUSED_COMBINE=merge is not None,
            MERGE_ROWS=merge[0] if merge else 1, MERGE_SLOTS=merge[1] if merge else 1,
            KV_FORMAT=kv_format, V_TRANS=v.v_trans, CVT=cvt, FP8_DOT=v.fp8_dot,
            DOT_F32=INTERPRET and dot_bf16, num_warps=num_warps, num_stages=num_stages)
        self._combine = None
        if merge is None:
            cc = combine_launch_config(head_dim, num_splits, pdl_available=False)
            self._combine = ((batch * rows * num_q_heads,),
                             (self.partial_acc, self.partial_max, self.partial_sum, self.out, num_splits,
                              num_q_heads, *o_strides),
                             dict(ROWS=rows, HEAD_DIM=head_dim, BLOCK_D=block_d, BLOCK_S=cc.block_s,
                                  USE_PDL=False, TRIGGER_NEXT=False, num_warps=cc.num_warps))

    def __call__(self) -> torch.Tensor:
        lab_partial_kernel[self._grid](*self._args, **self._constexprs)
        if self._combine is not None:
            grid, args, kw = self._combine
            decode_attention_combine_kernel[grid](*args, **kw)
        return self.out
