"""Candidate host path: plans found by the call's scalars, admitted by one C++ tensor guard.

The project's entry points (`kernels/decode_attention/api.py`) build a Python tuple of every
tensor's dtype, shape, strides, device and alignment on every call and look the plan up by
it. Here the plan is looked up by what is not a tensor (route, num_splits, scale, which
optional tensors are present, the workspace object, the current device), and the tensors
are then admitted by one `TensorGuards.check` (torch's C++ guard: dtype, device, sizes,
strides, requires_grad, dispatch keys) plus the 16-byte alignment of their data pointers.
A call the guard refuses goes the project's way (`api._run`), which validates it, builds its
plan, and the plan joins the candidates of its scalar key.

The plans are the project's own (`api._Plan`: the same launches, the same recorded direct
launch), so an admitted call launches exactly what the project's path would; the probe
checks the outputs bit for bit. Nothing here is imported by `kernels/`.
"""

from __future__ import annotations

import torch

from kernels.decode_attention import api

try:  # torch-internal: torch.compile's input guard; missing or changed, the project's path serves
    from torch._C._dynamo.guards import TensorGuards
except ImportError:  # pragma: no cover
    TensorGuards = None

MAX_CANDIDATES = 8


class _Admitted:
    """One plan and the guard that admits a call's tensors to it."""

    __slots__ = ("guard", "plan", "workspace")

    def __init__(self, guard, plan, workspace):
        self.guard, self.plan, self.workspace = guard, plan, workspace


def _guard(tensors):
    return TensorGuards(*tensors, dynamic_dims_sizes=[list(t.shape) for t in tensors],
                        dynamic_dims_strides=[list(t.stride()) for t in tensors])


class GuardedPath:
    """The four entry points with guard admission; `stats` counts how calls were served."""

    def __init__(self):
        self._plans: dict = {}
        self.stats = {"guarded": 0, "project": 0}

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
        if out is None or TensorGuards is None:  # an allocating call: the project's path
            self.stats["project"] += 1
            return api._run(kind, q, k, v, table, visible, num_splits, workspace, scale, out)
        device = q.device
        key = (kind, num_splits, scale, id(workspace), table is None,
               torch.cuda.current_device() if device.type == "cuda" else None)
        candidates = self._plans.get(key)
        if candidates:
            if table is None:
                ptrs = q.data_ptr() | k.data_ptr() | v.data_ptr() | visible.data_ptr() | out.data_ptr()
            else:
                ptrs = (q.data_ptr() | k.data_ptr() | v.data_ptr() | table.data_ptr() | visible.data_ptr()
                        | out.data_ptr())
            if not ptrs & 15:
                for entry in candidates:
                    admitted = (entry.guard.check(q, k, v, visible, out) if table is None
                                else entry.guard.check(q, k, v, table, visible, out))
                    if admitted:
                        self.stats["guarded"] += 1
                        return _launch(entry.plan, q, k, v, table, visible, out, workspace)
        self.stats["project"] += 1
        result = api._run(kind, q, k, v, table, visible, num_splits, workspace, scale, out)
        plan = api._PLANS.get(api._plan_key(kind, q, k, v, table, visible, out, workspace, num_splits, scale,
                                            None, None))
        if plan is not None:
            tensors = (q, k, v, visible, out) if table is None else (q, k, v, table, visible, out)
            entries = self._plans.setdefault(key, [])
            if len(entries) >= MAX_CANDIDATES:
                entries.pop(0)
            entries.append(_Admitted(_guard(tensors), plan, workspace))
        return result


def _launch(plan, q, k, v, table, visible, out, workspace):
    """What `api._run` launches for an admitted call with `out` given and no scales."""
    if plan.finalize:
        tensors = (q, k, v, table if plan.paged else visible, visible, out, out, out, out, visible, visible, visible)
    else:
        tensors = (q, k, v, table if plan.paged else visible, visible, out, workspace.partial_acc,
                   workspace.partial_max, workspace.partial_sum, workspace.split_counters, visible, visible)
    plan.partial(tensors)
    if plan.combine is not None:
        plan.combine(tensors)
    return out
