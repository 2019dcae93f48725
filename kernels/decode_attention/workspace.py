"""Preallocated fp32 partial buffers of the split-KV path, sized for a layer's worst case."""

from __future__ import annotations

import torch

from .launch_config import MAX_SPLITS


class LayerWorkspace:
    """Partial accumulators, maxima and sums for `num_splits` splits of every output row.

    Allocate once per layer (or per model) before CUDA-graph capture and pass it to the
    `_splitkv` entry points: the launch path then allocates nothing. One workspace serves
    any call whose batch, rows, query heads, head dim and splits are within its maxima.

    Args:
        max_batch: largest batch B.
        max_rows: largest number of query rows R per request (1..16).
        num_q_heads: query heads Hq (a call must use at most this many).
        head_dim: head dimension D (a call must use at most this).
        max_splits: largest num_splits.
        device: where the kernels run.
    """

    def __init__(self, max_batch: int, max_rows: int, num_q_heads: int, head_dim: int, max_splits: int, device):
        for name, value, low, high in (
            ("max_batch", max_batch, 1, None),
            ("max_rows", max_rows, 1, 16),
            ("num_q_heads", num_q_heads, 1, None),
            ("head_dim", head_dim, 1, 256),
            ("max_splits", max_splits, 1, MAX_SPLITS),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
                bound = f"an int >= {low}" if high is None else f"an int in {low}..{high}"
                raise ValueError(f"LayerWorkspace {name} must be {bound}, got {value!r}")
        self.max_batch = max_batch
        self.max_rows = max_rows
        self.num_q_heads = num_q_heads
        self.head_dim = head_dim
        self.max_splits = max_splits
        vectors = max_batch * max_rows * num_q_heads * max_splits
        self.partial_acc = torch.empty(vectors * head_dim, dtype=torch.float32, device=device)
        self.partial_max = torch.empty(vectors, dtype=torch.float32, device=device)
        self.partial_sum = torch.empty(vectors, dtype=torch.float32, device=device)
        # Finished splits per (request, KV head) of a launch that merges in place; every such
        # launch leaves them at 0 again, so they are zeroed once, here (before any capture).
        self.split_counters = torch.zeros(max_batch * num_q_heads, dtype=torch.int32, device=device)
        self.device = self.partial_acc.device

    @property
    def limits(self) -> tuple:
        """(max_batch, max_rows, num_q_heads, head_dim, max_splits, device): what `fits` compares a call with."""
        return self.max_batch, self.max_rows, self.num_q_heads, self.head_dim, self.max_splits, self.device

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size()
                   for t in (self.partial_acc, self.partial_max, self.partial_sum, self.split_counters))

    def fits(self, batch: int, rows: int, num_q_heads: int, head_dim: int, num_splits: int, device) -> bool:
        """Return True when a call of this size fits; raise ValueError (expected vs actual) otherwise."""
        for name, actual, limit in (
            ("batch", batch, self.max_batch),
            ("rows", rows, self.max_rows),
            ("num_q_heads", num_q_heads, self.num_q_heads),
            ("head_dim", head_dim, self.head_dim),
            ("num_splits", num_splits, self.max_splits),
        ):
            if actual > limit:
                raise ValueError(f"workspace too small: {name} must be <= {limit} (LayerWorkspace max), got {actual}")
        if torch.device(device) != self.device:
            raise ValueError(f"workspace is on {self.device}, inputs are on {torch.device(device)}")
        return True

    def __repr__(self) -> str:
        return (
            f"LayerWorkspace(max_batch={self.max_batch}, max_rows={self.max_rows}, num_q_heads={self.num_q_heads}, "
            f"head_dim={self.head_dim}, max_splits={self.max_splits}, device={str(self.device)!r})"
        )
