"""The benchmark's tuning variant computes the same function as the oracle (Triton
interpreter on CPU): contiguous and paged, fused and two-kernel combine, several
query-row blocks, more splits than one merge chunk, and empty requests."""

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from validation.bench.variants.splitkv_tuned import LaunchConfig, splitkv_tuned  # noqa: E402
from validation.oracle import decode_attention_fp64  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def paged_copy(cache, page):
    b, h, s, d = cache.shape
    blocks = cache.view(b, h, s // page, page, d).permute(0, 2, 1, 3, 4).reshape(-1, h, page, d)
    perm = torch.randperm(blocks.shape[0], generator=torch.Generator().manual_seed(1))
    paged = torch.empty_like(blocks)
    paged[perm] = blocks
    return paged, perm.to(torch.int32).view(b, s // page)


@pytest.mark.parametrize("paged", [False, True], ids=["contiguous", "paged"])
@pytest.mark.parametrize("label, splits", [("n16-w4-s2-m16-fused", 40), ("n32-w4-s2-m16-twokernel-pf", 3),
                                           ("n32-w4-s2-m64-twokernel", 1)])
def test_variant_matches_the_oracle(label, splits, paged):
    gen = torch.Generator().manual_seed(splits)
    batch, rows, hq, hkv, dim, cap = 2, 3, 12, 2, 64, 704
    q = torch.randn(batch, rows, hq, dim, generator=gen).to(torch.bfloat16)
    k = torch.randn(batch, hkv, cap, dim, generator=gen).to(torch.bfloat16)
    v = torch.randn(batch, hkv, cap, dim, generator=gen).to(torch.bfloat16)
    visible = torch.tensor([cap - 9, 0], dtype=torch.int32)
    ref = decode_attention_fp64(q, k, v, visible)
    q, k, v, visible = (t.to(DEVICE) for t in (q, k, v, visible))
    cfg = LaunchConfig.from_label(label)
    if paged:
        kp, table = paged_copy(k, 16)
        vp, _ = paged_copy(v, 16)
        out = splitkv_tuned(q, kp, vp, visible, num_splits=splits, config=cfg, block_table=table.to(DEVICE))
    else:
        out = splitkv_tuned(q, k, v, visible, num_splits=splits, config=cfg)
    err = ((out.double().cpu() - ref).norm() / ref.norm()).item()
    assert err < 1.6e-2, f"rel L2 {err:.2e} exceeds 1.6e-2"
    assert torch.equal(out[1].cpu(), torch.zeros_like(out[1].cpu())), "a request with no visible token must be zeros"
