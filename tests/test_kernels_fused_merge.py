"""A split launch that merges in place: the last program of each (request, KV head) merges the partials.

Where `launch_config.fused_merge_tile` allows it there is no combine launch. These calls
pin what must hold either way: the fp64 oracle, the combine kernel's results within
rounding, the split counters back at zero after every call, and the same bits call after
call through one workspace.
"""

import pytest
import torch

import kernels
from kernels import LayerWorkspace
from kernels.decode_attention import api
from validation.anchors import bytes_equal
from validation.metrics import rel_l2
from validation.oracle import decode_attention_fp64


def inputs(batch, rows, hq, hkv, d, s, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, rows, hq, d, generator=gen).to(torch.bfloat16)
    k = torch.randn(batch, hkv, s, d, generator=gen).to(torch.bfloat16)
    v = torch.randn(batch, hkv, s, d, generator=gen).to(torch.bfloat16)
    q[:, :, 0] *= 4  # a sharper softmax for one head: its maximum moves between splits
    return q, k, v


class NoCombineLaunch:
    def __getitem__(self, grid):
        raise AssertionError("a launch that merges in place launched the combine kernel")


# (batch, rows, Hq, Hkv, D, splits, visible): one merge round; two rounds of 16 slots
# (eight rows at D 128); three query rows of a group of two, padded to four.
CASES = {
    "one-round": (2, 1, 8, 2, 64, 5, (300, 77)),
    "two-rounds": (1, 1, 8, 1, 128, 20, (1275,)),
    "rows-3-group-2": (2, 3, 4, 2, 80, 4, (130, 2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_in_place_merge_matches_the_oracle_and_the_combine_kernel(case, monkeypatch, launch_config):
    batch, rows, hq, hkv, d, splits, visible = CASES[case]
    q, k, v = inputs(batch, rows, hq, hkv, d, max(visible))
    visible = torch.tensor(visible, dtype=torch.int32)
    launch_config(fused_combine=False)
    combined = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=splits)
    launch_config(fused_combine=True)
    monkeypatch.setattr(api, "decode_attention_combine_kernel", NoCombineLaunch())
    merged = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=splits)
    expected = decode_attention_fp64(q, k, v, visible)
    assert rel_l2(merged, expected) < 2 ** -6  # the bf16 tolerance of the numeric contract
    ulp = 2.0 ** (torch.frexp(combined.double())[1] - 8)  # one bf16 ulp at each combined value
    assert ((merged.double() - combined.double()).abs() <= ulp).all()  # the same fp32 merge, rounded to bf16


def test_counters_return_to_zero_and_every_call_writes_the_same_bits():
    # without the reset the second call's count would never reach the last split and no
    # program would write its output: the NaN poison would stay
    q, k, v = inputs(2, 1, 8, 2, 64, 300)
    visible = torch.tensor([300, 0], dtype=torch.int32)
    ws = LayerWorkspace(2, 1, 8, 64, 8, "cpu")
    first = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=5, workspace=ws)
    assert ws.split_counters.tolist() == [0] * 16
    for _ in range(2):
        out = torch.full_like(q, float("nan"))
        kernels.attention_decode_splitkv(q, k, v, visible, num_splits=5, workspace=ws, out=out)
        assert bytes_equal(out, first)
        assert ws.split_counters.tolist() == [0] * 16
    assert first[1].abs().max() == 0  # the request with nothing visible is zeros


def test_paged_equals_contiguous_when_merged_in_place():
    from validation.fixtures import build_fixture
    from validation.shapes import Case

    fx = build_fixture(Case(3, 1, 4, 2, 64, (300, 0, 77), page_size=16, seed=5), "bf16")
    contiguous = kernels.attention_decode_splitkv(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens, num_splits=3)
    paged = kernels.attention_decode_paged_splitkv(fx.q, fx.k_pages, fx.v_pages, fx.block_table, fx.visible_tokens,
                                                   num_splits=3)
    assert bytes_equal(paged, contiguous)
