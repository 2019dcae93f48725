"""Out-of-range page ids in a block table: never read, on every paged entry point.

The kernel masks the tokens of a page id outside 0..num_blocks-1 (they count as not
visible) and clamps the id, so no address outside the cache is formed; the output is the
attention over the request's valid pages, finite. `validate_block_table=True` checks the
table on the host instead and names the first bad entry."""

import pytest
import torch

import kernels
from validation.oracle import decode_attention_fp64

B, HQ, HKV, D, PAGE, PAGES = 2, 4, 2, 64, 8, 4


def paged_inputs(seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, HQ, D, generator=gen).half()
    k = torch.randn(B * PAGES, HKV, PAGE, D, generator=gen).half()
    v = torch.randn(B * PAGES, HKV, PAGE, D, generator=gen).half()
    table = torch.arange(B * PAGES, dtype=torch.int32).view(B, PAGES)
    visible = torch.tensor([PAGES * PAGE, PAGES * PAGE - 3], dtype=torch.int32)
    return q, k, v, table, visible


ENTRIES = {
    "single": lambda q, k, v, t, vis, **kw: kernels.attention_decode_paged(q, k, v, t, vis, **kw),
    "split3": lambda q, k, v, t, vis, **kw: kernels.attention_decode_paged_splitkv(q, k, v, t, vis, num_splits=3, **kw),
    "split1": lambda q, k, v, t, vis, **kw: kernels.attention_decode_paged_splitkv(q, k, v, t, vis, num_splits=1, **kw),
}
BAD_IDS = {"past-the-cache": B * PAGES + 1000, "minus-one": -1}


def expected_without_page(q, k, v, table, visible, request, page):
    """The oracle over the request's tokens with one page left out."""
    keep = [p for p in range(PAGES) if p != page]
    ids = table[request, keep].long()
    kk = k[ids].permute(1, 0, 2, 3).reshape(1, HKV, -1, D)
    vv = v[ids].permute(1, 0, 2, 3).reshape(1, HKV, -1, D)
    seen = torch.tensor([visible[request] - PAGE], dtype=torch.int32)
    return decode_attention_fp64(q[request:request + 1], kk, vv, seen)[0]


@pytest.mark.parametrize("bad", sorted(BAD_IDS))
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_an_out_of_range_page_is_masked_not_read(entry, bad):
    q, k, v, table, visible = paged_inputs()
    table[0, 1] = BAD_IDS[bad]
    out = ENTRIES[entry](q, k, v, table, visible)
    assert torch.isfinite(out).all()
    expected = expected_without_page(q, k, v, table, visible, 0, 1)
    assert (out[0].double() - expected).abs().max() < 2e-2, "request 0 attends to its three valid pages"
    clean = ENTRIES[entry](q, k, v, torch.arange(B * PAGES, dtype=torch.int32).view(B, PAGES), visible)
    assert torch.equal(out[1], clean[1]), "the other request is untouched"


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_request_whose_pages_are_all_invalid_gives_zeros(entry):
    q, k, v, table, visible = paged_inputs()
    table[0] = -1
    out = ENTRIES[entry](q, k, v, table, visible)
    assert torch.equal(out[0], torch.zeros_like(out[0]))


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_validate_block_table_names_the_first_bad_entry(entry):
    q, k, v, table, visible = paged_inputs()
    table[1, 2] = B * PAGES + 1000
    with pytest.raises(ValueError, match=r"block_table\[1, 2\] must be a page id in 0\.\.7 \(k_cache.shape\[0\] = 8\), got 1008"):
        ENTRIES[entry](q, k, v, table, visible, validate_block_table=True)


def test_validate_block_table_ignores_pages_past_the_visible_range():
    q, k, v, table, visible = paged_inputs()
    visible[1] = PAGE  # request 1 reads its first page only
    table[1, 1:] = -1
    out = kernels.attention_decode_paged(q, k, v, table, visible, validate_block_table=True)
    assert torch.isfinite(out).all()
