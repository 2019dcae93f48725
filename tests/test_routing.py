"""Routing of `DecodeAttention`: the opt-in switch, fail-closed admission, the
heuristic's split count, workspace sizing, and a launch path without host syncs.

The kernels are replaced by recorders here, so these tests check the decisions
alone; tests/test_decode_layer.py runs the real kernels."""

import pytest
import torch

import kernels.decode_layer as layer_mod
from kernels.decode_layer import SWITCH_ENV, VALIDATED, DecodeAttention, Route, switch_from_env


def make(split_kv=True, **kw):
    args = dict(max_batch=4, max_rows=2, device="cpu", split_kv=split_kv, num_sms=132)
    args.update(kw)
    return DecodeAttention(kw.pop("num_q_heads", 32), kw.pop("num_kv_heads", 8), kw.pop("head_dim", 128),
                           **{k: v for k, v in args.items() if k not in ("num_q_heads", "num_kv_heads", "head_dim")})


# --- the switch ---------------------------------------------------------------------------

def test_switch_is_off_by_default(monkeypatch):
    monkeypatch.delenv(SWITCH_ENV, raising=False)
    layer = make(split_kv=None)
    route = layer.route_for(1, 1, 32768)
    assert route == Route("single-pass", 1, route.reason) and "switch is off" in route.reason
    assert layer.workspace is None


def test_environment_variable_turns_the_switch_on(monkeypatch):
    monkeypatch.setenv(SWITCH_ENV, "1")
    assert make(split_kv=None).route_for(1, 1, 32768).is_split


def test_explicit_argument_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(SWITCH_ENV, "1")
    assert not make(split_kv=False).route_for(1, 1, 32768).is_split
    monkeypatch.setenv(SWITCH_ENV, "0")
    assert make(split_kv=True).route_for(1, 1, 32768).is_split


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_an_unclear_switch_value_is_an_error(value):
    with pytest.raises(ValueError, match=f"{SWITCH_ENV} must be 0 or 1, got '{value}'"):
        switch_from_env({SWITCH_ENV: value})


def test_switch_must_be_a_bool_or_none():
    with pytest.raises(ValueError, match="split_kv must be True, False or None, got 1"):
        make(split_kv=1)


# --- fail-closed admission ----------------------------------------------------------------

@pytest.mark.parametrize(
    "kw, reason",
    [
        pytest.param(dict(dtype=torch.float32), "dtype torch.float32 is not covered", id="fp32"),
        pytest.param(dict(head_dim=136), "head_dim 136 is not covered", id="D136"),
        pytest.param(dict(head_dim=40), "head_dim 40 is not covered", id="D40"),
        pytest.param(dict(num_q_heads=36, num_kv_heads=4), "group size 9 is not covered", id="G9"),
        pytest.param(dict(num_q_heads=40, num_kv_heads=4), "group size 10 is not covered", id="G10"),
        pytest.param(dict(page_size=64), "page size 64 is not covered", id="page64"),
        pytest.param(dict(head_dim=48), "head_dim 48 is not covered", id="D48"),
        pytest.param(dict(max_rows=17), "max_rows 17 exceeds the validated 16", id="R17"),
    ],
)
def test_configurations_outside_the_validation_matrix_stay_on_single_pass(kw, reason):
    layer = make(**kw)
    route = layer.route_for(1, 1, 32768)
    assert not route.is_split and reason in route.reason
    assert layer.workspace is None


@pytest.mark.parametrize(
    "call, reason",
    [
        pytest.param(dict(batch=5, rows=1), "batch 5 exceeds the workspace's max_batch 4", id="batch-too-large"),
        pytest.param(dict(batch=1, rows=3), "rows 3 exceed the workspace's max_rows 2", id="rows-too-many"),
        pytest.param(dict(batch=1, rows=1, dtype=torch.float16), "call dtype torch.float16 differs", id="dtype"),
        pytest.param(dict(batch=1, rows=1, paged=True), "a paged call on a layer built for contiguous", id="paged"),
    ],
)
def test_calls_the_workspace_or_layer_does_not_fit_stay_on_single_pass(call, reason):
    batch, rows = call.pop("batch"), call.pop("rows")
    route = make().route_for(batch, rows, 32768, **call)
    assert not route.is_split and reason in route.reason


def test_a_grid_that_fills_the_gpu_stays_on_single_pass():
    route = make(max_batch=64).route_for(64, 1, 2048)
    assert not route.is_split and "heuristic chose 1 split" in route.reason


def test_short_contexts_stay_on_single_pass():
    route = make().route_for(1, 1, 100)
    assert not route.is_split


@pytest.mark.parametrize(
    "heads, dim, batch, tokens, expected",
    [
        pytest.param((32, 8), 128, 1, 32768, 32, id="llama8b-B1-S32768"),
        pytest.param((14, 2), 64, 1, 2048, 32, id="qwen-B1-S2048"),
        pytest.param((8, 1), 128, 4, 32768, 64, id="llama70b-tp8-B4-S32768"),
    ],
)
def test_admitted_calls_take_the_heuristics_split_count(heads, dim, batch, tokens, expected):
    layer = make(num_q_heads=heads[0], num_kv_heads=heads[1], head_dim=dim)
    assert layer.route_for(batch, 1, tokens) == Route("split", expected, layer.route_for(batch, 1, tokens).reason)


@pytest.mark.parametrize(
    "heads, dim, batch, rows, tokens",
    [
        pytest.param((14, 2), 64, 1, 1, 2048, id="qwen-B1-S2048"),
        pytest.param((32, 8), 128, 1, 1, 4096, id="llama8b-B1-S4096"),
        pytest.param((32, 8), 128, 8, 1, 8192, id="llama8b-B8-S8192"),
        pytest.param((24, 4), 256, 1, 1, 20688, id="Hq24-Hkv4-D256-B1-S20688"),
        pytest.param((24, 4), 256, 1, 16, 20688, id="Hq24-Hkv4-D256-B1-R16-S20688"),
        pytest.param((8, 1), 128, 4, 1, 32768, id="llama70b-tp8-B4-S32768"),
    ],
)
@pytest.mark.parametrize("page_size", [None, 16], ids=["contiguous", "paged16"])
def test_every_configuration_of_the_public_matrix_is_admitted(heads, dim, batch, rows, tokens, page_size):
    layer = make(num_q_heads=heads[0], num_kv_heads=heads[1], head_dim=dim, max_batch=8, max_rows=16,
                 page_size=page_size)
    route = layer.route_for(batch, rows, tokens, paged=page_size is not None)
    assert route.is_split and "admitted" in route.reason


def test_coverage_is_what_the_validation_matrix_covers():
    from validation.shapes import CPU_CASES, GPU_CASES

    cases = CPU_CASES + GPU_CASES
    assert set(VALIDATED.head_dims) == {c.head_dim for c in cases}
    assert set(VALIDATED.group_sizes) == {c.group for c in cases}
    assert set(VALIDATED.page_sizes) == {c.page_size for c in cases}
    assert VALIDATED.max_rows == max(c.rows for c in cases)


# --- workspace ----------------------------------------------------------------------------

def test_workspace_is_sized_for_the_layers_maxima():
    layer = make(max_batch=3, max_rows=2, max_splits=64)
    ws = layer.workspace
    assert (ws.max_batch, ws.max_rows, ws.num_q_heads, ws.head_dim, ws.max_splits) == (3, 2, 32, 128, 64)
    assert ws.partial_acc.numel() == 3 * 2 * 32 * 64 * 128
    assert ws.partial_max.numel() == ws.partial_sum.numel() == 3 * 2 * 32 * 64


def test_split_count_never_exceeds_the_workspace():
    layer = make(max_splits=8)
    assert layer.route_for(1, 1, 1 << 20).num_splits == 8


# --- dispatch without host syncs ----------------------------------------------------------

class Recorder:
    def __init__(self, name, calls):
        self.name, self.calls = name, calls

    def __call__(self, *args, **kwargs):
        self.calls.append((self.name, args, kwargs))
        return kwargs.get("out")


@pytest.fixture
def recorded(monkeypatch):
    calls = []
    for name in ("attention_decode", "attention_decode_paged", "attention_decode_splitkv",
                 "attention_decode_paged_splitkv"):
        monkeypatch.setattr(layer_mod, name, Recorder(name, calls))
    return calls


def tensors(batch=1, heads=(32, 8), dim=128, capacity=4096, paged=False):
    q = torch.randn(batch, heads[0], dim, dtype=torch.bfloat16)
    if paged:
        cache = torch.zeros(batch * capacity // 16, heads[1], 16, dim, dtype=torch.bfloat16)
        table = torch.arange(batch * capacity // 16, dtype=torch.int32).view(batch, -1)
    else:
        cache, table = torch.zeros(batch, heads[1], capacity, dim, dtype=torch.bfloat16), None
    return q, cache, table, torch.full((batch,), capacity, dtype=torch.int32), torch.empty_like(q)


def test_split_route_passes_workspace_splits_and_out(recorded):
    layer = make()
    q, cache, _, visible, out = tensors()
    assert layer(q, cache, cache, visible, out=out) is out
    (name, _, kwargs), = recorded
    assert name == "attention_decode_splitkv"
    assert kwargs["workspace"] is layer.workspace and kwargs["out"] is out
    assert kwargs["num_splits"] == layer.route_for(1, 1, 4096).num_splits > 1


def test_paged_calls_take_the_paged_kernels(recorded):
    q, cache, table, visible, out = tensors(paged=True)
    make(page_size=16)(q, cache, cache, visible, block_table=table, out=out)
    make(page_size=16, split_kv=False)(q, cache, cache, visible, block_table=table, out=out)
    assert [c[0] for c in recorded] == ["attention_decode_paged_splitkv", "attention_decode_paged"]


def test_switch_off_calls_exactly_the_single_pass_kernel(recorded):
    q, cache, _, visible, out = tensors()
    make(split_kv=False)(q, cache, cache, visible, out=out)
    (name, args, kwargs), = recorded
    assert name == "attention_decode" and kwargs == {"scale": None, "out": out}
    assert args[0] is q and args[3] is visible


def test_max_visible_tokens_is_a_host_bound_the_caller_may_lower(recorded):
    layer = make()
    q, cache, _, visible, out = tensors(capacity=32768)
    layer(q, cache, cache, visible, max_visible_tokens=100, out=out)
    assert recorded[-1][0] == "attention_decode"


def test_the_launch_path_never_reads_the_device_nor_allocates(recorded, monkeypatch):
    layer = make()
    q, cache, _, visible, out = tensors()

    def forbidden(*_args, **_kwargs):
        raise AssertionError("host sync or allocation in the launch path")

    for name in ("item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, forbidden)
    for name in ("empty", "empty_like", "zeros", "zeros_like", "full", "tensor"):
        monkeypatch.setattr(torch, name, forbidden)
    assert layer(q, cache, cache, visible, out=out) is out
    assert recorded[-1][0] == "attention_decode_splitkv"


# --- admission per call -------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, reason",
    [
        pytest.param(dict(dim=64), "call head_dim 64 differs from the layer's 128", id="head-dim"),
        pytest.param(dict(heads=(40, 8)), "call num_q_heads 40 differs from the layer's 32", id="group-5"),
        pytest.param(dict(heads=(32, 4)), "call num_kv_heads 4 differs from the layer's 8", id="group-8"),
    ],
)
def test_a_call_outside_what_the_layer_was_built_for_takes_the_single_pass(recorded, call, reason):
    layer = make()
    q, cache, _, visible, out = tensors(**call)
    layer(q, cache, cache, visible, out=out)
    assert recorded[-1][0] == "attention_decode"
    assert not layer.last_route.is_split and reason in layer.last_route.reason


def test_a_paged_call_with_another_page_size_takes_the_single_pass(recorded):
    layer = make(page_size=32)
    q, cache, table, visible, out = tensors(paged=True)  # pages of 16 tokens
    layer(q, cache, cache, visible, block_table=table, out=out)
    assert recorded[-1][0] == "attention_decode_paged"
    assert "call page size 16 differs from the layer's 32" in layer.last_route.reason


def test_the_layers_own_shape_still_takes_the_split_route_after_a_mismatched_call(recorded):
    layer = make()
    q, cache, _, visible, out = tensors(dim=64)
    layer(q, cache, cache, visible, out=out)
    q, cache, _, visible, out = tensors()
    layer(q, cache, cache, visible, out=out)
    assert [c[0] for c in recorded] == ["attention_decode", "attention_decode_splitkv"]


def test_group_5_at_batch_16_and_4k_takes_the_split_route():
    layer = make(num_q_heads=40, num_kv_heads=8, max_batch=16)
    assert layer.route_for(16, 1, 4096).is_split


def test_the_route_is_decided_once_per_call_signature(recorded, monkeypatch):
    layer = make()
    q, cache, _, visible, out = tensors()
    decided = []
    original = layer.route_for
    monkeypatch.setattr(layer, "route_for", lambda *a, **kw: decided.append(1) or original(*a, **kw))
    for _ in range(3):
        layer(q, cache, cache, visible, out=out)
    assert len(decided) == 1 and len(recorded) == 3
