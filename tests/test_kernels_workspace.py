"""LayerWorkspace: sizes, what fits, and errors that say expected vs actual."""

import pytest
import torch

from kernels import LayerWorkspace


def test_buffers_are_fp32_and_sized_for_the_maxima():
    ws = LayerWorkspace(max_batch=4, max_rows=2, num_q_heads=8, head_dim=128, max_splits=16, device="cpu")
    vectors = 4 * 2 * 8 * 16
    assert ws.partial_acc.dtype == torch.float32 and ws.partial_acc.numel() == vectors * 128
    assert ws.partial_max.numel() == vectors and ws.partial_sum.numel() == vectors
    assert ws.split_counters.dtype == torch.int32 and ws.split_counters.tolist() == [0] * (4 * 8)
    assert ws.nbytes == (vectors * 128 + 2 * vectors) * 4 + 4 * 8 * 4


def test_fits_accepts_anything_within_the_maxima():
    ws = LayerWorkspace(4, 2, 8, 128, 16, "cpu")
    assert ws.fits(batch=1, rows=2, num_q_heads=8, head_dim=64, num_splits=16, device="cpu")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(batch=5), "batch must be <= 4 (LayerWorkspace max), got 5"),
        (dict(rows=3), "rows must be <= 2 (LayerWorkspace max), got 3"),
        (dict(num_splits=17), "num_splits must be <= 16 (LayerWorkspace max), got 17"),
        (dict(device="meta"), "workspace is on cpu, inputs are on meta"),
    ],
    ids=["batch", "rows", "splits", "device"],
)
def test_fits_raises_with_expected_and_actual(kwargs, message):
    ws = LayerWorkspace(4, 2, 8, 128, 16, "cpu")
    call = dict(batch=1, rows=1, num_q_heads=8, head_dim=128, num_splits=1, device="cpu") | kwargs
    with pytest.raises(ValueError) as info:
        ws.fits(**call)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 1, 8, 128, 4), "max_batch must be an int >= 1, got 0"),
        ((1, 17, 8, 128, 4), "max_rows must be an int in 1..16, got 17"),
        ((1, 1, 8, 512, 4), "head_dim must be an int in 1..256, got 512"),
        ((1, 1, 8, 128, 1000), "max_splits must be an int in 1..256, got 1000"),
        ((1, 1, 8.0, 128, 4), "num_q_heads must be an int >= 1, got 8.0"),
    ],
    ids=["batch", "rows", "head-dim", "splits", "float-heads"],
)
def test_constructor_rejects_bad_sizes(args, message):
    with pytest.raises(ValueError) as info:
        LayerWorkspace(*args, device="cpu")
    assert message in str(info.value)
