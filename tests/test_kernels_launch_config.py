"""Launch configs: what may vary with the call (pipeline depth, combine tile) and what may not (tiles)."""

import pytest
import torch

from dataclasses import replace

from kernels.decode_attention.launch_config import (combine_launch_config, fused_merge_tile, partial_launch_config,
                                                    pdl_triggers)


@pytest.mark.parametrize("programs_per_sm, stages", [(None, 3), (0.06, 3), (2.9, 3), (3.0, 2), (3.9, 2)])
def test_only_a_single_pass_grid_that_fills_the_gpu_drops_to_two_stages(programs_per_sm, stages):
    assert partial_launch_config(128, 4, torch.bfloat16, programs_per_sm=programs_per_sm).num_stages == stages


def test_the_tiles_do_not_depend_on_the_grid():
    small = partial_launch_config(128, 4, torch.bfloat16, programs_per_sm=0.1)
    full = partial_launch_config(128, 4, torch.bfloat16, programs_per_sm=8.0)
    assert (small.block_m, small.block_n, small.num_warps) == (full.block_m, full.block_n, full.num_warps)


@pytest.mark.parametrize("head_dim, splits, block_s", [(128, 2, 2), (128, 17, 16), (128, 32, 32), (128, 200, 64),
                                                      (256, 200, 32), (64, 1, 2)])
def test_the_combine_loads_splits_after_the_first_in_tiles_of_at_most_64(head_dim, splits, block_s):
    config = combine_launch_config(head_dim, splits, pdl_available=False)
    assert (config.block_s, config.num_warps, config.use_pdl) == (block_s, 4, False)


@pytest.mark.parametrize(
    "group_rows, block_m, splits, head_dim, tile",
    [
        (4, 16, 32, 128, (4, 32)),  # Llama 8B at 32k: one round of the whole [4, 32, 128] tile
        (7, 16, 32, 64, (8, 32)),  # Qwen 0.5B at 2k: seven rows padded to eight
        (8, 16, 32, 128, (8, 16)),  # 70B at 32 splits: two rounds of 16 slots
        (8, 16, 64, 128, None),  # 70B at 64 splits: four rounds, the combine kernel instead
        (6, 16, 32, 256, None),  # head dim 256: four rounds
        (96, 64, 16, 256, None),  # 16 rows of a group of 6: the group needs two programs
        (4, 16, 1, 128, None),  # one split: the partial kernel's own output
    ],
)
def test_a_split_launch_merges_in_place_only_when_the_merge_is_one_or_two_tile_rounds(group_rows, block_m, splits,
                                                                                       head_dim, tile):
    assert fused_merge_tile(group_rows, block_m, splits, head_dim) == tile


SPLIT_CONFIG = partial_launch_config(128, 4, torch.bfloat16)


@pytest.mark.parametrize("finalize, fused, combine_pdl, chain, expected", [
    (False, True, False, True, (0, True)),    # merges in place: only the merging programs trigger
    (False, True, False, False, (0, False)),  # no chain: nothing is a dependent, nothing triggers
    (False, False, True, True, (1, False)),   # combine kernel as a dependent: the partial kernel triggers it
    (False, False, False, True, (0, False)),  # combine kernel without PDL
    (True, False, False, True, (1, False)),   # single pass in the chain
    (True, False, False, False, (0, False)),
])
def test_where_a_launch_lets_the_next_one_start(finalize, fused, combine_pdl, chain, expected):
    assert pdl_triggers(SPLIT_CONFIG, finalize=finalize, fused=fused, combine_pdl=combine_pdl, chain=chain) == expected


def test_the_merge_trigger_can_be_switched_off():
    config = replace(SPLIT_CONFIG, merge_trigger=False)
    assert pdl_triggers(config, finalize=False, fused=True, combine_pdl=False, chain=True) == (0, False)


def test_an_8_bit_cache_takes_twice_the_tokens_per_tile_up_to_head_dim_128():
    for kv_dtype in (torch.int8, torch.float8_e4m3fn):
        assert partial_launch_config(128, 4, torch.bfloat16, kv_dtype=kv_dtype).block_n == 128
        assert partial_launch_config(64, 8, torch.float16, kv_dtype=kv_dtype).block_n == 128
    assert partial_launch_config(128, 4, torch.bfloat16).block_n == 64
    assert partial_launch_config(128, 4, torch.bfloat16, kv_dtype=torch.bfloat16).block_n == 64
    # 64 rows (R = 16 of a group of 6) keep the 16-bit tiles
    assert partial_launch_config(128, 96, torch.bfloat16, kv_dtype=torch.int8) == partial_launch_config(128, 96, torch.bfloat16)


def test_an_8_bit_cache_at_head_dim_256_runs_eight_warps():
    assert partial_launch_config(256, 6, torch.bfloat16, kv_dtype=torch.int8).num_warps == 8
    assert partial_launch_config(256, 6, torch.bfloat16).num_warps == 4
    assert partial_launch_config(256, 96, torch.bfloat16, kv_dtype=torch.int8).num_warps == 4
