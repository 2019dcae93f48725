"""Implementations the benchmark times on one shape, each built into a zero-argument,
graph-capturable call with preallocated output (and workspace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .fixtures import BenchInputs, QuantizedCache
from .shapes import BenchShape


@dataclass
class Impl:
    """A named call on one shape. `kind` is ours, baseline, variant or peer."""

    name: str
    kind: str
    call: Callable[[], torch.Tensor]
    num_splits: int | None = None
    paged: bool = False
    config: str = ""


def project_impls(shape: BenchShape, x: BenchInputs, num_splits: int, *, paged: bool = True) -> list[Impl]:
    """The project's kernels as `DecodeAttention` routes them: split-KV at `num_splits`
    (contiguous, paged), or the single pass when the heuristic chose one split; and the
    single pass itself as the baseline."""
    from kernels import (
        LayerWorkspace,
        attention_decode,
        attention_decode_paged,
        attention_decode_paged_splitkv,
        attention_decode_splitkv,
    )

    ws = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, max(num_splits, 1), x.q.device)
    out_c, out_p, out_s = torch.empty_like(x.q), torch.empty_like(x.q), torch.empty_like(x.q)
    if num_splits == 1:
        contiguous = lambda: attention_decode(x.q, x.k, x.v, x.visible_tokens, out=out_c)  # noqa: E731
        paged_call = lambda: attention_decode_paged(  # noqa: E731
            x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens, out=out_p)
    else:
        contiguous = lambda: attention_decode_splitkv(  # noqa: E731
            x.q, x.k, x.v, x.visible_tokens, num_splits=num_splits, workspace=ws, out=out_c)
        paged_call = lambda: attention_decode_paged_splitkv(  # noqa: E731
            x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens, num_splits=num_splits, workspace=ws,
            out=out_p)
    impls = [Impl("splitkv", "ours", contiguous, num_splits)]
    if paged:
        impls.append(Impl("splitkv_paged", "ours", paged_call, num_splits, paged=True))
    impls.append(Impl("single_pass", "baseline", lambda: attention_decode(
        x.q, x.k, x.v, x.visible_tokens, out=out_s), 1))
    return impls


def project_split_call(shape: BenchShape, x: BenchInputs, num_splits: int) -> Callable[[], torch.Tensor]:
    """The project's contiguous split-KV call at a given split count (for the sweep)."""
    from kernels import LayerWorkspace, attention_decode_splitkv

    ws = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, num_splits, x.q.device)
    out = torch.empty_like(x.q)
    return lambda: attention_decode_splitkv(x.q, x.k, x.v, x.visible_tokens, num_splits=num_splits,
                                            workspace=ws, out=out)


def variant_impl(shape: BenchShape, x: BenchInputs, num_splits: int, config, *, paged: bool = False,
                 name: str | None = None) -> Impl:
    """The tuning variant in `validation/bench/variants/splitkv_tuned.py`."""
    from .variants.splitkv_tuned import TunedWorkspace, splitkv_tuned

    ws = TunedWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, num_splits, x.q.device)
    out = torch.empty_like(x.q)
    if paged:
        call = lambda: splitkv_tuned(x.q, x.k_paged, x.v_paged, x.visible_tokens, num_splits=num_splits,  # noqa: E731
                                     config=config, block_table=x.block_table, workspace=ws, out=out)
    else:
        call = lambda: splitkv_tuned(x.q, x.k, x.v, x.visible_tokens, num_splits=num_splits,  # noqa: E731
                                     config=config, workspace=ws, out=out)
    label = name or ("tuned_paged" if paged else "tuned")
    return Impl(label, "variant", call, num_splits, paged=paged, config=config.label())


def peer_impls(shape: BenchShape, x: BenchInputs, names: list[str]) -> tuple[list[Impl], dict[str, str]]:
    """Peers that can run here; the others with the reason they were skipped."""
    from .peers import peer_builders

    builders = peer_builders()
    impls, skipped = [], {}
    if shape.rows != 1:
        return [], {n: "peers time one query row per request" for n in names}
    for name in names:
        try:
            impls.append(Impl(name, "peer", builders[name](x.q, x.k, x.v)))
        except Exception as exc:  # an unavailable peer is reported, not fatal
            skipped[name] = f"{type(exc).__name__}: {exc}"
    return impls, skipped


def quantized_route_impls(shape: BenchShape, x: BenchInputs, cache: QuantizedCache | None,
                          num_splits: int) -> list[Impl]:
    """Our route at `num_splits` (split-KV, or the single pass at one split), contiguous and
    paged, over the bf16 inputs (`cache` None) or a quantized cache: named "<format>" and
    "<format>_paged" with format bf16, int8 or fp8."""
    from kernels import (
        LayerWorkspace,
        attention_decode,
        attention_decode_paged,
        attention_decode_paged_splitkv,
        attention_decode_splitkv,
    )

    name = "bf16" if cache is None else cache.kv_format
    if cache is None:
        k, v, kp, vp, scales, page_scales = x.k, x.v, x.k_paged, x.v_paged, {}, {}
    else:
        k, v, kp, vp = cache.k, cache.v, cache.k_paged, cache.v_paged
        scales = {"k_scale": cache.k_scale, "v_scale": cache.v_scale}
        page_scales = {"k_scale": cache.k_page_scale, "v_scale": cache.v_page_scale}
    ws = LayerWorkspace(shape.batch, shape.rows, shape.num_q_heads, shape.head_dim, max(num_splits, 1), x.q.device)
    out_c, out_p = torch.empty_like(x.q), torch.empty_like(x.q)
    if num_splits == 1:
        contiguous = lambda: attention_decode(x.q, k, v, x.visible_tokens, out=out_c, **scales)  # noqa: E731
        paged = lambda: attention_decode_paged(  # noqa: E731
            x.q, kp, vp, x.block_table, x.visible_tokens, out=out_p, **page_scales)
    else:
        contiguous = lambda: attention_decode_splitkv(  # noqa: E731
            x.q, k, v, x.visible_tokens, num_splits=num_splits, workspace=ws, out=out_c, **scales)
        paged = lambda: attention_decode_paged_splitkv(  # noqa: E731
            x.q, kp, vp, x.block_table, x.visible_tokens, num_splits=num_splits, workspace=ws, out=out_p,
            **page_scales)
    return [Impl(name, "ours", contiguous, num_splits, config=name),
            Impl(f"{name}_paged", "ours", paged, num_splits, paged=True, config=name)]


def flashinfer_fp8_impl(x: BenchInputs) -> tuple[Impl, torch.Tensor, torch.Tensor]:
    """FlashInfer's FP8 decode (per-tensor k_scale / v_scale) on the inputs, with the
    dequantized (K, V) it must match; raises where FlashInfer does not import or run."""
    from .peers import flashinfer_fp8

    call, k_deq, v_deq = flashinfer_fp8(x.q, x.k, x.v)
    return Impl("flashinfer_fp8", "peer", call, config="fp8-tensor"), k_deq, v_deq
