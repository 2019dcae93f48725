"""Seeded input rows shared by the example suites, and their identities."""

from __future__ import annotations

import hashlib
import random
import struct

from examplepkg.ops import f32


def rows(seed: int = 20261129, count: int = 16, length: int = 1001) -> list[list[float]]:
    rng = random.Random(seed)
    return [[f32(rng.uniform(-1.0, 1.0)) for _ in range(length)] for _ in range(count)]


def identity(values: list[list[float]]) -> str:
    digest = hashlib.sha256()
    for row in values:
        digest.update(struct.pack(f"<{len(row)}f", *row))
    return digest.hexdigest()


def fingerprint(outputs: list[float]) -> str:
    return hashlib.sha256(struct.pack(f"<{len(outputs)}f", *outputs)).hexdigest()
