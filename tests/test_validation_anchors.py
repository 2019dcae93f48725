"""Byte equality catches one flipped bit and a signed zero, and says where."""

import torch

from validation.anchors import ANCHORS, bytes_equal, describe_difference


def test_one_flipped_bit_breaks_equality():
    a = torch.randn(3, 5).to(torch.bfloat16)
    b = a.clone()
    b.view(torch.int16)[2, 4] ^= 1
    assert not bytes_equal(a, b)
    assert describe_difference(a, b).startswith("1 of 15 elements differ; first at (2, 4)")


def test_signed_zero_is_a_difference():
    assert not bytes_equal(torch.tensor([0.0]).half(), torch.tensor([-0.0]).half())


def test_equal_tensors_are_equal_and_dtype_matters():
    a = torch.randn(4).half()
    assert bytes_equal(a, a.clone())
    assert not bytes_equal(a, a.to(torch.bfloat16))


def test_anchor_ids_name_the_issue_anchors():
    assert [key.split("-")[0] for key in ANCHORS] == ["A1", "A2", "A3", "A4", "A5"]
