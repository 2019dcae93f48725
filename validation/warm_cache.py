"""Compile every kernel the evidence producers launch, in parallel processes, before they run.

    python -m validation.warm_cache --jobs 16

On a fresh machine most of an evidence run's time is Triton compiling kernels, one after
another inside each producer. This runs the same work split into independent processes
(the numeric and bitwise suites in shards of whole cases, each benchmark shape with
`--compile-only`, each quantized shape, and a short decode loop per route), up to `--jobs`
at a time, all writing into the one kernel cache (`TRITON_CACHE_DIR`, default
`~/.triton/cache`) that the producers read afterwards. It writes no evidence; what it
measures is thrown away. A job that fails is reported (the producer that runs the same
work will fail and say so) but does not stop the others; the exit status is 0 unless no
job could start.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITES = ("numeric", "bitwise")
E2E = ("llama-3-8b", 32768)


@dataclass(frozen=True)
class Job:
    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


def jobs(shards: int, bench: bool = True, quantized: bool = True, e2e: bool = True) -> list[Job]:
    """The warm-up jobs, the longest kinds first."""
    python = sys.executable
    out = [Job(f"{suite} {k}/{shards}", (python, "-m", "pytest", f"validation/suites/test_{suite}.py", "-q",
                                          "-p", "no:cacheprovider", "--shard", f"{k}/{shards}"))
           for suite in SUITES for k in range(shards)]
    if bench:
        from validation.bench.shapes import MATRIX

        out += [Job(f"bench {shape.name}", (python, "-m", "validation.bench", "--compile-only", "--sweep",
                                            "--shapes", shape.name)) for shape in MATRIX]
    if quantized:
        from validation.bench.shapes import QUANT_SHAPES

        out += [Job(f"quantized {name}", (python, "-m", "validation.bench.quantized", "--compile-only",
                                          "--shapes", name)) for name in QUANT_SHAPES]
    if e2e:
        model, context = E2E
        out += [Job(f"decode loop split-kv={switch}", (python, "-m", "examples.decode_loop", "--model", model,
                                                       "--context", str(context), "--steps", "2"),
                    (("DESIGN_GATES_SPLITKV", switch),)) for switch in ("0", "1")]
    return out


def run_job(job: Job) -> tuple[Job, int, float, str]:
    start = time.monotonic()
    env = dict(os.environ, PYTHONUNBUFFERED="1", **dict(job.env))
    done = subprocess.run(job.argv, cwd=REPO, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-8:])
    return job, done.returncode, time.monotonic() - start, tail


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.warm_cache", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes at a time")
    parser.add_argument("--shards", type=int, default=0, help="shards per suite (default: --jobs)")
    parser.add_argument("--skip", action="append", default=[], choices=("bench", "quantized", "e2e"),
                        help="leave out a kind of job (repeatable)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    todo = jobs(args.shards or args.jobs, "bench" not in args.skip, "quantized" not in args.skip, "e2e" not in args.skip)
    start = time.monotonic()
    print(f"warm_cache: {len(todo)} jobs, {args.jobs} at a time", flush=True)
    failed = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in as_completed([pool.submit(run_job, job) for job in todo]):
            job, code, seconds, tail = future.result()
            print(f"[{time.monotonic() - start:6.1f} s] {job.name}: exit {code} in {seconds:.1f} s", flush=True)
            if code not in (0, 5):
                failed.append(job.name)
                print("    " + tail.replace("\n", "\n    "), flush=True)
    print(f"warm_cache: {len(todo) - len(failed)} of {len(todo)} jobs passed in {time.monotonic() - start:.1f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
