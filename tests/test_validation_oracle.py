"""The fp64 oracle against a direct softmax formula, paged against contiguous, and the
plain-torch reference against the oracle."""

import math

import pytest
import torch

from kernels.decode_attention.reference import decode_attention_reference
from validation.fixtures import build_fixture
from validation.oracle import decode_attention_fp64
from validation.shapes import Case


def test_oracle_matches_the_softmax_formula_token_by_token():
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(1, 2, 4, 8, generator=gen, dtype=torch.float64)
    k = torch.randn(1, 2, 6, 8, generator=gen, dtype=torch.float64)
    v = torch.randn(1, 2, 6, 8, generator=gen, dtype=torch.float64)
    out = decode_attention_fp64(q, k, v, torch.tensor([5], dtype=torch.int32))
    for r, seen in enumerate((4, 5)):
        for h in range(4):
            kv = h // 2
            w = [math.exp(float(q[0, r, h] @ k[0, kv, t]) / math.sqrt(8)) for t in range(seen)]
            expected = sum(w[t] * v[0, kv, t] for t in range(seen)) / sum(w)
            assert torch.allclose(out[0, r, h], expected, rtol=1e-12, atol=1e-12)


def test_oracle_reads_paged_and_contiguous_caches_alike():
    fx = build_fixture(Case(3, 2, 8, 2, 64, (40, 0, 17), seed=5), "fp16")
    contig = decode_attention_fp64(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens)
    paged = decode_attention_fp64(fx.q, fx.k_pages, fx.v_pages, fx.visible_tokens, block_table=fx.block_table)
    assert torch.equal(contig, paged)
    assert torch.isfinite(contig).all(), "the oracle must not touch poisoned slots"
    assert torch.equal(contig[1], torch.zeros_like(contig[1]))


@pytest.mark.parametrize("paged", [False, True], ids=["contig", "paged"])
def test_reference_in_float64_agrees_with_the_oracle(paged):
    fx = build_fixture(Case(2, 3, 6, 3, 80, (50, 2), seed=6), "bf16")
    k, v, table = (fx.k_pages, fx.v_pages, fx.block_table) if paged else (fx.k_cache, fx.v_cache, None)
    ref = decode_attention_reference(fx.q, k, v, fx.visible_tokens, block_table=table, compute_dtype=torch.float64)
    oracle = decode_attention_fp64(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens)
    assert torch.allclose(ref, oracle, rtol=1e-10, atol=1e-12)
