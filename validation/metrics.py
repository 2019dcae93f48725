"""Error metrics of an output against the fp64 oracle: relative L2, max abs error, min cosine."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Metrics:
    rel_l2: float
    max_abs: float
    min_cosine: float
    finite: bool
    zero_rows_exact: bool

    def as_dict(self) -> dict:
        return {"rel_l2": self.rel_l2, "max_abs": self.max_abs, "min_cosine": self.min_cosine}


def rel_l2(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """||actual - expected|| / ||expected||; 0 for two zero tensors, inf for a nonzero against zero."""
    a, e = actual.double().cpu(), expected.double().cpu()
    den = e.norm().item()
    num = (a - e).norm().item()
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


def max_abs(actual: torch.Tensor, expected: torch.Tensor) -> float:
    diff = (actual.double().cpu() - expected.double().cpu()).abs()
    return diff.max().item() if diff.numel() else 0.0


def min_cosine(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """Smallest cosine similarity over output vectors (last dim) whose oracle is nonzero."""
    a = actual.double().cpu().reshape(-1, actual.shape[-1])
    e = expected.double().cpu().reshape(-1, expected.shape[-1])
    keep = e.norm(dim=1) > 0
    if not keep.any():
        return 1.0
    a, e = a[keep], e[keep]
    cos = (a * e).sum(dim=1) / (a.norm(dim=1) * e.norm(dim=1))
    cos = torch.nan_to_num(cos, nan=-1.0)
    return cos.min().item()


def compare(actual: torch.Tensor, expected: torch.Tensor) -> Metrics:
    """All metrics at once, plus whether every output is finite and every zero oracle row is exactly zero."""
    a = actual.double().cpu()
    e = expected.double().cpu()
    zero = e.reshape(-1, e.shape[-1]).norm(dim=1) == 0
    zero_rows_exact = bool((a.reshape(-1, a.shape[-1])[zero] == 0).all())
    return Metrics(
        rel_l2=rel_l2(a, e),
        max_abs=max_abs(a, e),
        min_cosine=min_cosine(a, e),
        finite=bool(torch.isfinite(a).all()),
        zero_rows_exact=zero_rows_exact,
    )
