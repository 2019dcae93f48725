"""Compile the kernels the timing producers launch, in parallel processes, before they run.

    python -m validation.warm_cache --jobs 4

On a fresh machine much of a benchmark's time is Triton (and, for flex attention, Inductor)
compiling kernels, one after another, while the benchmark holds the machine alone. This
runs the same launches beforehand, split into independent processes (each benchmark shape
with `--compile-only`, each quantized-cache shape, and a short decode loop per route of the
end-to-end A/B), up to `--jobs` at a time, all writing into the kernel caches
(`TRITON_CACHE_DIR`, `TORCHINDUCTOR_CACHE_DIR`) that the producers read afterwards. Shapes
that share head dim, group size and query rows compile largely the same kernels: the first
of such a family runs first, and the others start once it has finished, loading what it
compiled instead of compiling it again side by side (`schedule`). The
suites need no warming: `python -m validation.run_suite --jobs N` compiles in parallel
shards itself. It writes no evidence and times nothing. A job that fails is reported (the
producer that runs the same work will fail and say so) but does not stop the others.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
E2E = ("llama-3-8b", 32768)


@dataclass(frozen=True)
class Job:
    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    family: str = ""  # jobs of one family compile largely the same kernels (see `schedule`)


def _family(kind: str, shape) -> str:
    """The kernels a shape compiles differ by head dim, group size and query rows, not by
    batch or context (Triton specializes on those only by divisibility)."""
    return f"{kind} D{shape.head_dim} G{shape.group} R{shape.rows}"


def jobs(bench: bool = True, quantized: bool = True, e2e: bool = True) -> list[Job]:
    """The warm-up jobs, each with its kernel family."""
    python = sys.executable
    out = []
    if quantized:
        from validation.bench.shapes import QUANT_SHAPES, select

        out += [Job(f"quantized {shape.name}", (python, "-m", "validation.bench.quantized", "--compile-only",
                                                "--shapes", shape.name), family=_family("quantized", shape))
                for shape in select(list(QUANT_SHAPES))]
    if bench:
        from validation.bench.shapes import MATRIX

        out += [Job(f"bench {shape.name}", (python, "-m", "validation.bench", "--compile-only", "--sweep",
                                            "--shapes", shape.name), family=_family("bench", shape))
                for shape in MATRIX]
    if e2e:
        model, context = E2E
        out += [Job(f"decode loop split-kv={switch}", (python, "-m", "examples.decode_loop", "--model", model,
                                                       "--context", str(context), "--steps", "2"),
                    (("DESIGN_GATES_SPLITKV", switch),), family=f"decode loop split-kv={switch}")
                for switch in ("0", "1")]
    return out


def schedule(todo: list[Job]) -> tuple[list[Job], dict[str, list[Job]]]:
    """(leaders, followers by family): the first job of each family, largest families first,
    and the rest of each family, to start only once its leader has finished.

    Run side by side, two jobs of one family would both compile the same kernels; after
    the leader they find most of them in the kernel cache and compile only what is theirs."""
    families: dict[str, list[Job]] = {}
    for job in todo:
        families.setdefault(job.family or job.name, []).append(job)
    ordered = sorted(families.values(), key=len, reverse=True)
    return [members[0] for members in ordered], {members[0].family or members[0].name: members[1:]
                                                 for members in ordered}


def job_environment(job: Job, jobs: int) -> dict[str, str]:
    """The environment a job runs in: the caller's, with what it leaves unset capped so that
    `jobs` processes side by side do not each start a thread per core (torch's intra-op
    threads, Inductor's pool of compile workers) and oversubscribe the machine."""
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    capped = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    return {**capped, **os.environ, "PYTHONUNBUFFERED": "1", **dict(job.env)}


def run_job(job: Job, jobs: int = 1) -> tuple[Job, int, float, str]:
    start = time.monotonic()
    done = subprocess.run(job.argv, cwd=REPO, env=job_environment(job, jobs), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    tail = "\n".join((done.stdout + done.stderr).splitlines()[-8:])
    return job, done.returncode, time.monotonic() - start, tail


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.warm_cache", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes at a time")
    parser.add_argument("--skip", action="append", default=[], choices=("bench", "quantized", "e2e"),
                        help="leave out a kind of job (repeatable)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    todo = jobs("bench" not in args.skip, "quantized" not in args.skip, "e2e" not in args.skip)
    leaders, followers = schedule(todo)
    start = time.monotonic()
    print(f"warm_cache: {len(todo)} jobs in {len(leaders)} kernel families, {args.jobs} at a time", flush=True)
    failed = []
    ready = deque(leaders)  # a family's followers go to the front when its leader finishes
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        running: set = set()
        while ready or running:
            while ready and len(running) < args.jobs:
                running.add(pool.submit(run_job, ready.popleft(), args.jobs))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                job, code, seconds, tail = future.result()
                print(f"[{time.monotonic() - start:6.1f} s] {job.name}: exit {code} in {seconds:.1f} s", flush=True)
                if code not in (0, 5):
                    failed.append(job.name)
                    print("    " + tail.replace("\n", "\n    "), flush=True)
                ready.extendleft(reversed(followers.pop(job.family or job.name, [])))
    print(f"warm_cache: {len(todo) - len(failed)} of {len(todo)} jobs passed in {time.monotonic() - start:.1f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
