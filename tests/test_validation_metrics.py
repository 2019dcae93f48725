"""Metrics and tolerances: the numbers they give and the failures they report."""

import math

import pytest
import torch

from validation.metrics import compare, min_cosine, rel_l2
from validation.tolerances import tolerance_for, violations


def test_rel_l2_of_a_known_perturbation():
    expected = torch.tensor([3.0, 4.0])
    assert rel_l2(torch.tensor([3.0, 4.5]), expected) == pytest.approx(0.1)
    assert rel_l2(torch.zeros(2), torch.zeros(2)) == 0.0
    assert rel_l2(torch.ones(2), torch.zeros(2)) == math.inf


def test_min_cosine_skips_rows_whose_oracle_is_zero_and_catches_a_flipped_row():
    expected = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]])
    actual = torch.tensor([[1.0, 0.0], [5.0, 5.0], [0.0, -2.0]])
    assert min_cosine(actual, expected) == pytest.approx(-1.0)
    assert not compare(actual, expected).zero_rows_exact


def test_nan_output_fails_every_bound():
    expected = torch.randn(4, 8, dtype=torch.float64)
    actual = expected.clone()
    actual[1, 3] = float("nan")
    m = compare(actual, expected)
    found = violations(m, compare(expected, expected), tolerance_for("bf16"), 1.0)
    assert "output holds NaN or Inf" in found
    assert any(line.startswith("rel_l2") for line in found)


def test_error_far_above_the_same_dtype_reference_fails_the_ratio_bound():
    tol = tolerance_for("fp16")
    expected = torch.randn(64, 64, dtype=torch.float64)
    reference = expected * (1 + 1e-5)
    kernel = expected * (1 + 1e-3)
    found = violations(compare(kernel, expected), compare(reference, expected), tol, expected.abs().max().item())
    assert any("x same-dtype torch" in line for line in found)


def test_tolerances_follow_the_unit_roundoff():
    bf16, fp16 = tolerance_for("bf16"), tolerance_for("fp16")
    assert bf16.rel_l2 == 4 * 2 ** -8 and fp16.rel_l2 == 4 * 2 ** -11
    assert bf16.min_cosine < fp16.min_cosine < 1.0
    with pytest.raises(ValueError, match="dtype must be one of"):
        tolerance_for("fp8")
