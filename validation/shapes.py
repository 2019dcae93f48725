"""The shape matrix of the numeric and bitwise suites.

Every case is ragged or has a tail (visible counts that are not a multiple of the tile or
the page), and together they cover group sizes 1/2/3/4/5/6/7/8/12/16, head dims
32/64/80/96/112/128/256 (every group and head dim of `validation/model_shapes.py`),
R = 1 and R > 1 (with rows that see nothing), zero-visible requests, more query rows
per KV group than one program's M tile, and pages larger than a tile (4 to 128 tokens).
Every configuration of the public H200 matrix (group 7 at D = 64, groups 4 and 8 at
D = 128, group 6 at D = 256 with R = 1 and R = 16, page size 16) has a case. New cases
go at the end: `validation.fingerprints` names cases by position. `GPU_CASES` adds long
contexts where a GPU makes them cheap, and one case per per-GPU shape of the model matrix.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One decode problem: sizes, per-request visible counts, page size and seed."""

    batch: int
    rows: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    visible: tuple[int, ...]
    page_size: int = 16
    seed: int = 0

    def __post_init__(self):
        if len(self.visible) != self.batch:
            raise ValueError(f"visible must have {self.batch} entries, got {len(self.visible)}")

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads

    @property
    def s_max(self) -> int:
        """Contiguous cache length: the longest request plus a poisoned tail."""
        return max(self.visible) + 13

    @property
    def id(self) -> str:
        rows = "" if self.rows == 1 else f"-R{self.rows}"
        visible = "_".join(str(v) for v in self.visible)
        return f"B{self.batch}{rows}-Hq{self.num_q_heads}-Hkv{self.num_kv_heads}-D{self.head_dim}-S{visible}-P{self.page_size}"

    def __str__(self) -> str:
        return self.id


CPU_CASES = (
    Case(1, 1, 14, 2, 64, (2047,), seed=1),
    Case(3, 1, 4, 4, 64, (1, 130, 0), seed=2),
    Case(2, 1, 8, 4, 80, (95, 17), seed=3),
    Case(3, 4, 8, 2, 128, (200, 3, 64), seed=4),
    Case(2, 2, 14, 2, 96, (33, 257), page_size=32, seed=5),
    Case(2, 1, 8, 1, 256, (111, 48), seed=6),
    Case(1, 16, 4, 2, 64, (40,), page_size=8, seed=7),
    Case(2, 3, 16, 2, 128, (300, 0), seed=8),
    Case(1, 16, 8, 1, 64, (70,), seed=9),
    Case(2, 2, 8, 8, 64, (300, 129), page_size=128, seed=13),
    Case(3, 1, 6, 2, 32, (50, 9, 0), page_size=4, seed=14),
    Case(2, 2, 24, 4, 256, (77, 20), seed=15),
    # Group sizes and head dims of the model matrix (validation/model_shapes.py) the cases
    # above lack: groups 5, 12 and 16, and D = 112; small, so the interpreter runs them fast.
    Case(2, 1, 5, 1, 128, (70, 9), seed=17),
    Case(1, 2, 12, 1, 128, (45,), page_size=8, seed=18),
    Case(2, 1, 16, 1, 128, (33, 100), page_size=32, seed=19),
    Case(1, 1, 8, 2, 112, (50,), seed=20),
)

GPU_CASES = (
    Case(4, 1, 32, 8, 128, (8191, 4096, 1, 0), seed=10),
    Case(2, 4, 28, 4, 128, (16385, 777), seed=11),
    Case(8, 1, 64, 8, 128, (4097, 3000, 2049, 1500, 999, 512, 17, 2), seed=12),
    Case(1, 16, 24, 4, 256, (20688,), seed=16),
)



def model_cases() -> tuple[Case, ...]:
    """One ragged case per distinct per-GPU attention shape of the model matrix (GPU runs)."""
    from .model_shapes import per_gpu_configs

    seen, cases = set(), []
    for config in per_gpu_configs():
        heads = (config.num_q_heads, config.num_kv_heads, config.head_dim)
        if heads in seen:
            continue
        seen.add(heads)
        cases.append(Case(3, 1, *heads, (4097, 1000, 1), page_size=16, seed=100 + len(cases)))
    return tuple(cases)


# The GPU evidence run checks every third model shape numerically (the bitwise suite keeps
# the cases above, whose fingerprints are recorded by position); every group size and head
# dim the model matrix produces is in CPU_CASES, which the GPU run also checks.
MODEL_CASES = model_cases()[::3]

SPLIT_COUNTS = (1, 2, 5, 16)
