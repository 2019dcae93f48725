"""Which (case, dtype) pairs a suite run covers.

`full` (the default, and what evidence runs use) takes every case in every dtype. `ci`
takes each case once, in one dtype, alternating bf16 and fp16 down the case list, so that
both dtypes and every case still run while the interpreter does half the work; its
artifacts say so in their recorded command (`--suite-tier ci`).
"""

from __future__ import annotations

import zlib

TIERS = ("full", "ci")
DTYPE_ORDER = ("bf16", "fp16")


def ci_dtype(case, cases) -> str:
    """The one dtype the `ci` tier runs `case` in: alternating down `cases`."""
    position = cases.index(case) if case in cases else sum(map(ord, case.id))
    return DTYPE_ORDER[position % len(DTYPE_ORDER)]


def selected(params: dict, cases, tier: str) -> bool:
    """Whether a test with these parameters runs in `tier`.

    Parameters are read as the suites name them: `case` and `dtype`, or a fingerprint
    `target` tuple (key, case, dtype, route). Tests without a case or a dtype always run.
    """
    if tier not in TIERS:
        raise ValueError(f"unknown suite tier {tier!r}; expected one of {TIERS}")
    if tier == "full":
        return True
    case, dtype = params.get("case"), params.get("dtype")
    target = params.get("target")
    if target is not None and len(target) == 4:
        case, dtype = target[1], target[2]
    if case is None or dtype is None:
        return True
    return dtype == ci_dtype(case, cases)


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` (0 <= K < N) as (K, N); raises ValueError otherwise."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard takes K/N with whole numbers, got {text!r}") from None
    if not 0 <= index < count:
        raise ValueError(f"--shard {text}: K must be at least 0 and less than N")
    return index, count


def case_of(params: dict):
    """The case a test with these parameters measures (`case`, `qcase` or a fingerprint
    `target`'s second field); None for a test without one."""
    target = params.get("target")
    return params.get("case") or params.get("qcase") or (
        target[1] if isinstance(target, tuple) and len(target) > 1 else None)


def shard_of(params: dict, count: int) -> int:
    """The shard (0 .. count-1) a test with these parameters belongs to.

    Every test of one case lands in one shard, so a shard compiles the kernels of its
    cases and reuses them across routes and anchors; tests without a case go to shard 0.
    """
    case = case_of(params)
    if case is None:
        return 0
    return zlib.crc32(str(case).encode()) % count
