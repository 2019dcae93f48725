"""Correctness before timing: every implementation's output against an fp64 reference.

The reference is the project's oracle (``validation.oracle.decode_attention_fp64``,
float64 on the CPU) when it is importable; otherwise a dense float64 computation on
the device with the same semantics (row r of R sees the first
``visible - (R - 1 - r)`` tokens).
"""

from __future__ import annotations

import math

import torch

from .fixtures import BenchInputs

REL_L2_MAX = {torch.bfloat16: 1.6e-2, torch.float16: 2e-3}
MIN_COSINE = 0.9999


def _dense_fp64(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    q4 = q if q.dim() == 4 else q.unsqueeze(1)
    batch, rows, hq, dim = q4.shape
    hkv = k.shape[1]
    group = hq // hkv
    out = torch.zeros(q4.shape, dtype=torch.float64, device=q.device)
    vis = visible.tolist()
    for b in range(batch):
        n = vis[b]
        kd = k[b, :, :n].double()  # [Hkv, n, D]
        vd = v[b, :, :n].double()
        qd = q4[b].double().view(rows, hkv, group, dim).permute(1, 0, 2, 3).reshape(hkv, rows * group, dim)
        s = torch.matmul(qd, kd.transpose(1, 2)) / math.sqrt(dim)  # [Hkv, R*G, n]
        limit = torch.tensor([n - (rows - 1 - r) for r in range(rows)], device=q.device)
        limit = limit.repeat_interleave(group)  # [R*G]
        s = s.masked_fill(torch.arange(n, device=q.device)[None, None, :] >= limit[None, :, None], float("-inf"))
        p = torch.softmax(s, dim=-1).nan_to_num(0.0)
        o = torch.matmul(p, vd).view(hkv, rows, group, dim).permute(1, 0, 2, 3).reshape(rows, hq, dim)
        out[b] = o
    return out if q.dim() == 4 else out[:, 0]


def reference(inputs: BenchInputs) -> tuple[torch.Tensor, str]:
    """fp64 output of the shape's inputs and the name of what computed it."""
    try:
        from validation.oracle import decode_attention_fp64
    except ImportError:
        return _dense_fp64(inputs.q, inputs.k, inputs.v, inputs.visible_tokens), "validation.bench.correctness dense fp64"
    ref = decode_attention_fp64(inputs.q, inputs.k, inputs.v, inputs.visible_tokens)
    return ref.to(inputs.q.device), "validation.oracle:decode_attention_fp64"


def compare(out: torch.Tensor, ref: torch.Tensor) -> dict:
    """rel L2, max abs error, min cosine over output vectors, and whether they pass."""
    o = out.double().reshape(-1, out.shape[-1])
    r = ref.double().reshape(-1, ref.shape[-1]).to(o.device)
    finite = bool(torch.isfinite(o).all())
    rel_l2 = ((o - r).norm() / r.norm()).item() if finite else float("inf")
    max_abs = (o - r).abs().max().item() if finite else float("inf")
    cos = torch.nn.functional.cosine_similarity(o, r, dim=-1)
    min_cos = cos.min().item() if finite else float("-inf")
    limit = REL_L2_MAX.get(out.dtype, 1e-2)
    return {"rel_l2": rel_l2, "max_abs": max_abs, "min_cosine": min_cos,
            "rel_l2_max": limit, "min_cosine_min": MIN_COSINE,
            "passed": finite and rel_l2 <= limit and min_cos >= MIN_COSINE}
