"""`python -m validation.bench`: correctness first, then timing, on a CUDA device.

Examples:
    python -m validation.bench --out docs/evidence/bench-splitkv-h200.json
    python -m validation.bench --shapes llama8b-b1-32k --sweep --peers sdpa_cudnn
    python -m validation.bench --matrix models --shapes Qwen2.5-14B-tp4-b16-4k --out models.json
    python -m validation.bench.report docs/evidence/bench-splitkv-h200.json   # Markdown + plots
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from . import shapes as shape_matrix
from .runner import RunOptions, run
from .table import format_table
from .variants.splitkv_tuned import LaunchConfig

ALL_PEERS = ["sdpa_default", "sdpa_cudnn", "sdpa_flash", "flex_decode", "flashinfer"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m validation.bench", description=__doc__.splitlines()[0])
    p.add_argument("--matrix", choices=("public", "models"), default="public",
                   help="public: the H200 decode shapes; models: every (model, TP) x batch x context of "
                        "validation/model_shapes.py that fits in memory")
    p.add_argument("--shapes", nargs="*", default=None, help="shape names (default: the whole matrix)")
    p.add_argument("--peers", default=",".join(ALL_PEERS), help="comma-separated peers, or 'none'")
    p.add_argument("--variants", default="", help="comma-separated tuning-variant configs, e.g. n64-w4-s3-fused")
    p.add_argument("--ours", default="splitkv", help="the implementation judged against the bars")
    p.add_argument("--sweep", action="store_true", help="sweep num_splits over 1, 2, 4, ..., 128")
    p.add_argument("--sweep-variant", action="store_true", help="sweep the first variant config too")
    p.add_argument("--variant-split-window", action="store_true",
                   help="time every variant config at half, 1, 2 and 4 times the heuristic's splits")
    p.add_argument("--flush-l2", action="store_true", help="start every call from a cold L2, small shapes too")
    p.add_argument("--seed", type=int, default=20261129)
    p.add_argument("--commit", default=None, help="commit to record when git is not available")
    p.add_argument("--compile-only", action="store_true",
                   help="check (and so compile) every implementation once, time nothing and write nothing: "
                        "warms the kernel caches before a timed run")
    p.add_argument("--out", type=Path, help="where to write the evidence artifact (JSON); required unless --compile-only")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if (args.out is None) != args.compile_only:
        print("error: give --out for a timed run, and no --out with --compile-only", file=sys.stderr)
        return 2
    try:
        selected = shape_matrix.select(args.shapes, args.matrix)
        configs = [LaunchConfig.from_label(c) for c in args.variants.split(",") if c]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    peers = [] if args.peers == "none" else [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in ALL_PEERS]
    if unknown:
        print(f"error: unknown peer(s) {unknown}; expected some of {ALL_PEERS}", file=sys.stderr)
        return 2
    command = "python -m validation.bench " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    opts = RunOptions(shapes=selected, peers=peers, variant_configs=configs, sweep=args.sweep,
                      sweep_variant=args.sweep_variant, variant_split_window=args.variant_split_window,
                      flush_l2=args.flush_l2, seed=args.seed, ours=args.ours, command=command, commit=args.commit,
                      compile_only=args.compile_only)
    if args.compile_only:
        done = run(opts)
        print(f"compiled and checked {done['rows']} implementation(s); failures: {done['correctness_failures'] or 'none'}")
        return 1 if done["correctness_failures"] else 0
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def write(artifact: dict) -> None:
        args.out.write_text(json.dumps(artifact, indent=1) + "\n")

    artifact = run(opts, on_progress=write)
    write(artifact)
    print(format_table(artifact))
    if not artifact["results"]["correctness_passed"]:
        print("error: correctness failed (untimed, and the report refuses this artifact): "
              + ", ".join(artifact["results"]["correctness_failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
