"""The split-count heuristic: wave efficiency, a full grid is never split, every split
keeps a whole tile of tokens, and bad input is refused."""

import pytest

from kernels.split_heuristic import SplitPolicy, choose_num_splits, wave_efficiency

H200_SMS = 132


@pytest.mark.parametrize(
    "batch, kv_heads, tokens, per_sm, expected",
    [
        pytest.param(1, 8, 32768, 2, 32, id="B1-Hkv8-S32768-one-wave-of-256-programs"),
        pytest.param(1, 8, 131072, 2, 32, id="B1-Hkv8-S131072"),
        pytest.param(8, 8, 8192, 2, 4, id="B8-Hkv8-S8192"),
        pytest.param(1, 2, 2048, 4, 32, id="B1-Hkv2-S2048-capped-by-tokens-per-split"),
        pytest.param(1, 4, 20688, 1, 32, id="B1-Hkv4-D256-one-program-per-SM"),
        pytest.param(4, 1, 32768, 2, 64, id="B4-Hkv1-S32768"),
    ],
)
def test_matrix_shapes_get_one_full_wave(batch, kv_heads, tokens, per_sm, expected):
    policy = SplitPolicy(programs_per_sm=per_sm)
    assert choose_num_splits(batch, kv_heads, tokens, H200_SMS, policy=policy) == expected


@pytest.mark.parametrize("batch", [64, 128, 1024], ids=lambda b: f"B{b}")
def test_a_grid_that_already_fills_the_gpu_is_never_split(batch):
    assert choose_num_splits(batch, 8, 1 << 20, H200_SMS) == 1


@pytest.mark.parametrize("tokens", [0, 1, 63, 127], ids=lambda t: f"S{t}")
def test_fewer_than_two_tiles_of_tokens_are_not_split(tokens):
    assert choose_num_splits(1, 1, tokens, H200_SMS) == 1


@pytest.mark.parametrize("tokens", [64 * s + r for s in (2, 8, 100) for r in (0, 17)], ids=lambda t: f"S{t}")
def test_every_split_keeps_at_least_one_tile(tokens):
    splits = choose_num_splits(1, 1, tokens, H200_SMS)
    assert splits == 1 or tokens // splits >= SplitPolicy().min_tokens_per_split


def test_result_is_a_power_of_two_within_max_splits():
    policy = SplitPolicy(max_splits=16)
    for tokens in (100, 1000, 10**6):
        for batch in (1, 3, 17):
            s = choose_num_splits(batch, 1, tokens, H200_SMS, policy=policy)
            assert s & (s - 1) == 0 and 1 <= s <= 16


def test_ties_in_wave_efficiency_go_to_fewer_splits():
    # 8 programs per split on 264 slots: 32 splits (256 programs) and 64 (512) waste the same
    assert wave_efficiency(8 * 32, 264) == pytest.approx(wave_efficiency(8 * 64, 264), abs=0.01)
    assert choose_num_splits(1, 8, 1 << 20, H200_SMS) == 32


def test_wave_efficiency_counts_the_last_partial_wave():
    assert wave_efficiency(264, 264) == 1.0
    assert wave_efficiency(265, 264) == pytest.approx(265 / 528)


@pytest.mark.parametrize(
    "args, message",
    [
        pytest.param((0, 8, 1024, 132), "batch must be >= 1", id="zero-batch"),
        pytest.param((1, 8, -1, 132), "max_visible_tokens must be >= 0", id="negative-tokens"),
        pytest.param((1, 8, 1024, 0), "num_sms must be >= 1", id="no-SMs"),
        pytest.param((1, 8.0, 1024, 132), "num_kv_heads must be an int, got float", id="float-heads"),
        pytest.param((True, 8, 1024, 132), "batch must be an int, got bool", id="bool-batch"),
    ],
)
def test_bad_input_is_refused_with_what_was_expected(args, message):
    with pytest.raises(ValueError, match=message):
        choose_num_splits(*args)
