"""Quantized KV caches in the decode entry points: int8 with a scale per (token, KV head)
and FP8 e4m3 with a scale per KV head or per tensor (dequantized = stored * scale).

The examples below quantize a cache with the helpers, pass the scales as `k_scale` /
`v_scale`, and check the output against the fp64 oracle over the dequantized cache.
"""

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import kernels  # noqa: E402
from kernels import LayerWorkspace, dequantize_kv, quantize_kv_fp8, quantize_kv_int8  # noqa: E402
from kernels.decode_layer import DecodeAttention  # noqa: E402
from validation.metrics import compare  # noqa: E402
from validation.oracle import decode_attention_fp64  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, HQ, HKV, D, S, PAGE = 2, 4, 2, 32, 45, 8
FORMATS = ("int8", "int8-f16", "fp8-head", "fp8-tensor")
REL_L2_MAX = 4 * 2.0 ** -8  # the bf16 tolerance of the numeric suite


def quantize(kv_format, x, fp8_scale=None):
    if kv_format.startswith("int8"):
        return quantize_kv_int8(x, scale_dtype=torch.float16 if kv_format == "int8-f16" else torch.float32)
    return quantize_kv_fp8(x, fp8_scale, per_head=kv_format == "fp8-head")


def problem(kv_format, seed=0, visible=(37, 0)):
    """q (bf16), a contiguous and a paged quantized cache of the same tokens, and their scales."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, HQ, D, generator=gen).to(torch.bfloat16)
    k, v = torch.randn(B, HKV, S, D, generator=gen), torch.randn(B, HKV, S, D, generator=gen)
    pages_per_request = -(-S // PAGE)
    order = torch.randperm(B * pages_per_request, generator=gen)
    table = order.reshape(B, pages_per_request).to(torch.int32)
    cont, paged = {}, {}
    for name, x in (("k", k), ("v", v)):
        values, scale = quantize(kv_format, x)
        padded = torch.zeros(B, HKV, pages_per_request * PAGE, D)
        padded[:, :, :S] = x
        blocks = padded.reshape(B, HKV, pages_per_request, PAGE, D).permute(0, 2, 1, 3, 4).reshape(-1, HKV, PAGE, D)
        page_x = torch.empty_like(blocks)
        page_x[order] = blocks
        page_values, page_scale = quantize(kv_format, page_x, None if kv_format.startswith("int8") else scale)
        cont[name], paged[name] = (values.to(DEVICE), scale.to(DEVICE)), (page_values.to(DEVICE), page_scale.to(DEVICE))
    return q.to(DEVICE), cont, paged, table.to(DEVICE), torch.tensor(visible, dtype=torch.int32, device=DEVICE)


def run(entry, q, cache, table, visible, **kw):
    (k, ks), (v, vs) = cache["k"], cache["v"]
    if entry == "single":
        return kernels.attention_decode(q, k, v, visible, k_scale=ks, v_scale=vs, **kw)
    if entry == "split":
        return kernels.attention_decode_splitkv(q, k, v, visible, num_splits=kw.pop("num_splits", 3), k_scale=ks,
                                                v_scale=vs, **kw)
    if entry == "paged":
        return kernels.attention_decode_paged(q, k, v, table, visible, k_scale=ks, v_scale=vs, **kw)
    return kernels.attention_decode_paged_splitkv(q, k, v, table, visible, num_splits=kw.pop("num_splits", 3),
                                                  k_scale=ks, v_scale=vs, **kw)


def assert_close_to_oracle(out, expected, what):
    m = compare(out, expected)
    assert m.finite and m.zero_rows_exact and m.rel_l2 <= REL_L2_MAX, (
        f"{what}: rel_l2 {m.rel_l2:.3e} (tolerance {REL_L2_MAX:.3e}), finite={m.finite}, zero rows={m.zero_rows_exact}")


# --- the quantize helpers -------------------------------------------------------------------


@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.float16], ids=["f32", "f16"])
def test_int8_round_trip_is_within_half_a_step_per_token(scale_dtype):
    x = torch.randn(2, 3, 17, 40, generator=torch.Generator().manual_seed(1)) * 3
    x[0, 1, 5] = 0.0  # an all-zero token: scale 1, values 0
    values, scales = quantize_kv_int8(x, scale_dtype=scale_dtype)
    assert values.dtype == torch.int8 and scales.dtype == scale_dtype and scales.shape == (2, 3, 17)
    assert int(values.abs().max()) <= 127 and float(scales[0, 1, 5]) == 1.0
    error = (dequantize_kv(values, scales) - x).abs()
    assert (error <= scales.float()[..., None] * 0.5 + 1e-6).all()


@pytest.mark.parametrize("per_head", [True, False], ids=["per-head", "per-tensor"])
def test_fp8_round_trip_is_within_e4m3_rounding(per_head):
    x = torch.randn(2, 3, 17, 40, generator=torch.Generator().manual_seed(2))
    values, scale = quantize_kv_fp8(x, per_head=per_head)
    assert values.dtype == torch.float8_e4m3fn and scale.dtype == torch.float32
    assert scale.shape == ((3,) if per_head else ())
    x_back = dequantize_kv(values, scale)
    rel = ((x_back - x).norm() / x.norm()).item()
    assert rel < 2.0 ** -4, f"fp8 round trip rel-L2 {rel:.3e}"
    again, same = quantize_kv_fp8(x, scale)  # an explicit scale is used as is
    assert torch.equal(again.view(torch.uint8), values.view(torch.uint8)) and same is scale or torch.equal(same, scale)


def test_helpers_reject_bad_arguments():
    with pytest.raises(ValueError, match="scale_dtype must be torch.float16 or torch.float32, got torch.bfloat16"):
        quantize_kv_int8(torch.randn(1, 1, 2, 8), scale_dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"scale must have shape \(\) or \(2,\), got \(3,\)"):
        quantize_kv_fp8(torch.randn(1, 2, 4, 8), torch.ones(3))


# --- numerics against the fp64 oracle of the dequantized cache --------------------------------


@pytest.mark.parametrize("entry", ["single", "split", "paged", "paged-split"])
@pytest.mark.parametrize("kv_format", FORMATS)
def test_output_matches_fp64_oracle_of_the_dequantized_cache(kv_format, entry):
    q, cont, paged, table, visible = problem(kv_format)
    expected = decode_attention_fp64(q, dequantize_kv(*cont["k"]), dequantize_kv(*cont["v"]), visible)
    out = run(entry, q, paged if entry.startswith("paged") else cont, table, visible,
              out=torch.full_like(q, float("nan")))
    assert_close_to_oracle(out, expected, f"{kv_format} {entry}")


def test_unused_slots_and_their_scales_are_never_read():
    q, cont, _, table, visible = problem("int8", visible=(20, 9))
    expected = decode_attention_fp64(q, dequantize_kv(*cont["k"]), dequantize_kv(*cont["v"]), visible)
    for name in ("k", "v"):
        values, scales = cont[name]
        for b, n in enumerate(visible.tolist()):
            values[b, :, n:] = 127
            scales[b, :, n:] = float("nan")
    assert_close_to_oracle(run("split", q, cont, table, visible), expected, "poisoned int8 tails")


# --- bitwise anchors ----------------------------------------------------------------------------


@pytest.mark.parametrize("kv_format", ["int8", "fp8-head"])
def test_anchors_split1_single_paged_contiguous_alone_in_batch(kv_format):
    q, cont, paged, table, visible = problem(kv_format, visible=(37, 11))
    single = run("single", q, cont, table, visible)
    assert torch.equal(run("split", q, cont, table, visible, num_splits=1), single), "A1 split(1) == single pass"
    assert torch.equal(run("paged", q, paged, table, visible), single), "A2 paged == contiguous (single pass)"
    split = run("split", q, cont, table, visible, num_splits=3)
    assert torch.equal(run("paged-split", q, paged, table, visible, num_splits=3), split), "A2 at 3 splits"
    per_token = kv_format == "int8"
    alone = {n: (cont[n][0][1:].clone(), cont[n][1][1:].clone() if per_token else cont[n][1]) for n in ("k", "v")}
    assert torch.equal(run("split", q[1:].clone(), alone, table[1:], visible[1:].clone(), num_splits=3)[0], split[1]), \
        "A3 a request alone == in its batch"


# --- the API: new keyword-only arguments, clear errors ------------------------------------------


def test_bf16_calls_are_unchanged_and_scales_default_to_none():
    q, _, _, table, visible = problem("int8")
    k = torch.randn(B, HKV, S, D, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16).to(DEVICE)
    explicit = kernels.attention_decode(q, k, k, visible, k_scale=None, v_scale=None)
    assert torch.equal(kernels.attention_decode(q, k, k, visible), explicit)


def _bad(kv_format, edit):
    q, cont, _, table, visible = problem(kv_format)
    (k, ks), (v, vs) = cont["k"], cont["v"]
    return edit(q, k, v, ks, vs, visible)


BAD_SCALES = {
    "int8-no-scales": ("int8", lambda q, k, v, ks, vs, vis: (q, k, v, vis, None, vs),
                       "k_scale must be a torch.Tensor for a torch.int8 cache, got NoneType"),
    "int8-scale-shape": ("int8", lambda q, k, v, ks, vs, vis: (q, k, v, vis, ks[:, :1], vs),
                         r"k_scale of an int8 cache must have the cache's first three dims \(2, 2, 45\) "
                         r"\(one scale per token and KV head\), got \(2, 1, 45\)"),
    "int8-scale-bf16": ("int8", lambda q, k, v, ks, vs, vis: (q, k, v, vis, ks, vs.bfloat16()),
                        "v_scale of an int8 cache must be float16 or float32 .*, got torch.bfloat16"),
    "int8-scale-dtypes-differ": ("int8", lambda q, k, v, ks, vs, vis: (q, k, v, vis, ks, vs.half()),
                                 "v_scale must have k_scale's dtype torch.float32, got torch.float16"),
    "fp8-scale-shape": ("fp8-head", lambda q, k, v, ks, vs, vis: (q, k, v, vis, torch.ones(3, device=ks.device), vs),
                        r"k_scale of a float8_e4m3fn cache must be per tensor, shape \(\) or \(1,\), or per KV "
                        r"head, shape \(2,\); got \(3,\)"),
    "fp8-scale-fp16": ("fp8-head", lambda q, k, v, ks, vs, vis: (q, k, v, vis, ks.half(), vs),
                       "k_scale of a float8_e4m3fn cache must be float32, got torch.float16"),
    "mixed-caches": ("int8", lambda q, k, v, ks, vs, vis: (q, k, v.to(torch.float32).to(torch.float8_e4m3fn), vis,
                                                            ks, vs),
                     "v_cache must have k_cache's dtype torch.int8, got torch.float8_e4m3fn"),
    "scales-on-bf16-cache": ("int8", lambda q, k, v, ks, vs, vis: (q, k.bfloat16(), v.bfloat16(), vis, ks, vs),
                             r"k_scale must be None for a torch.bfloat16 cache \(scales apply to int8 and "
                             r"float8_e4m3fn caches\), got Tensor"),
}


@pytest.mark.parametrize("name", sorted(BAD_SCALES))
def test_bad_scales_raise_a_clear_error(name):
    kv_format, edit, message = BAD_SCALES[name]
    q, k, v, vis, ks, vs = _bad(kv_format, edit)
    with pytest.raises(ValueError, match=message):
        kernels.attention_decode(q, k, v, vis, k_scale=ks, v_scale=vs)
    with pytest.raises(ValueError, match=message):
        kernels.attention_decode_splitkv(q, k, v, vis, num_splits=2, k_scale=ks, v_scale=vs)


def test_paged_scales_must_mirror_the_pages():
    q, _, paged, table, visible = problem("int8")
    (k, ks), (v, vs) = paged["k"], paged["v"]
    with pytest.raises(ValueError, match=r"must have the cache's first three dims \(12, 2, 8\)"):
        kernels.attention_decode_paged(q, k, v, table, visible, k_scale=ks[:, :, :4], v_scale=vs)


# --- the layer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kv_format", ["int8", "fp8-tensor"])
def test_decode_layer_routes_a_quantized_cache(kv_format):
    q, cont, _, _, visible = problem(kv_format)
    layer = DecodeAttention(HQ, HKV, D, max_batch=B, dtype=torch.bfloat16, device=DEVICE, split_kv=True)
    (k, ks), (v, vs) = cont["k"], cont["v"]
    out = layer(q, k, v, visible, k_scale=ks, v_scale=vs, max_visible_tokens=128)  # a bucket's host bound
    route = layer.last_route
    assert route.is_split, route.reason
    direct = kernels.attention_decode_splitkv(q, k, v, visible, num_splits=route.num_splits, k_scale=ks, v_scale=vs)
    assert torch.equal(out, direct)
    narrow = DecodeAttention(HQ, HKV, D, max_batch=B, device=DEVICE, split_kv=True,
                             coverage=type(layer.coverage)(quantized_caches=()))
    route = narrow.route_for(B, 1, 4096, cache_dtype=k.dtype)
    assert not route.is_split and "not covered" in route.reason


# --- capture safety (GPU only) -----------------------------------------------------------------


@pytest.mark.skipif(DEVICE != "cuda", reason="CUDA graphs need a GPU")
@pytest.mark.parametrize("kv_format", ["int8", "fp8-head"])
def test_quantized_split_call_replays_in_a_cuda_graph(kv_format):
    q, _, paged, table, visible = problem(kv_format)
    ws = LayerWorkspace(B, 1, HQ, D, 3, q.device)
    out = torch.empty_like(q)
    eager = run("paged-split", q, paged, table, visible, out=torch.empty_like(q), workspace=ws)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run("paged-split", q, paged, table, visible, out=out, workspace=ws)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run("paged-split", q, paged, table, visible, out=out, workspace=ws)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, eager)
