"""`DecodeAttention` end to end on the real kernels (Triton interpreter on CPU):
the split route matches the fp64 oracle and the split kernels bit for bit, and the
switch-off route is the single-pass kernel bit for bit."""

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from kernels import attention_decode, attention_decode_splitkv  # noqa: E402
from kernels.decode_layer import DecodeAttention  # noqa: E402
from validation.oracle import decode_attention_fp64  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def inputs(batch, rows, hq, hkv, dim, visible, seed):
    gen = torch.Generator().manual_seed(seed)
    q_shape = (batch, hq, dim) if rows == 1 else (batch, rows, hq, dim)
    q = torch.randn(q_shape, generator=gen).to(torch.bfloat16).to(DEVICE)
    cap = max(visible) + 5
    k = torch.full((batch, hkv, cap, dim), float("nan"), dtype=torch.bfloat16)
    v = torch.full((batch, hkv, cap, dim), float("nan"), dtype=torch.bfloat16)
    for b, n in enumerate(visible):
        k[b, :, :n] = torch.randn(hkv, n, dim, generator=gen).to(torch.bfloat16)
        v[b, :, :n] = torch.randn(hkv, n, dim, generator=gen).to(torch.bfloat16)
    vis = torch.tensor(visible, dtype=torch.int32)
    return q, k.to(DEVICE), v.to(DEVICE), vis.to(DEVICE)


def rel_l2(out, ref):
    return ((out.double().cpu() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize(
    "batch, rows, hq, hkv, dim, visible",
    [
        pytest.param(1, 1, 14, 2, 64, (600,), id="B1-Hq14-Hkv2-D64-S600"),
        pytest.param(2, 3, 8, 2, 128, (333, 70), id="B2-R3-Hq8-Hkv2-D128-S333_70"),
    ],
)
def test_split_route_matches_the_oracle_and_the_split_kernel(batch, rows, hq, hkv, dim, visible):
    q, k, v, vis = inputs(batch, rows, hq, hkv, dim, visible, seed=batch * 10 + rows)
    layer = DecodeAttention(hq, hkv, dim, max_batch=batch, max_rows=rows, device=DEVICE, split_kv=True)
    route = layer.route_for(batch, rows, k.shape[2])
    assert route.is_split, route.reason
    out = torch.full_like(q, float("nan"))
    layer(q, k, v, vis, out=out)
    ref = decode_attention_fp64(q, k, v, vis)
    assert rel_l2(out, ref) < 1.6e-2, f"rel L2 {rel_l2(out, ref):.2e} exceeds 1.6e-2"
    direct = attention_decode_splitkv(q, k, v, vis, num_splits=route.num_splits)
    assert torch.equal(out, direct), "the layer's split route differs from attention_decode_splitkv"


def test_switch_off_is_todays_single_pass_bit_for_bit():
    q, k, v, vis = inputs(2, 1, 8, 2, 64, (300, 1), seed=3)
    layer = DecodeAttention(8, 2, 64, max_batch=2, device=DEVICE, split_kv=False)
    assert torch.equal(layer(q, k, v, vis), attention_decode(q, k, v, vis))


def test_paged_split_route_equals_the_contiguous_one():
    q, k, v, vis = inputs(1, 1, 8, 2, 64, (500,), seed=4)
    page = 16
    pages = -(-k.shape[2] // page)
    pad = pages * page - k.shape[2]
    kp = torch.nn.functional.pad(k, (0, 0, 0, pad)).view(1, 2, pages, page, 64).permute(0, 2, 1, 3, 4)[0]
    vp = torch.nn.functional.pad(v, (0, 0, 0, pad)).view(1, 2, pages, page, 64).permute(0, 2, 1, 3, 4)[0]
    perm = torch.randperm(pages, generator=torch.Generator().manual_seed(0))
    k_paged, v_paged = torch.empty_like(kp), torch.empty_like(vp)
    k_paged[perm], v_paged[perm] = kp, vp
    table = perm.to(torch.int32).view(1, pages).to(DEVICE)
    paged = DecodeAttention(8, 2, 64, max_batch=1, device=DEVICE, page_size=page, split_kv=True)
    contiguous = DecodeAttention(8, 2, 64, max_batch=1, device=DEVICE, split_kv=True)
    limit = pages * page
    out_p = paged(q, k_paged.contiguous(), v_paged.contiguous(), vis, block_table=table, max_visible_tokens=limit)
    out_c = contiguous(q, k, v, vis, max_visible_tokens=limit)
    assert paged.route_for(1, 1, limit).is_split
    assert torch.equal(out_p, out_c)
