"""The quantized-cache benchmark's CPU-testable parts: the bar rows, the bytes each format
reads, options, the table, and our route's implementations run through the interpreter."""

import pytest
import torch

from validation.bench import quantized
from validation.bench.correctness import _dense_fp64, compare
from validation.bench.fixtures import make_inputs, quantize_inputs
from validation.bench.impls import quantized_route_impls
from validation.bench.shapes import QUANT_SHAPES, BenchShape, kv_bytes_read, select


def test_the_bar_rows_are_the_issues_shapes():
    shapes = {(s.batch, s.num_q_heads, s.num_kv_heads, s.head_dim, s.context, s.rows) for s in select(list(QUANT_SHAPES))}
    assert shapes == {(1, 32, 8, 128, 32768, 1), (1, 32, 8, 128, 131072, 1), (8, 32, 8, 128, 8192, 1),
                      (1, 24, 4, 256, 20688, 1), (1, 24, 4, 256, 20688, 16)}


def test_bytes_read_count_values_and_scales():
    shape = select(["llama8b-b1-32k"])[0]  # 8 KV heads x 32768 tokens x D 128
    tokens = 8 * 32768
    assert kv_bytes_read(shape, "bf16") == shape.kv_bytes == 2 * tokens * 128 * 2
    assert kv_bytes_read(shape, "int8") == 2 * tokens * (128 + 4)
    assert kv_bytes_read(shape, "int8", scale_bytes=2) == 2 * tokens * (128 + 2)
    assert kv_bytes_read(shape, "fp8") == 2 * tokens * 128 + 2 * 8 * 4
    with pytest.raises(ValueError, match="bf16, int8 or fp8"):
        kv_bytes_read(shape, "fp4")


def test_options_reject_unknown_formats_and_shapes():
    args = quantized.parse_args(["--out", "x.json", "--formats", "bf16,fp4"])
    with pytest.raises(ValueError, match="fp4"):
        quantized.options_from(args, [])
    assert quantized.main(["--out", "x.json", "--shapes", "no-such-shape"]) == 2
    if not torch.cuda.is_available():
        assert quantized.main(["--out", "x.json"]) == 2, "no GPU: a clear error, no traceback"
    opts = quantized.options_from(quantized.parse_args(["--out", "x.json"]), [])
    assert [s.name for s in opts.shapes] == list(QUANT_SHAPES) and opts.formats == ("bf16", "int8", "fp8")


def test_table_compares_each_format_with_bf16_on_the_same_layout():
    row = {"shape": "s", "kind": "ours", "num_splits": 4, "bytes_read": 2e6, "read_pass_us": 1.0,
           "correctness": {"rel_l2": 1e-3, "passed": True}}
    artifact = {"results": {"ceilings": {"read": {"TBps": 4.0}}, "rows": [
        dict(row, impl="bf16", format="bf16", paged=False, median_us=10.0),
        dict(row, impl="int8", format="int8", paged=False, median_us=5.0, fraction_of_read_ceiling=0.5),
        dict(row, impl="fp8_paged", format="fp8", paged=True, error="RuntimeError: x"),
    ]}}
    table = quantized.format_table(artifact)
    assert table.splitlines()[-1].split()[-1] == "error"
    int8_line = table.splitlines()[3].split()
    assert int8_line[:5] == ["s", "int8", "4", "5.00", "2.00x"] and "50.0%" in int8_line
    assert quantized.failures(artifact["results"]["rows"], {"s": {"anchors": {"int8": {"a": False}}}}) == [
        "s:fp8_paged", "s:int8:a"]


@pytest.mark.parametrize("kv_format", ["int8", "fp8"])
def test_our_quantized_route_passes_its_check_on_a_small_shape(kv_format):
    shape = BenchShape("tiny", 1, 4, 2, 32, 48)
    x = make_inputs(shape, seed=3, device="cpu", dtype=torch.float16)
    cache = quantize_inputs(x, kv_format)
    ref = _dense_fp64(x.q, *cache.dequantized(), x.visible_tokens)
    contiguous, paged = (impl.call() for impl in quantized_route_impls(shape, x, cache, num_splits=2))
    assert compare(contiguous, ref)["passed"] and torch.equal(contiguous, paged)
