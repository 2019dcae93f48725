"""Launch configs: what may vary with the call (pipeline depth, combine tile) and what may not (tiles)."""

import pytest
import torch

from kernels.decode_attention.launch_config import combine_launch_config, partial_launch_config


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
