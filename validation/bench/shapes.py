"""The benchmark matrices: the public H200 decode shapes, plus the R = 16 row case; and the
model matrix (`--matrix models`), built from validation/model_shapes.py."""

from __future__ import annotations

from dataclasses import dataclass

KV_BYTES_PER_ELEMENT = 2  # bf16


@dataclass(frozen=True)
class BenchShape:
    """One decode shape: batch, query heads, KV heads, head dim, context, query rows."""

    name: str
    batch: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    context: int
    rows: int = 1

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads

    @property
    def kv_bytes(self) -> int:
        """Bytes of K and V a call must read: 2 x B x Hkv x S x D x 2."""
        return 2 * self.batch * self.num_kv_heads * self.context * self.head_dim * KV_BYTES_PER_ELEMENT

    @property
    def kv_mb(self) -> float:
        return self.kv_bytes / 1e6

    @property
    def size_class(self) -> str:
        """Which bar applies: `large` (KV >= 128 MB), `medium` (16-128 MB) or `small` (< 16 MB)."""
        if self.kv_bytes >= 128e6:
            return "large"
        if self.kv_bytes >= 16e6:
            return "medium"
        return "small"

    @property
    def warm_l2(self) -> bool:
        """Shapes under 64 MB of KV are timed back to back (their KV may stay in L2);
        larger ones start every call from an L2 without their data."""
        return self.kv_bytes < 64e6

    def floor_us(self, read_ceiling_tbps: float) -> float:
        """Time to read the KV bytes once at the read ceiling, in microseconds."""
        return self.kv_bytes / (read_ceiling_tbps * 1e12) * 1e6

    def label(self) -> str:
        rows = f"-R{self.rows}" if self.rows > 1 else ""
        return f"B{self.batch}-Hq{self.num_q_heads}-Hkv{self.num_kv_heads}-D{self.head_dim}-S{self.context}{rows}"


MATRIX = (
    BenchShape("seed-qwen0.5b-2k", 1, 14, 2, 64, 2048),
    BenchShape("llama8b-b1-4k", 1, 32, 8, 128, 4096),
    BenchShape("llama8b-b1-32k", 1, 32, 8, 128, 32768),
    BenchShape("llama8b-b1-128k", 1, 32, 8, 128, 131072),
    BenchShape("llama8b-b8-8k", 8, 32, 8, 128, 8192),
    BenchShape("llama8b-b64-2k", 64, 32, 8, 128, 2048),
    BenchShape("h24kv4d256-b1-20k", 1, 24, 4, 256, 20688),
    BenchShape("llama70b-tp8-b4-32k", 4, 8, 1, 128, 32768),
    BenchShape("h24kv4d256-b1-20k-r16", 1, 24, 4, 256, 20688, rows=16),
)

QUANT_SHAPES = ("llama8b-b1-32k", "llama8b-b1-128k", "llama8b-b8-8k", "h24kv4d256-b1-20k", "h24kv4d256-b1-20k-r16")
"""The bar rows timed with bf16, int8 and FP8 caches (`python -m validation.bench.quantized`)."""


def kv_bytes_read(shape: BenchShape, kv_format: str, *, scale_bytes: int = 4) -> int:
    """Bytes a call reads from the cache in a format: K and V values plus their scales.

    bf16: 2 bytes per element; int8: 1 byte per element plus one `scale_bytes` scale per
    token and KV head (K and V each); fp8: 1 byte per element plus one float32 per KV head.
    """
    tokens = shape.batch * shape.num_kv_heads * shape.context
    if kv_format == "bf16":
        return 2 * tokens * shape.head_dim * KV_BYTES_PER_ELEMENT
    if kv_format == "int8":
        return 2 * tokens * (shape.head_dim + scale_bytes)
    if kv_format == "fp8":
        return 2 * tokens * shape.head_dim + 2 * shape.num_kv_heads * 4
    raise ValueError(f"kv_format must be bf16, int8 or fp8, got {kv_format!r}")


SPEEDUP_SHAPES = ("seed-qwen0.5b-2k", "llama8b-b1-32k", "h24kv4d256-b1-20k-r16")
"""Shapes where split-KV must be at least 5x faster than the single-pass kernel."""

SPLIT_SWEEP = (1, 2, 4, 8, 16, 32, 64, 128)


def model_matrix() -> tuple[BenchShape, ...]:
    """Every (model, TP) of validation/model_shapes.py at batch 1/4/16/64 and context 2K-128K where it fits."""
    from validation.model_shapes import model_matrix as rows

    return tuple(BenchShape(f"{c.id}-b{b}-{s // 1024}k", b, c.num_q_heads, c.num_kv_heads, c.head_dim, s)
                 for c, b, s in rows())


MATRICES = {"public": lambda: MATRIX, "models": model_matrix}


def select(names: list[str] | None, matrix: str = "public") -> tuple[BenchShape, ...]:
    """The matrix, or the named subset of it (unknown names raise ValueError).

    Args:
        names: shape names, or None / empty for all of them.
        matrix: "public" (the H200 decode shapes) or "models" (the model matrix).
    """
    if matrix not in MATRICES:
        raise ValueError(f"unknown matrix {matrix!r}; expected one of {sorted(MATRICES)}")
    shapes = MATRICES[matrix]()
    if not names:
        return shapes
    by_name = {s.name: s for s in shapes}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown shape(s) {unknown}; expected some of {sorted(by_name)}")
    return tuple(by_name[n] for n in names)
