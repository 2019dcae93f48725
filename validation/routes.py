"""The ways the suites call the kernels: single pass or split, contiguous or paged."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .fixtures import DecodeFixture


@dataclass(frozen=True)
class Route:
    paged: bool
    num_splits: int | None = None

    @property
    def id(self) -> str:
        kind = "single" if self.num_splits is None else f"split{self.num_splits}"
        return f"{kind}-{'paged' if self.paged else 'contig'}"

    def __str__(self) -> str:
        return self.id


NUMERIC_ROUTES = (
    Route(paged=False),
    Route(paged=True),
    Route(paged=False, num_splits=2),
    Route(paged=True, num_splits=5),
    Route(paged=False, num_splits=16),
)


def run_route(fx: DecodeFixture, route: Route, *, out: torch.Tensor | None = None, workspace=None) -> torch.Tensor:
    """Call the kernel entry point of `route` on the fixture, into a NaN-poisoned `out` by default."""
    import kernels

    out = fx.poisoned_out() if out is None else out
    if route.num_splits is None:
        if route.paged:
            return kernels.attention_decode_paged(fx.q, fx.k_pages, fx.v_pages, fx.block_table, fx.visible_tokens, out=out)
        return kernels.attention_decode(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens, out=out)
    if route.paged:
        return kernels.attention_decode_paged_splitkv(
            fx.q, fx.k_pages, fx.v_pages, fx.block_table, fx.visible_tokens, num_splits=route.num_splits, workspace=workspace, out=out
        )
    return kernels.attention_decode_splitkv(
        fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens, num_splits=route.num_splits, workspace=workspace, out=out
    )
