"""A process for `ncu` to profile: one decode kernel on one benchmark shape.

    ncu --clock-control none --kernel-name regex:partial_kernel --launch-skip 3 --launch-count 1 \\
        --csv --page raw --metrics <list> python -m validation.bench.profile_target \\
        --shape seed-qwen0.5b-2k --impl single_pass

The call runs four times: three warm-ups (compilation) and the profiled one.
"""

from __future__ import annotations

import argparse
import sys

import torch

from kernels.decode_layer import layer_num_splits

from . import fixtures, impls, shapes
from .variants.splitkv_tuned import LaunchConfig


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.bench.profile_target")
    p.add_argument("--shape", required=True)
    p.add_argument("--impl", choices=["single_pass", "splitkv", "tuned"], required=True)
    p.add_argument("--config", default="n64-w4-s3-fused", help="tuning-variant config (impl tuned)")
    p.add_argument("--num-splits", type=int, default=0, help="0: the heuristic's choice")
    args = p.parse_args(argv)
    (shape,) = shapes.select([args.shape])
    x = fixtures.make_inputs(shape, seed=20261129)
    splits = args.num_splits or layer_num_splits(
        shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.batch, shape.rows, shape.context,
        num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    if args.impl == "tuned":
        call = impls.variant_impl(shape, x, splits, LaunchConfig.from_label(args.config)).call
    else:
        by_name = {i.name: i for i in impls.project_impls(shape, x, splits, paged=False)}
        call = by_name[args.impl].call
    for _ in range(4):
        call()
    torch.cuda.synchronize()
    print(f"profiled {args.impl} on {shape.name} with num_splits={splits if args.impl != 'single_pass' else 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
