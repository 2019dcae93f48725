"""Candidate host path: plans found by the call's scalars, admitted and launched by one C++ call.

Where `guarded_path.GuardedPath` admits a call's tensors with torch's `TensorGuards` and then
launches the project's plan kernel by kernel, here one `PackedCall` per plan
(`packed_launch.cpp`) admits the tensors (dtype, device, sizes, strides, 16-byte
alignment, the current device) and launches the partial and, where the merge is not fused,
the combine kernel, in one call from Python. A call it refuses goes the project's way
(`api._run`), and the plan that call builds joins the candidates of its scalar key.
Nothing here is imported by `kernels/`.
"""

from __future__ import annotations

from kernels.decode_attention import api
from lab.host_path.packed_launch import Refused, packed_call

MAX_CANDIDATES = 8


def launch_tensors(kind, q, k, v, table, visible, out, workspace):
    """The tensors `api._run` hands to a plan's launches for an output given and no scales."""
    paged, finalize = kind
    indexed = table if paged else visible
    if finalize:
        return (q, k, v, indexed, visible, out, out, out, out, visible, visible, visible)
    return (q, k, v, indexed, visible, out, workspace.partial_acc, workspace.partial_max, workspace.partial_sum,
            workspace.split_counters, visible, visible)


class PackedPath:
    """The four entry points; `stats` counts how calls were served, `refusals` why a plan was not packed."""

    def __init__(self):
        self._plans: dict = {}
        self.stats = {"packed": 0, "project": 0}
        self.refusals: list = []

    def splitkv(self, q, k_cache, v_cache, visible_tokens, *, num_splits, workspace, scale=None, out=None):
        return self._call(api._SPLIT, q, k_cache, v_cache, None, visible_tokens, num_splits, workspace, scale, out)

    def paged_splitkv(self, q, k_cache, v_cache, block_table, visible_tokens, *, num_splits, workspace, scale=None,
                      out=None):
        return self._call(api._SPLIT_PAGED, q, k_cache, v_cache, block_table, visible_tokens, num_splits, workspace,
                          scale, out)

    def single(self, q, k_cache, v_cache, visible_tokens, *, scale=None, out=None):
        return self._call(api._SINGLE, q, k_cache, v_cache, None, visible_tokens, 1, None, scale, out)

    def paged(self, q, k_cache, v_cache, block_table, visible_tokens, *, scale=None, out=None):
        return self._call(api._SINGLE_PAGED, q, k_cache, v_cache, block_table, visible_tokens, 1, None, scale, out)

    def _call(self, kind, q, k, v, table, visible, num_splits, workspace, scale, out):
        if out is None or (workspace is None and not kind[1]):  # allocating calls: the project's path
            self.stats["project"] += 1
            return api._run(kind, q, k, v, table, visible, num_splits, workspace, scale, out)
        tensors = launch_tensors(kind, q, k, v, table, visible, out, workspace)
        key = (kind, num_splits, scale, id(workspace))
        for call in self._plans.get(key, ()):
            if call(tensors):
                self.stats["packed"] += 1
                return out
        self.stats["project"] += 1
        result = api._run(kind, q, k, v, table, visible, num_splits, workspace, scale, out)
        plan = api._PLANS.get(api._plan_key(kind, q, k, v, table, visible, out, workspace, num_splits, scale,
                                            None, None))
        if plan is not None and plan.is_direct:
            launches = [plan.partial] + ([plan.combine] if plan.combine is not None else [])
            try:
                call = packed_call(launches, tensors)
            except Refused as exc:
                self.refusals.append(str(exc))
            else:
                entries = self._plans.setdefault(key, [])
                if len(entries) >= MAX_CANDIDATES:
                    entries.pop(0)
                entries.append(call)
        return result

    def calls(self):
        """Every `PackedCall` built so far."""
        return [call for entries in self._plans.values() for call in entries]


class PackedLayer:
    """A `DecodeAttention` whose calls with an output given find their plan's packed call by one lookup.

    The layer looks its route up by the call's shapes and then calls an entry point, which
    looks its plan up again. Here one dict keyed by the call's shapes (q, cache, block
    table or none, the longest visible range) holds the route's kind and the plan's
    `PackedCall`; the call's dtypes, strides and devices are admitted by that call. A call
    it refuses, or one without an output, goes through the layer, and its plan is packed
    for the next call. The layer's switch and dtype are taken as fixed for its lifetime.
    """

    def __init__(self, layer):
        self.layer = layer
        self._calls: dict = {}
        self.refusals: list = []

    def __call__(self, q, k_cache, v_cache, visible_tokens, *, block_table=None, max_visible_tokens=None, out=None):
        key = (q.shape, k_cache.shape, block_table is None, max_visible_tokens)
        entry = self._calls.get(key)
        if entry is not None and out is not None:
            kind, call, workspace = entry
            if call(launch_tensors(kind, q, k_cache, v_cache, block_table, visible_tokens, out, workspace)):
                return out
        result = self.layer(q, k_cache, v_cache, visible_tokens, block_table=block_table,
                            max_visible_tokens=max_visible_tokens, out=out)
        if out is not None:
            self._pack(key, q, k_cache, v_cache, block_table, visible_tokens, out)
        return result

    def _pack(self, key, q, k_cache, v_cache, block_table, visible_tokens, out):
        route = self.layer.last_route
        paged = block_table is not None
        kind = (api._SPLIT_PAGED if paged else api._SPLIT) if route.is_split else \
            (api._SINGLE_PAGED if paged else api._SINGLE)
        workspace = self.layer.workspace if route.is_split else None
        num_splits = route.num_splits if route.is_split else 1
        plan = api._PLANS.get(api._plan_key(kind, q, k_cache, v_cache, block_table, visible_tokens, out, workspace,
                                            num_splits, self.layer.scale, None, None))
        if plan is None or not plan.is_direct:
            self.refusals.append("no direct plan for the layer's call")
            return
        tensors = launch_tensors(kind, q, k_cache, v_cache, block_table, visible_tokens, out, workspace)
        launches = [plan.partial] + ([plan.combine] if plan.combine is not None else [])
        try:
            self._calls[key] = (kind, packed_call(launches, tensors), workspace)
        except Refused as exc:
            self.refusals.append(str(exc))
