"""How much a quantized cache changes attention: each format against the bf16 cache of the
same inputs. This is the quantization error itself (what the numeric suite leaves out by
taking the dequantized cache as truth), for the benchmark artifact and the report.

For every format it reports the cache error (dequantized K and V against the bf16 cache,
over the visible tokens) and the output error (fp64 attention over the dequantized cache
against fp64 attention over the bf16 cache), each as rel-L2 and max-abs.
"""

from __future__ import annotations

from typing import Callable

import torch

from kernels.decode_attention.quantize import dequantize_kv, quantize_kv_fp8, quantize_kv_int8

from .oracle import decode_attention_fp64

QUANT_FORMATS = {
    "int8": lambda x: quantize_kv_int8(x, scale_dtype=torch.float32),
    "int8-f16": lambda x: quantize_kv_int8(x, scale_dtype=torch.float16),
    "fp8-head": lambda x: quantize_kv_fp8(x, per_head=True),
    "fp8-tensor": lambda x: quantize_kv_fp8(x, per_head=False),
}


def quantize_cache(kv_format: str, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(stored values, scale) of a [N, Hkv, S, D] cache in one of QUANT_FORMATS."""
    if kv_format not in QUANT_FORMATS:
        raise ValueError(f"kv_format must be one of {sorted(QUANT_FORMATS)}, got {kv_format!r}")
    return QUANT_FORMATS[kv_format](cache)


def _errors(actual: torch.Tensor, expected: torch.Tensor, visible_tokens: torch.Tensor | None = None) -> tuple:
    """(rel-L2, max-abs) in float64 on the tensors' device; over the visible tokens of [B, Hkv, S, D] caches."""
    if visible_tokens is not None:
        tokens = torch.arange(actual.shape[2], device=actual.device)
        seen = (tokens[None, :] < visible_tokens.to(actual.device).long()[:, None])[:, None, :, None]  # [B, 1, S, 1]
        actual = torch.where(seen, actual.double(), 0.0)
        expected = torch.where(seen, expected.to(actual.device).double(), 0.0)
    diff = actual.double() - expected.to(actual.device).double()
    norm = expected.double().norm().item()
    rel = diff.norm().item() / norm if norm else (0.0 if diff.norm().item() == 0 else float("inf"))
    return rel, (diff.abs().max().item() if diff.numel() else 0.0)


def quantization_error_table(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                             visible_tokens: torch.Tensor, *, formats=tuple(QUANT_FORMATS),
                             attention: Callable | None = None) -> list[dict]:
    """One row per format: its cache and output error against the bf16 (q-dtype) cache.

    Args:
        q: [B, Hq, D] or [B, R, Hq, D].
        k_cache, v_cache: contiguous [B, Hkv, S, D] caches in q's dtype (the unquantized truth),
            finite everywhere (a per-head/tensor FP8 scale is taken over the whole cache).
        visible_tokens: int [B].
        formats: names from QUANT_FORMATS.
        attention: fp64 attention (q, k, v, visible_tokens) -> output; default the CPU oracle
            (`validation.oracle.decode_attention_fp64`); the benchmark passes a device one.

    Returns:
        [{"format", "k_rel_l2", "k_max_abs", "v_rel_l2", "v_max_abs", "out_rel_l2", "out_max_abs"}].
    """
    attention = attention or decode_attention_fp64
    truth = attention(q, k_cache, v_cache, visible_tokens)
    rows = []
    for kv_format in formats:
        k_deq = dequantize_kv(*quantize_cache(kv_format, k_cache))
        v_deq = dequantize_kv(*quantize_cache(kv_format, v_cache))
        out = attention(q, k_deq, v_deq, visible_tokens)
        (k_rel, k_abs), (v_rel, v_abs) = _errors(k_deq, k_cache, visible_tokens), _errors(v_deq, v_cache, visible_tokens)
        out_rel, out_abs = _errors(out, truth)
        rows.append({"format": kv_format, "k_rel_l2": k_rel, "k_max_abs": k_abs, "v_rel_l2": v_rel, "v_max_abs": v_abs,
                     "out_rel_l2": out_rel, "out_max_abs": out_abs})
        del k_deq, v_deq, out
    return rows


def format_error_table(rows: list[dict]) -> str:
    """The table as aligned text, one line per format."""
    header = ("format", "K rel-L2", "K max-abs", "V rel-L2", "V max-abs", "out rel-L2", "out max-abs")
    keys = ("k_rel_l2", "k_max_abs", "v_rel_l2", "v_max_abs", "out_rel_l2", "out_max_abs")
    lines = [header] + [(r["format"], *(f"{r[k]:.3e}" for k in keys)) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
                     for line in lines)
