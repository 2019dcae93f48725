"""Profile one decode kernel with `ncu` and write the `profile` evidence artifact.

    python -m validation.bench.ncu_profile --id ncu-splitkv-h200 --shape llama8b-b1-32k --impl splitkv \\
        --out docs/evidence/ncu-splitkv-h200.json

Runs `ncu --clock-control none` (the card's clocks are left alone) over
`python -m validation.bench.profile_target`, skipping the three warm-up launches, reads the
raw CSV report and turns it into the artifact (`validation.bench.ncu_artifact`). The
artifact binds the modules the profiled process runs (this process imports them too).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from . import profile_target  # noqa: F401  (the profiled modules are bound by the artifact)
from .ncu_artifact import METRICS, build

KERNEL = "decode_attention_partial_kernel"


def ncu_command(shape: str, impl: str, kernel: str = KERNEL) -> list[str]:
    return ["ncu", "--clock-control", "none", "--kernel-name", f"regex:{kernel}", "--launch-skip", "3",
            "--launch-count", "1", "--csv", "--page", "raw", "--metrics", ",".join(METRICS),
            sys.executable, "-m", "validation.bench.profile_target", "--shape", shape, "--impl", impl]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.bench.ncu_profile", description=__doc__.splitlines()[0])
    p.add_argument("--id", required=True, help="artifact id")
    p.add_argument("--shape", required=True, help="benchmark shape name")
    p.add_argument("--impl", choices=["single_pass", "splitkv"], required=True)
    p.add_argument("--kernel", default=KERNEL, help="name (regex) of the kernel to profile")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before ncu is stopped")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if shutil.which("ncu") is None:
        print("error: ncu (Nsight Compute) is not on PATH", file=sys.stderr)
        return 2
    command = ncu_command(args.shape, args.impl, args.kernel)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"error: ncu did not finish in {args.timeout:g} s", file=sys.stderr)
        return 1
    if done.returncode != 0:
        print(done.stdout[-3000:] + done.stderr[-3000:], file=sys.stderr)
        print(f"error: ncu exited {done.returncode}", file=sys.stderr)
        return 1
    shown = shlex.join(["ncu", *command[1:command.index(sys.executable)], "python3", *command[command.index(sys.executable) + 1:]])
    try:
        artifact = build(done.stdout, artifact_id=args.id, kernel=args.kernel, command=shown, shape=args.shape)
    except ValueError as exc:
        print(done.stderr[-3000:], file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(artifact, indent=1) + "\n")
    print(json.dumps(artifact["results"]["metrics"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
