"""Tolerances per output dtype, derived from its unit roundoff u = 2^-(mantissa bits + 1).

Two bounds must both hold for a case:

* absolute: rel_l2 <= 4u, max_abs <= 8u * max(1, max|oracle|), min_cosine >= 1 - 8u^2;
* relative to torch in the same dtype (the FlashAttention test's rule): the kernel's
  rel_l2 and max_abs against the fp64 oracle are at most RATIO x those of
  `kernels.decode_attention.reference` run in the inputs' dtype, plus u (resp.
  u * max|oracle|) so that a case the same-dtype reference gets exactly right still
  leaves the output rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
RATIO = 2.0


@dataclass(frozen=True)
class Tolerance:
    dtype: str
    unit_roundoff: float
    rel_l2: float
    max_abs_per_unit: float
    min_cosine: float
    ratio: float

    def max_abs(self, oracle_scale: float) -> float:
        return self.max_abs_per_unit * max(1.0, oracle_scale)


def tolerance_for(dtype: str) -> Tolerance:
    """The tolerance of one output dtype ("bf16" or "fp16")."""
    if dtype not in UNIT_ROUNDOFF:
        raise ValueError(f"dtype must be one of {sorted(UNIT_ROUNDOFF)}, got {dtype!r}")
    u = UNIT_ROUNDOFF[dtype]
    return Tolerance(dtype=dtype, unit_roundoff=u, rel_l2=4 * u, max_abs_per_unit=8 * u, min_cosine=1.0 - 8 * u * u, ratio=RATIO)


def dtype_name(dtype: torch.dtype) -> str:
    for name, value in TORCH_DTYPES.items():
        if value == dtype:
            return name
    raise ValueError(f"dtype must be bfloat16 or float16, got {dtype}")


def violations(metrics, same_dtype_reference, tol: Tolerance, oracle_scale: float) -> list[str]:
    """Every bound `metrics` breaks, as readable lines (empty when the case passes).

    Args:
        metrics: `validation.metrics.Metrics` of the kernel against the fp64 oracle.
        same_dtype_reference: Metrics of the same-dtype torch reference against the oracle.
        tol: the output dtype's tolerance.
        oracle_scale: max |oracle|.
    """
    u = tol.unit_roundoff
    found = []
    if not metrics.finite:
        found.append("output holds NaN or Inf")
    if not metrics.zero_rows_exact:
        found.append("a row with no visible token is not exactly zero")
    if not metrics.rel_l2 <= tol.rel_l2:
        found.append(f"rel_l2 {metrics.rel_l2:.3e} > {tol.rel_l2:.3e}")
    if not metrics.max_abs <= tol.max_abs(oracle_scale):
        found.append(f"max_abs {metrics.max_abs:.3e} > {tol.max_abs(oracle_scale):.3e}")
    if not metrics.min_cosine >= tol.min_cosine:
        found.append(f"min_cosine {metrics.min_cosine:.9f} < {tol.min_cosine:.9f}")
    rel_bound = tol.ratio * same_dtype_reference.rel_l2 + u
    if not metrics.rel_l2 <= rel_bound:
        found.append(f"rel_l2 {metrics.rel_l2:.3e} > {tol.ratio:g} x same-dtype torch {same_dtype_reference.rel_l2:.3e} + u")
    abs_bound = tol.ratio * same_dtype_reference.max_abs + u * max(1.0, oracle_scale)
    if not metrics.max_abs <= abs_bound:
        found.append(f"max_abs {metrics.max_abs:.3e} > {tol.ratio:g} x same-dtype torch {same_dtype_reference.max_abs:.3e} + u")
    return found
