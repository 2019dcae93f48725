"""The quantization-error table: each cache format against the bf16 cache of the same inputs."""

import pytest
import torch

from validation.quant_error import QUANT_FORMATS, format_error_table, quantization_error_table


def test_table_has_a_row_per_format_and_int8_beats_fp8():
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 32, generator=gen).bfloat16()
    k, v = (torch.randn(2, 2, 40, 32, generator=gen).bfloat16() for _ in range(2))
    visible = torch.tensor([40, 9])
    rows = quantization_error_table(q, k, v, visible)
    assert [r["format"] for r in rows] == list(QUANT_FORMATS)
    by = {r["format"]: r for r in rows}
    for r in rows:
        assert 0 < r["out_rel_l2"] < 0.1 and 0 < r["k_rel_l2"] < 0.1, r
    assert by["int8"]["k_rel_l2"] < by["fp8-head"]["k_rel_l2"], "8 bits of mantissa beat 3"
    assert format_error_table(rows).splitlines()[0].split()[:3] == ["format", "K", "rel-L2"]


def test_tokens_past_the_visible_count_do_not_count():
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(1, 2, 16, generator=gen).bfloat16()
    k, v = (torch.randn(1, 1, 20, 16, generator=gen).bfloat16() for _ in range(2))
    first = quantization_error_table(q, k, v, torch.tensor([8]), formats=("int8",))[0]
    k[:, :, 8:] = 100.0  # int8 scales are per token: the visible tokens quantize the same
    assert quantization_error_table(q, k, v, torch.tensor([8]), formats=("int8",))[0] == first


def test_unknown_format_is_an_error():
    x = torch.zeros(1, 1, 2, 8)
    with pytest.raises(ValueError, match="kv_format must be one of"):
        quantization_error_table(x[:, 0, 0:1].bfloat16(), x, x, torch.tensor([2]), formats=("fp4",))
