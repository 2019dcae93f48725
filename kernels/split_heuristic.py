"""How many KV splits a decode call should use, decided on the host.

Split-KV exists to fill the GPU: one program per (request, KV head) leaves most SMs
idle at small batch and long context. The choice follows FlashAttention's
``num_splits_heuristic`` (wave efficiency), adapted to a memory-bound kernel:

* never split when the unsplit grid already fills the GPU (``batch * kv_heads`` at
  least ``fill_fraction`` of the resident program slots);
* every split keeps at least ``min_tokens_per_split`` tokens (one K/V tile), so
  that no program is left without a whole tile of work;
* among the allowed power-of-two counts, pick the one with the best wave efficiency
  (programs / (slots * ceil(programs / slots))), preferring fewer splits when the
  efficiency is within ``tolerance`` of the best.

The inputs are host integers only (the largest visible count of the capture bucket,
not the device tensor), so the decision never synchronizes with the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SPLIT_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128)


@dataclass(frozen=True)
class SplitPolicy:
    """Constants of the heuristic (calibrated on an H200; see docs/results/perf-notes.md).

    Attributes:
        programs_per_sm: partial-kernel programs resident per SM (occupancy).
        min_tokens_per_split: fewest visible tokens a split may own.
        fill_fraction: an unsplit grid this fraction of the slots counts as full.
        tolerance: efficiencies within this fraction of the best count as ties.
        max_splits: largest count returned.
    """

    programs_per_sm: int = 2
    min_tokens_per_split: int = 64
    fill_fraction: float = 0.8
    tolerance: float = 0.05
    max_splits: int = 128


DEFAULT_POLICY = SplitPolicy()


def _require_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return value


def wave_efficiency(programs: int, slots: int) -> float:
    """Fraction of the launched waves' program slots that do work."""
    waves = math.ceil(programs / slots)
    return programs / (waves * slots)


def choose_num_splits(batch: int, num_kv_heads: int, max_visible_tokens: int, num_sms: int,
                      *, policy: SplitPolicy = DEFAULT_POLICY) -> int:
    """Number of KV splits for a decode call.

    Args:
        batch: requests B in the call (or the capture bucket's batch).
        num_kv_heads: programs per request and split: the KV heads Hkv (one program
            covers a KV head's query group), times the query-row blocks when G x R
            rows need more than one program.
        max_visible_tokens: the longest visible range any request may have.
        num_sms: multiprocessors of the device (132 on an H200).
        policy: the heuristic's constants.

    Returns:
        A power of two in 1..policy.max_splits.
    """
    _require_int("batch", batch, 1)
    _require_int("num_kv_heads", num_kv_heads, 1)
    _require_int("max_visible_tokens", max_visible_tokens, 0)
    _require_int("num_sms", num_sms, 1)
    slots = num_sms * policy.programs_per_sm
    base = batch * num_kv_heads
    if base >= policy.fill_fraction * slots:
        return 1
    allowed = [s for s in SPLIT_CHOICES
               if s <= policy.max_splits and (s == 1 or max_visible_tokens >= s * policy.min_tokens_per_split)]
    best = max(wave_efficiency(base * s, slots) for s in allowed)
    for s in allowed:
        if wave_efficiency(base * s, slots) >= (1.0 - policy.tolerance) * best:
            return s
    return allowed[-1]
