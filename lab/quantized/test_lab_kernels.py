"""The lab variants against the fp64 oracle over the dequantized cache, on the CPU interpreter.

    TRITON_INTERPRET=1 python -m pytest lab/quantized/test_lab_kernels.py -q

q is fp16 where the variant's dots run in q's dtype (the interpreter's bf16 tl.dot
multiplies raw bits, ../shared/reference/known-issues.md); the fp16-dot variants also run
with a bf16 q, since their dots are fp16 whatever q is. Unused cache slots, pages, the
transposed layout's padding and int8 scales are poisoned (NaN / 127), one request is
empty and the sizes are odd. The CVT = 1 (inline PTX) path cannot run here: the
interpreter runs its bit-operation twin (CVT = 2); only the GPU run checks the PTX.
"""

from __future__ import annotations

import os

import pytest
import torch

if os.environ.get("TRITON_INTERPRET") != "1" and not torch.cuda.is_available():
    pytest.skip("needs TRITON_INTERPRET=1 (CPU) or a CUDA device", allow_module_level=True)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from lab.quantized.kernel_lab import _int8_to_fp16  # noqa: E402
from lab.quantized.lab_quantize import LabCache, quantize_cache  # noqa: E402
from lab.quantized.lab_route import VARIANTS, LabSplitDecode  # noqa: E402
from validation.oracle import decode_attention_fp64  # noqa: E402

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
PAGE = 16
REL_L2 = {torch.float16: 2 ** -9, torch.bfloat16: 2 ** -6}  # the project's fp16 / bf16 contract
FP8_DOT_REL_L2 = 0.125  # the opt-in FP8 dots' own bound (lab proposal; random data is their worst case)
FP8_DOT_MIN_COS = 0.99


def rel_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double().cpu() - ref).norm() / ref.norm()).item()


def assert_close_to_oracle(out, ref, bound, what):
    assert torch.isfinite(out).all(), f"{what}: non-finite output"
    err = rel_l2(out, ref)
    assert err <= bound, f"{what}: rel_l2 {err:.3e} > {bound:.3e}"


def poison(cache: LabCache, visible: torch.Tensor, capacity: int) -> LabCache:
    """Poison every token slot past each request's visible count (contiguous cache), padding included."""
    bad = 127 if cache.kv_format == "int8" else None
    for b, n in enumerate(visible.tolist()):
        for t in (cache.k, cache.v):
            view = t[b].view(torch.uint8) if bad is None else t[b]
            fill = 0x7F if bad is None else bad
            if t is cache.v and cache.v_trans:
                view[:, :, n:] = fill
            else:
                view[:, n:] = fill
        if cache.kv_format == "int8":
            cache.k_scale[b, :, n:] = float("nan")
            cache.v_scale[b, :, n:] = float("nan")
    return cache


def to_pages(x: torch.Tensor, perm: torch.Tensor, num_pages: int) -> torch.Tensor:
    """[B, Hkv, S, ...] (S a multiple of PAGE) -> pages [num_pages, Hkv, PAGE, ...] placed by perm."""
    b, h, s = x.shape[:3]
    rest = x.shape[3:]
    pages = x.reshape(b, h, s // PAGE, PAGE, *rest).transpose(1, 2).reshape(b * s // PAGE, h, PAGE, *rest)
    out = torch.full((num_pages, h, PAGE, *rest), 0, dtype=x.dtype)
    out.view(torch.uint8)[:] = 0x7F if x.dtype == torch.float8_e4m3fn else (127 if x.dtype == torch.int8 else 0)
    if x.dtype.is_floating_point and x.dtype != torch.float8_e4m3fn:
        out.fill_(float("nan"))
    out[perm] = pages
    return out


CASES = [  # (B, R, Hq, Hkv, D, S_max, visible, num_splits)
    (3, 1, 6, 2, 40, 83, (0, 1, 83), 3),
    (2, 3, 4, 1, 64, 200, (200, 131), 5),
    (1, 1, 8, 8, 128, 300, (257,), 1),
]
CASES_FAST = CASES[:2]  # the interpreter runs the D = 128 case in the measurement smoke only (time)


def case_id(c):
    b, r, hq, hkv, d, s, vis, sp = c
    return f"B{b}-R{r}-Hq{hq}-Hkv{hkv}-D{d}-S{s}-v{'_'.join(map(str, vis))}-sp{sp}"


def _inputs(case, dtype, seed=0):
    b, r, hq, hkv, d, s, vis, _ = case
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn((b, hq, d) if r == 1 else (b, r, hq, d), generator=gen).to(dtype)
    k = torch.randn(b, hkv, s, d, generator=gen) * 2.0
    v = torch.randn(b, hkv, s, d, generator=gen)
    return q, k, v, torch.tensor(vis, dtype=torch.int32)


PAIRS = [(fmt, name) for name, var in VARIANTS.items() for fmt in var.formats]


@pytest.mark.parametrize("case", CASES_FAST, ids=case_id)
@pytest.mark.parametrize("fmt,name", PAIRS, ids=[f"{f}-{n}" for f, n in PAIRS])
def test_contiguous_fp16_q(fmt, name, case):
    q, k, v, vis = _inputs(case, torch.float16)
    var = VARIANTS[name]
    cache = poison(quantize_cache(k, v, fmt, v_trans=var.v_trans), vis, k.shape[2])
    kd, vd = cache.dequantized()
    ref = decode_attention_fp64(q, kd, vd, vis)
    out = LabSplitDecode(var, q.to(DEVICE), _on(cache), vis.to(DEVICE), num_splits=case[-1])()
    bound = FP8_DOT_REL_L2 if var.fp8_dot else REL_L2[torch.float16]
    assert_close_to_oracle(out, ref, bound, f"{fmt}/{name}")
    if vis[0] == 0:
        assert (out[0] == 0).all(), "an empty request must give zeros"


@pytest.mark.parametrize("fmt,name", [p for p in PAIRS if VARIANTS[p[1]].cvt > 0 and not VARIANTS[p[1]].fp8_dot],
                         ids=lambda x: str(x))
def test_fp16_dots_with_bf16_q(fmt, name):
    """fp16 dots for a bf16 q: q is exact in fp16 for 2^-17 <= |q| <= 65504 (randn is), p is
    rounded to fp16 (finer than bf16); the output is stored in bf16, so the bf16 bound applies.
    The interpreter runs these dots correctly (they are fp16)."""
    case = CASES[0]
    q, k, v, vis = _inputs(case, torch.bfloat16, seed=1)
    var = VARIANTS[name]
    cache = poison(quantize_cache(k, v, fmt, v_trans=var.v_trans), vis, k.shape[2])
    kd, vd = cache.dequantized()
    ref = decode_attention_fp64(q, kd, vd, vis)
    out = LabSplitDecode(var, q.to(DEVICE), _on(cache), vis.to(DEVICE), num_splits=case[-1])()
    assert_close_to_oracle(out, ref, REL_L2[torch.bfloat16], f"{fmt}/{name} bf16 q")


@pytest.mark.parametrize("fmt,name", [("int8", "lab-ref"), ("int8", "vt-cvt16"), ("fp8", "vt"), ("fp8", "vt-fp8dot")],
                         ids=lambda x: str(x))
def test_paged_equals_contiguous_and_oracle(fmt, name):
    """Pages of 16 in a shuffled pool with poisoned unused pages and an out-of-range table entry
    past the visible range; the same bits as the contiguous cache (same tiles, same order)."""
    b, r, hq, hkv, d, s, vis_t, splits = 2, 1, 4, 2, 64, 160, (160, 37), 3
    case = (b, r, hq, hkv, d, s, vis_t, splits)
    q, k, v, vis = _inputs(case, torch.float16, seed=2)
    var = VARIANTS[name]
    cache = poison(quantize_cache(k, v, fmt, v_trans=False), vis, s)
    n_pages = b * s // PAGE
    num_pages = n_pages + 5
    perm = torch.randperm(num_pages, generator=torch.Generator().manual_seed(3))[:n_pages]
    table = perm.view(b, s // PAGE).to(torch.int32).clone()
    table[1, -1] = num_pages + 7  # past request 1's visible pages: never read
    kp = to_pages(cache.k, perm, num_pages)
    vp = to_pages(cache.v, perm, num_pages)
    if cache.kv_format == "int8":
        ksp, vsp = (to_pages(x.unsqueeze(-1), perm, num_pages).squeeze(-1) for x in (cache.k_scale, cache.v_scale))
        unused = torch.ones(num_pages, dtype=torch.bool)
        unused[perm] = False
        ksp[unused] = float("nan")
        vsp[unused] = float("nan")
    else:
        ksp, vsp = cache.k_scale, cache.v_scale
    paged = LabCache(fmt, kp, vp, ksp, vsp, False).with_v_layout(var.v_trans)
    contiguous = cache.with_v_layout(var.v_trans)
    kd, vd = cache.dequantized()
    ref = decode_attention_fp64(q, kd, vd, vis)
    out_c = LabSplitDecode(var, q, contiguous, vis, num_splits=splits)().clone()
    out_p = LabSplitDecode(var, q, paged, vis, num_splits=splits, block_table=table)()
    bound = FP8_DOT_REL_L2 if var.fp8_dot else REL_L2[torch.float16]
    assert_close_to_oracle(out_p, ref, bound, f"paged {fmt}/{name}")
    assert torch.equal(out_c, out_p), "paged must equal contiguous bit for bit"


def test_split1_equals_more_splits_within_bound():
    """One split and many splits of the same variant agree to the fp16 bound (merge order differs)."""
    q, k, v, vis = _inputs(CASES[1], torch.float16, seed=4)
    cache = quantize_cache(k, v, "fp8", v_trans=True)
    one = LabSplitDecode("vt-cvt16", q, cache, vis, num_splits=1)().clone()
    many = LabSplitDecode("vt-cvt16", q, cache, vis, num_splits=7)()
    assert rel_l2(many, one.double()) <= REL_L2[torch.float16]


@triton.jit
def _cvt_kernel(p_x, p_y, CVT: tl.constexpr):
    o = tl.arange(0, 256)
    tl.store(p_y + o, _int8_to_fp16(tl.load(p_x + o), CVT))


def test_int8_magic_number_is_exact_for_every_byte():
    x = torch.arange(-128, 128, dtype=torch.int32).to(torch.int8).to(DEVICE)
    y = torch.empty(256, dtype=torch.float16, device=DEVICE)
    for cvt in ((2,) if DEVICE == "cpu" else (1, 2)):
        _cvt_kernel[(1,)](x, y, CVT=cvt)
        assert torch.equal(y.cpu(), x.cpu().to(torch.float16)), f"CVT={cvt}"


def _on(cache: LabCache) -> LabCache:
    if DEVICE == "cpu":
        return cache
    return LabCache(cache.kv_format, *(t.to(DEVICE) for t in (cache.k, cache.v, cache.k_scale, cache.v_scale)),
                    cache.v_trans)
