"""What the kernels promise beyond matching the oracle: zeros for nothing visible,
empty splits that contribute nothing, q of rank 3 and 4 alike, `out` written in place,
one workspace for calls of several sizes, reads kept inside the cache."""

import pytest
import torch

import kernels
from kernels import LayerWorkspace
from validation.anchors import bytes_equal
from validation.oracle import decode_attention_fp64
from validation.shapes import Case


def inputs(batch=2, rows=1, hq=4, hkv=2, d=64, s=48, dtype=torch.float16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q_shape = (batch, hq, d) if rows == 1 else (batch, rows, hq, d)
    q = torch.randn(q_shape, generator=gen).to(dtype)
    k = torch.randn(batch, hkv, s, d, generator=gen).to(dtype)
    v = torch.randn(batch, hkv, s, d, generator=gen).to(dtype)
    return q, k, v


@pytest.mark.parametrize("num_splits", [None, 1, 3], ids=lambda n: "single" if n is None else f"split{n}")
def test_zero_visible_gives_zeros_not_nan(num_splits):
    q, k, v = inputs()
    visible = torch.tensor([0, 0], dtype=torch.int32)
    out = torch.full_like(q, float("nan"))
    if num_splits is None:
        kernels.attention_decode(q, k, v, visible, out=out)
    else:
        kernels.attention_decode_splitkv(q, k, v, visible, num_splits=num_splits, out=out)
    assert torch.equal(out, torch.zeros_like(q))


def test_rows_that_see_nothing_are_zero_and_the_rest_attend_causally():
    q, k, v = inputs(rows=4, s=16)
    visible = torch.tensor([2, 16], dtype=torch.int32)
    out = kernels.attention_decode(q, k, v, visible)
    assert torch.equal(out[0, :2], torch.zeros_like(out[0, :2])), "rows 0 and 1 of a request with 2 visible tokens see none"
    expected = decode_attention_fp64(q, k, v, visible)
    assert (out.double() - expected).abs().max() < 1e-2


def test_more_splits_than_tiles_leaves_empty_splits_harmless():
    q, k, v = inputs(hq=2, hkv=1, s=20)
    visible = torch.tensor([3, 20], dtype=torch.int32)
    single = kernels.attention_decode(q, k, v, visible)
    split = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=64)
    assert bytes_equal(split, single), "all tokens fall in split 0; the 63 empty splits must not change a bit"


def test_rank_three_q_equals_rank_four_with_one_row():
    q, k, v = inputs()
    visible = torch.tensor([7, 40], dtype=torch.int32)
    three = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=2)
    four = kernels.attention_decode_splitkv(q.unsqueeze(1), k, v, visible, num_splits=2)
    assert bytes_equal(four.squeeze(1), three)


def test_out_is_written_in_place_and_returned():
    q, k, v = inputs()
    visible = torch.tensor([5, 9], dtype=torch.int32)
    out = torch.empty_like(q)
    assert kernels.attention_decode(q, k, v, visible, out=out) is out


def test_one_workspace_serves_calls_of_several_sizes():
    workspace = LayerWorkspace(max_batch=3, max_rows=2, num_q_heads=8, head_dim=64, max_splits=4, device="cpu")
    for batch, rows, splits in [(1, 1, 4), (3, 2, 2), (2, 1, 3)]:
        q, k, v = inputs(batch=batch, rows=rows, hq=8, seed=batch)
        visible = torch.arange(batch, dtype=torch.int32) * 11 + 5
        with_ws = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=splits, workspace=workspace)
        fresh = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=splits)
        assert bytes_equal(with_ws, fresh)


def test_custom_scale_is_applied():
    q, k, v = inputs()
    visible = torch.tensor([30, 48], dtype=torch.int32)
    out = kernels.attention_decode_paged(q, _pages(k), _pages(v), _table(2, 3), visible, scale=0.3)
    expected = decode_attention_fp64(q, k, v, visible, scale=0.3)
    assert (out.double() - expected).abs().max() < 1e-2


def test_visible_beyond_the_cache_reads_nothing_outside_it():
    q, k, v = inputs(s=32)
    visible = torch.tensor([32, 5000], dtype=torch.int32)
    out = kernels.attention_decode(q, k, v, visible)
    assert bytes_equal(out[1], kernels.attention_decode(q, k, v, torch.tensor([32, 32], dtype=torch.int32))[1])


def _pages(cache, page_size=16):
    batch, hkv, s, d = cache.shape
    return cache.reshape(batch, hkv, s // page_size, page_size, d).permute(0, 2, 1, 3, 4).reshape(-1, hkv, page_size, d).contiguous()


def _table(batch, pages_per_request):
    return torch.arange(batch * pages_per_request, dtype=torch.int32).reshape(batch, pages_per_request)


@pytest.mark.parametrize("d, num_splits", [(128, 70), (256, 70)], ids=["d128-two-tiles", "d256-three-tiles"])
def test_a_combine_over_several_tiles_of_splits_matches_the_oracle(d, num_splits, launch_config):
    # the combine kernel loads splits 1.. in tiles (64 rows at D <= 128, 32 above): 69 rows
    # need two tiles at D 128 and three at D 256, and the running maximum moves between them.
    # These launches would merge in place; the combine kernel is what this test reads.
    launch_config(fused_combine=False)
    q, k, v = inputs(batch=1, hq=2, hkv=1, d=d, s=64 * num_splits)
    q[..., 0, :] *= 4  # sharper softmax: the maximum is not in split 0 for every row
    visible = torch.tensor([64 * num_splits - 5], dtype=torch.int32)
    out = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=num_splits)
    expected = decode_attention_fp64(q, k, v, visible)
    assert (out.double() - expected).abs().max() < 4e-3


LOOK_AHEADS = {
    "page-ids-in-loop": {"prefetch_pages": False},
    "one-id-per-token-one-tile-ahead": {"prefetch_pages": True, "scalar_pages": False},
    "one-id-per-page-one-tile-ahead": {"prefetch_pages": True, "scalar_pages": True},
}


@pytest.mark.parametrize("page_size", [8, 16, 32, 128], ids=lambda p: f"page{p}")
@pytest.mark.parametrize("look_ahead", list(LOOK_AHEADS))
def test_paged_equals_contiguous_with_every_page_id_look_ahead(look_ahead, page_size, launch_config):
    from validation.fixtures import build_fixture

    # splits of two tiles, one tile, one partial tile and none: the look-ahead runs past
    # every split's end. With 64-token tiles, pages of 8 are eight per tile (past the
    # four scalar ids: one id per token), 16 and 32 are four and two, 128 holds two tiles.
    fx = build_fixture(Case(3, 1, 4, 2, 64, (300, 0, 77), page_size=page_size, seed=5), "bf16")
    contiguous = kernels.attention_decode_splitkv(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens, num_splits=3)
    launch_config(**LOOK_AHEADS[look_ahead])
    paged = kernels.attention_decode_paged_splitkv(fx.q, fx.k_pages, fx.v_pages, fx.block_table, fx.visible_tokens,
                                                   num_splits=3)
    assert bytes_equal(paged, contiguous)


# Requests whose last tile ends exactly at the visible count, with several rows (rows 0 and 1
# may not see the last tokens of a tile that ends inside the range), rows that see nothing, a
# group padded from 6 to 16 rows, and 72 rows in two row blocks; tokens past each request's
# count are NaN, so a tile wrongly left unmasked shows.
WHOLE_TILE_CASES = {
    "three-rows-tile-aligned": Case(3, 3, 8, 2, 64, (128, 2, 77), seed=7),
    "group-of-six-padded": Case(2, 1, 6, 2, 32, (192, 65), seed=8),
    "two-row-blocks": Case(2, 9, 8, 1, 32, (130, 64), seed=9),
}


@pytest.mark.parametrize("paged", [False, True], ids=["contiguous", "paged"])
@pytest.mark.parametrize("num_splits", [None, 1, 3], ids=lambda n: "single" if n is None else f"split{n}")
@pytest.mark.parametrize("case", list(WHOLE_TILE_CASES))
def test_whole_tiles_skip_the_score_mask_without_changing_a_bit(case, num_splits, paged, launch_config):
    from kernels.decode_attention import api
    from validation.fixtures import build_fixture

    fx = build_fixture(WHOLE_TILE_CASES[case], "bf16")

    def run():
        if paged:
            args = (fx.q, fx.k_pages, fx.v_pages, fx.block_table, fx.visible_tokens)
            if num_splits is None:
                return kernels.attention_decode_paged(*args)
            return kernels.attention_decode_paged_splitkv(*args, num_splits=num_splits)
        args = (fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens)
        if num_splits is None:
            return kernels.attention_decode(*args)
        return kernels.attention_decode_splitkv(*args, num_splits=num_splits)

    assert api.partial_launch_config(64, 8, torch.bfloat16).inner_unmasked, "whole tiles skip the mask by default"
    skipping = run()
    launch_config(inner_unmasked=False)
    masking = run()
    assert bytes_equal(skipping, masking)
    assert not torch.isnan(skipping).any()
