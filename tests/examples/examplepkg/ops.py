"""Row sums in emulated float32: a single pass, and a split pass with a combine step.

With `num_splits=1` the split pass adds the same numbers in the same order as the
single pass, so the two are byte-identical; with more splits the order changes
and so may the last bits.
"""

from __future__ import annotations

import math
import struct


def f32(value: float) -> float:
    """Round a Python float to the nearest float32."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def single_pass_sum(values: list[float]) -> float:
    acc = 0.0
    for value in values:
        acc = f32(acc + value)
    return acc


def split_sum(values: list[float], num_splits: int) -> float:
    if num_splits < 1:
        raise ValueError(f"num_splits must be >= 1, got {num_splits}")
    chunk = math.ceil(len(values) / num_splits) if values else 1
    partials = [single_pass_sum(values[start:start + chunk]) for start in range(0, len(values), chunk)] or [0.0]
    acc = partials[0]
    for partial in partials[1:]:
        acc = f32(acc + partial)
    return acc
