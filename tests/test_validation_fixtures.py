"""Fixtures are seeded and poison everything a kernel must not read."""

import torch

from validation.fixtures import build_fixture
from validation.shapes import CPU_CASES, Case

CASE = Case(3, 2, 4, 2, 64, (20, 0, 33), page_size=16, seed=4)


def test_same_case_same_bytes():
    assert build_fixture(CASE, "bf16").sha256() == build_fixture(CASE, "bf16").sha256()
    assert build_fixture(CASE, "bf16").sha256() != build_fixture(CASE, "fp16").sha256()


def test_contiguous_slots_past_visible_are_poisoned():
    fx = build_fixture(CASE, "fp16")
    for b, visible in enumerate(CASE.visible):
        assert torch.isfinite(fx.k_cache[b, :, :visible]).all()
        assert torch.isnan(fx.k_cache[b, :, visible:]).all()
        assert torch.isinf(fx.v_cache[b, :, visible:]).all()


def test_paged_cache_holds_the_same_tokens_and_poisons_the_rest():
    fx = build_fixture(CASE, "bf16")
    p = CASE.page_size
    used = set()
    for b, visible in enumerate(CASE.visible):
        needed = -(-visible // p)
        for j in range(fx.block_table.shape[1]):
            page = int(fx.block_table[b, j])
            if j < needed:
                used.add(page)
                n = min(p, visible - j * p)
                assert torch.equal(fx.k_pages[page, :, :n], fx.k_cache[b, :, j * p : j * p + n])
                assert torch.isnan(fx.k_pages[page, :, n:]).all()
            else:
                assert torch.isnan(fx.k_pages[page]).all(), "entries past the last needed page point at poison pages"
    assert sorted(used) != list(range(len(used))), "the block table is shuffled"


def test_the_matrix_covers_what_the_issue_asks_for():
    groups = {c.group for c in CPU_CASES}
    dims = {c.head_dim for c in CPU_CASES}
    assert {1, 2, 4, 6, 7, 8} <= groups
    assert {64, 80, 128, 256} <= dims
    assert {1} < {c.rows for c in CPU_CASES}
    assert any(0 in c.visible for c in CPU_CASES)
    assert any(len(set(c.visible)) > 1 for c in CPU_CASES)
    assert all(any(v % 16 for v in c.visible) for c in CPU_CASES), "every case has a tail"
