"""The launch-config exploration: candidate labels, plans, and a patch that always undoes itself."""

import pytest
import torch

from kernels.decode_attention import api
from validation.bench.explore import PLAN, Candidate, parse_plan, partial_config, table


def test_a_candidate_names_block_n_warps_and_stages():
    assert Candidate("n32-w8-s4").fields() == (32, 8, 4)
    assert Candidate("default").fields() is None


def test_a_candidate_may_add_grid_order_and_pdl_options():
    assert Candidate("default-hm-nopdl").options() == {"split_major": False, "combine_pdl": False}
    assert Candidate("n64-w8-s3-t2-cw8").fields() == (64, 8, 3)
    assert Candidate("n64-w8-s3-t2-cw8").options() == {"pdl_trigger": 2, "combine_warps": 8}
    assert Candidate("n64-w4-s3-m32").options() == {"block_m": 32}
    assert Candidate("default-noch-nosp").options() == {"chain_pdl": False, "scalar_pages": False}
    assert Candidate("default-nofc-nomt").options() == {"fused_combine": False, "merge_trigger": False}


@pytest.mark.parametrize("label", ["n32-w8", "w8-n32-s4", "n32-w8-sx", "fast", "default-t3", "n64-w4-s3-fast",
                                   "default-m48", "default-m8"])
def test_a_malformed_candidate_is_refused(label):
    with pytest.raises(ValueError, match=f"got '{label}'"):
        Candidate(label).fields()
        Candidate(label).options()


def test_the_patch_changes_block_n_warps_stages_and_keeps_block_m():
    default = api.partial_launch_config(256, 96, torch.bfloat16)
    with partial_config(Candidate("n32-w8-s2")):
        patched = api.partial_launch_config(256, 96, torch.bfloat16)
    assert (patched.block_m, patched.block_n, patched.num_warps, patched.num_stages) == (default.block_m, 32, 8, 2)
    assert api.partial_launch_config(256, 96, torch.bfloat16) == default


def test_the_patch_may_set_block_m():
    with partial_config(Candidate("n64-w4-s3-m32")):
        patched = api.partial_launch_config(256, 96, torch.bfloat16)
    assert (patched.block_m, patched.num_warps) == (32, 4)


def test_the_patch_sets_grid_order_and_the_combine_launch():
    with partial_config(Candidate("default-hm-t2-nopdl-cw8")):
        partial = api.partial_launch_config(128, 4, torch.bfloat16)
        combine = api.combine_launch_config(128, 32, pdl_available=True)
    assert (partial.split_major, partial.pdl_trigger) == (False, 2)
    assert (combine.num_warps, combine.use_pdl) == (8, False)
    assert api.combine_launch_config(128, 32, pdl_available=True).use_pdl is True


def test_the_patch_may_turn_off_the_pdl_chain_and_the_scalar_page_ids():
    default = api.partial_launch_config(128, 4, torch.bfloat16)
    with partial_config(Candidate("default-noch-nosp")):
        partial = api.partial_launch_config(128, 4, torch.bfloat16)
    assert (default.chain_pdl, default.scalar_pages) == (True, True)
    assert (partial.chain_pdl, partial.scalar_pages) == (False, False)


def test_the_patch_is_undone_when_the_call_inside_fails():
    original = api.partial_launch_config
    with pytest.raises(RuntimeError):
        with partial_config(Candidate("n16-w4-s2")):
            raise RuntimeError("compile error")
    assert api.partial_launch_config is original


def test_a_plan_from_the_command_line():
    assert parse_plan(["llama8b-b1-32k:default,n64-w8-s3:32,64:paged"]) == (
        ("llama8b-b1-32k", ("default", "n64-w8-s3"), (32, 64), True),)
    assert parse_plan([]) == PLAN
    with pytest.raises(ValueError, match="plan item must look like"):
        parse_plan(["llama8b-b1-32k:default"])


def test_the_table_compares_with_the_fastest_contiguous_default():
    rows = [dict(shape="s", config="default", splits=32, paged=False, median_us=10.0),
            dict(shape="s", config="n64-w8-s3", splits=32, paged=False, median_us=8.0),
            dict(shape="s", config="n32-w4-s3", splits=32, paged=False, error="OutOfResources")]
    text = table(rows)
    assert "| s | bf16 | n64-w8-s3 | 32 |  | 8.00 | 0.800 |" in text
    assert "| s | bf16 | n32-w4-s3 | 32 |  | - | - |" in text


def test_each_cache_format_is_compared_with_its_own_default():
    rows = [dict(shape="s", format="bf16", config="default", splits=32, paged=False, median_us=10.0),
            dict(shape="s", format="int8", config="default", splits=32, paged=False, median_us=12.0),
            dict(shape="s", format="int8", config="n128-w4-s3", splits=32, paged=False, median_us=6.0)]
    text = table(rows)
    assert "| s | int8 | n128-w4-s3 | 32 |  | 6.00 | 0.500 |" in text
    assert "| s | bf16 | default | 32 |  | 10.00 | 1.000 |" in text


def test_the_patch_may_keep_the_next_launch_until_a_merging_launch_ends():
    with partial_config(Candidate("default-nomt")):
        partial = api.partial_launch_config(128, 4, torch.bfloat16)
    assert partial.merge_trigger is False
    assert api.partial_launch_config(128, 4, torch.bfloat16).merge_trigger is True


def test_the_patch_may_mask_every_tile():
    with partial_config(Candidate("default-noum")):
        partial = api.partial_launch_config(128, 4, torch.bfloat16)
    assert partial.inner_unmasked is False
    assert api.partial_launch_config(128, 4, torch.bfloat16).inner_unmasked is True
