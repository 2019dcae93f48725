"""Layer-level decode attention: an opt-in split-KV route with fail-closed admission.

`DecodeAttention` owns a `LayerWorkspace`, chooses `num_splits` per capture bucket
(batch, longest visible range) with `kernels.split_heuristic`, and routes each call:

* the switch is off by default; it is turned on by ``split_kv=True`` or, when that
  argument is left ``None``, by the environment variable ``DESIGN_GATES_SPLITKV=1``
  read once when the layer is built. Off means exactly today's single-pass kernels;
* admission is fail-closed and per call: only configurations the validation matrix covers
  (dtype, head dim, group size, page size, rows) that are the layer's own (the call's
  Hq, Hkv, head dim, page size and dtype are read from its tensors and must equal what
  the layer was built for) and that fit the workspace enter the split path; every other
  call runs the single pass, which computes any shape, and `last_route` says why;
* `route_for(...)` says which route a call would take and why, without running it.

The route of a call is decided once per call signature (sizes, dtype, paging, host
bound) and cached, so a call costs a dictionary look-up on top of the entry point's own
host path.

A call allocates nothing and never reads the device (`visible_tokens` stays there,
`num_splits` comes from host integers), so it can be captured in a CUDA graph.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from .decode_attention import (
    LayerWorkspace,
    attention_decode,
    attention_decode_paged,
    attention_decode_paged_splitkv,
    attention_decode_splitkv,
)
from .decode_attention.launch_config import block_d_for, partial_launch_config
from .split_heuristic import DEFAULT_POLICY, SplitPolicy, choose_num_splits

SWITCH_ENV = "DESIGN_GATES_SPLITKV"
SWITCH_DEFAULT = "0"  # the value an unset SWITCH_ENV reads as: the default route
SHARED_MEMORY_PER_SM = 228 * 1024
DEFAULT_NUM_SMS = 132


@dataclass(frozen=True)
class Coverage:
    """What the validation matrix covers (validation/shapes.py); the split route admits
    nothing else."""

    dtypes: tuple[torch.dtype, ...] = (torch.bfloat16, torch.float16)
    head_dims: tuple[int, ...] = (32, 64, 80, 96, 112, 128, 256)
    group_sizes: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16)
    page_sizes: tuple[int, ...] = (4, 8, 16, 32, 128)
    max_rows: int = 16
    quantized_caches: tuple[torch.dtype, ...] = (torch.int8, torch.float8_e4m3fn)


VALIDATED = Coverage()


@dataclass(frozen=True)
class Route:
    """The route a call takes: `split` (with `num_splits`) or `single-pass`, and why."""

    path: str
    num_splits: int
    reason: str

    @property
    def is_split(self) -> bool:
        return self.path == "split"


def switch_from_env(environ=None) -> bool:
    """True when DESIGN_GATES_SPLITKV is "1"; unset or "0" is off; anything else is an error."""
    value = (os.environ if environ is None else environ).get(SWITCH_ENV, SWITCH_DEFAULT).strip()
    if value not in ("0", "1", ""):
        raise ValueError(f"{SWITCH_ENV} must be 0 or 1, got {value!r}")
    return value == "1"


def programs_per_sm(head_dim: int, group_rows: int, dtype: torch.dtype) -> int:
    """Partial-kernel programs one SM holds, from the shared memory of its K/V pipeline."""
    cfg = partial_launch_config(head_dim, group_rows, dtype)
    stage_bytes = 2 * cfg.block_n * block_d_for(head_dim) * 2  # K and V tiles, 16-bit
    q_bytes = cfg.block_m * block_d_for(head_dim) * 2
    return max(1, SHARED_MEMORY_PER_SM // (cfg.num_stages * stage_bytes + q_bytes))


def layer_num_splits(num_q_heads: int, num_kv_heads: int, head_dim: int, batch: int, rows: int,
                     max_visible_tokens: int, *, dtype: torch.dtype = torch.bfloat16, num_sms: int = DEFAULT_NUM_SMS,
                     policy: SplitPolicy = DEFAULT_POLICY) -> int:
    """`choose_num_splits` with the partial kernel's real grid and occupancy: programs per
    split are B x Hkv x (query-row blocks), slots per SM follow from its shared memory."""
    group_rows = num_q_heads // num_kv_heads * rows
    row_blocks = -(-group_rows // partial_launch_config(head_dim, group_rows, dtype).block_m)
    tuned = SplitPolicy(**{**policy.__dict__, "programs_per_sm": programs_per_sm(head_dim, group_rows, dtype)})
    return choose_num_splits(batch, num_kv_heads * row_blocks, max_visible_tokens, num_sms, policy=tuned)


class DecodeAttention:
    """Decode attention of one layer, single pass or split-KV behind an opt-in switch.

    Args:
        num_q_heads, num_kv_heads, head_dim: the layer's attention shape.
        max_batch: largest batch a call (or capture bucket) may have.
        max_rows: largest number of query rows R per request (1..16).
        dtype: q/cache dtype the layer runs in.
        device: where the caches live; the workspace is allocated there.
        page_size: block size of a paged cache, or None for a contiguous one.
        split_kv: the switch; None reads DESIGN_GATES_SPLITKV once, here.
        max_splits: largest num_splits (sizes the workspace).
        num_sms: multiprocessors; default: the device's, or 132 off-GPU.
        policy: constants of the split heuristic.
        coverage: what the validation matrix covers.
        scale: softmax scale, default 1 / sqrt(head_dim).
    """

    def __init__(self, num_q_heads: int, num_kv_heads: int, head_dim: int, *, max_batch: int, max_rows: int = 1,
                 dtype: torch.dtype = torch.bfloat16, device="cuda", page_size: int | None = None,
                 split_kv: bool | None = None, max_splits: int = 128, num_sms: int | None = None,
                 policy: SplitPolicy = DEFAULT_POLICY, coverage: Coverage = VALIDATED, scale: float | None = None):
        for name, value in (("num_q_heads", num_q_heads), ("num_kv_heads", num_kv_heads), ("head_dim", head_dim),
                            ("max_batch", max_batch), ("max_rows", max_rows), ("max_splits", max_splits)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if num_q_heads % num_kv_heads:
            raise ValueError(f"num_q_heads must be a multiple of num_kv_heads, got {num_q_heads} and {num_kv_heads}")
        if split_kv is not None and not isinstance(split_kv, bool):
            raise ValueError(f"split_kv must be True, False or None, got {split_kv!r}")
        self.num_q_heads, self.num_kv_heads, self.head_dim = num_q_heads, num_kv_heads, head_dim
        self.max_batch, self.max_rows, self.dtype = max_batch, max_rows, dtype
        self.page_size, self.max_splits, self.policy, self.coverage = page_size, max_splits, policy, coverage
        self.device = torch.device(device)
        self.scale = scale
        self.enabled = switch_from_env() if split_kv is None else split_kv
        if num_sms is None:
            num_sms = torch.cuda.get_device_properties(self.device).multi_processor_count \
                if self.device.type == "cuda" else DEFAULT_NUM_SMS
        self.num_sms = num_sms
        self._static_reason = self._admission()
        self._routes: dict = {}
        self.last_route: Route | None = None
        self.workspace = None
        if self.enabled and self._static_reason is None:
            self.workspace = LayerWorkspace(max_batch, max_rows, num_q_heads, head_dim, max_splits, self.device)

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads

    def _admission(self) -> str | None:
        """Why the layer's fixed configuration cannot take the split route, or None."""
        cov = self.coverage
        if self.dtype not in cov.dtypes:
            return f"dtype {self.dtype} is not covered by the validation matrix ({list(cov.dtypes)})"
        if self.head_dim not in cov.head_dims:
            return f"head_dim {self.head_dim} is not covered by the validation matrix ({list(cov.head_dims)})"
        if self.group not in cov.group_sizes:
            return f"group size {self.group} is not covered by the validation matrix ({list(cov.group_sizes)})"
        if self.page_size is not None and self.page_size not in cov.page_sizes:
            return f"page size {self.page_size} is not covered by the validation matrix ({list(cov.page_sizes)})"
        if self.max_rows > cov.max_rows:
            return f"max_rows {self.max_rows} exceeds the validated {cov.max_rows}"
        return None

    def num_splits_for(self, batch: int, rows: int, max_visible_tokens: int) -> int:
        """The heuristic's split count for a capture bucket (host integers only)."""
        return layer_num_splits(self.num_q_heads, self.num_kv_heads, self.head_dim, batch, rows, max_visible_tokens,
                                dtype=self.dtype, num_sms=self.num_sms,
                                policy=SplitPolicy(**{**self.policy.__dict__,
                                                      "max_splits": min(self.policy.max_splits, self.max_splits)}))

    def route_for(self, batch: int, rows: int, max_visible_tokens: int, *, dtype: torch.dtype | None = None,
                  paged: bool | None = None, num_q_heads: int | None = None, num_kv_heads: int | None = None,
                  head_dim: int | None = None, page_size: int | None = None,
                  cache_dtype: torch.dtype | None = None) -> Route:
        """Which route a call of this size would take, and why.

        Args:
            batch: requests in the call.
            rows: query rows R per request.
            max_visible_tokens: the longest visible range the call (or bucket) may have.
            dtype: the call's dtype (default: the layer's).
            paged: whether the call passes a block table (default: the layer's page_size is set).
            num_q_heads, num_kv_heads, head_dim: the call's attention shape (default: the layer's).
            page_size: the call's block size, for a paged call (default: the layer's).
            cache_dtype: the call's K/V cache dtype when it differs from q's: int8 or
                float8_e4m3fn (a quantized cache; default: q's dtype).

        A call whose dtype, heads, head dim or page size differ from what the layer was built
        (and admitted) for takes the single pass, with a reason naming expected and actual.
        """
        if not self.enabled:
            return Route("single-pass", 1, f"split-KV switch is off ({SWITCH_ENV} unset or split_kv=False)")
        if self._static_reason is not None:
            return Route("single-pass", 1, self._static_reason)
        if dtype is not None and dtype != self.dtype:
            return Route("single-pass", 1, f"call dtype {dtype} differs from the layer's {self.dtype}")
        if cache_dtype is not None and cache_dtype != (dtype or self.dtype) \
                and cache_dtype not in self.coverage.quantized_caches:
            return Route("single-pass", 1, f"cache dtype {cache_dtype} is not covered by the validation matrix "
                                           f"({list(self.coverage.quantized_caches)})")
        if paged is not None and paged != (self.page_size is not None):
            kind = "paged" if paged else "contiguous"
            return Route("single-pass", 1, f"a {kind} call on a layer built for "
                                           f"{'paged' if self.page_size else 'contiguous'} caches")
        for name, actual, expected in (("num_q_heads", num_q_heads, self.num_q_heads),
                                       ("num_kv_heads", num_kv_heads, self.num_kv_heads),
                                       ("head_dim", head_dim, self.head_dim)):
            if actual is not None and actual != expected:
                return Route("single-pass", 1, f"call {name} {actual} differs from the layer's {expected} "
                                               f"(the split route is admitted for the layer's shape only)")
        if page_size is not None and self.page_size is not None and page_size != self.page_size:
            return Route("single-pass", 1, f"call page size {page_size} differs from the layer's {self.page_size}")
        if batch > self.max_batch:
            return Route("single-pass", 1, f"batch {batch} exceeds the workspace's max_batch {self.max_batch}")
        if rows > self.max_rows:
            return Route("single-pass", 1, f"rows {rows} exceed the workspace's max_rows {self.max_rows}")
        splits = self.num_splits_for(batch, rows, max_visible_tokens)
        if splits == 1:
            return Route("single-pass", 1, f"heuristic chose 1 split: {batch} x {self.num_kv_heads} KV-head "
                                           f"programs already fill {self.num_sms} SMs, or too few tokens")
        return Route("split", splits, f"admitted: heuristic chose {splits} splits for batch {batch}, "
                                      f"{max_visible_tokens} visible tokens, {self.num_sms} SMs")

    def _route_of_call(self, q: torch.Tensor, k_cache: torch.Tensor, paged: bool, max_visible_tokens: int) -> Route:
        """`route_for` with every size read from the call's tensors (their checks stay the entry points')."""
        if q.dim() not in (3, 4) or k_cache.dim() != 4:
            return Route("single-pass", 1, "call tensors of unexpected rank (the entry point names the error)")
        rows = q.shape[1] if q.dim() == 4 else 1
        return self.route_for(q.shape[0], rows, max_visible_tokens, dtype=q.dtype, paged=paged,
                              num_q_heads=q.shape[-2], num_kv_heads=k_cache.shape[1], head_dim=q.shape[-1],
                              page_size=k_cache.shape[2] if paged else None, cache_dtype=k_cache.dtype)

    def __call__(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, visible_tokens: torch.Tensor,
                 *, block_table: torch.Tensor | None = None, max_visible_tokens: int | None = None,
                 out: torch.Tensor | None = None, k_scale: torch.Tensor | None = None,
                 v_scale: torch.Tensor | None = None) -> torch.Tensor:
        """Attention of q over the cache through the route `route_for` names.

        Args:
            q: [B, Hq, D] or [B, R, Hq, D].
            k_cache, v_cache: [B, Hkv, S_max, D], or [num_blocks, Hkv, page_size, D] with block_table.
            visible_tokens: int32 [B] on the device (never read on the host).
            block_table: int32 [B, max_blocks] for a paged cache.
            max_visible_tokens: host bound on visible_tokens for this call or capture bucket;
                default: the cache's capacity (S_max, or max_blocks x page_size).
            out: optional output buffer (needed for allocation-free capture).
            k_scale, v_scale: scales of an int8 or float8_e4m3fn cache, as the entry points
                take them (`kernels.attention_decode`); None for a q-dtype cache.
        """
        q_shape, cache_shape = q.shape, k_cache.shape
        paged = block_table is not None
        if max_visible_tokens is None:
            max_visible_tokens = block_table.shape[1] * cache_shape[2] if paged else cache_shape[2]
        key = (q_shape, q.dtype, cache_shape, k_cache.dtype, paged, max_visible_tokens, self.enabled)
        route = self._routes.get(key)
        if route is None:
            route = self._route_of_call(q, k_cache, paged, max_visible_tokens)
            if len(self._routes) >= 4096:
                self._routes.clear()
            self._routes[key] = route
        self.last_route = route
        # a q-dtype cache calls the entry points exactly as before the scales existed
        scales = {} if k_scale is None and v_scale is None else {"k_scale": k_scale, "v_scale": v_scale}
        if route.is_split:
            if paged:
                return attention_decode_paged_splitkv(q, k_cache, v_cache, block_table, visible_tokens,
                                                      num_splits=route.num_splits, workspace=self.workspace,
                                                      scale=self.scale, out=out, **scales)
            return attention_decode_splitkv(q, k_cache, v_cache, visible_tokens, num_splits=route.num_splits,
                                            workspace=self.workspace, scale=self.scale, out=out, **scales)
        if paged:
            return attention_decode_paged(q, k_cache, v_cache, block_table, visible_tokens, scale=self.scale, out=out,
                                          **scales)
        return attention_decode(q, k_cache, v_cache, visible_tokens, scale=self.scale, out=out, **scales)
