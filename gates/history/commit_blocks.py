"""Judging a long first-parent history on several processes.

A history run judges each commit as its own change against its first parent, so commits can be judged apart. A run
of many commits is cut into contiguous blocks, one per worker process, and each worker judges its block in order,
so that each commit's base is the tree its predecessor left (which the worker's readings already hold). The
findings come back in commit order: the report is the one a single process writes. Each worker opens its own git
reader and reads the modules of its first commit once, so a block shorter than `MIN_BLOCK` commits stays in the
calling process.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Callable, Sequence

MIN_BLOCK = 40  # commits a worker must have to be worth starting (it re-reads its first commit's modules)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform says, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def blocks(shas: Sequence[str], cpus: int | None = None) -> list[list[str]]:
    """`shas` (oldest first) cut into contiguous blocks of near-equal length, one per worker: as many as there are
    CPUs, but none shorter than `MIN_BLOCK`; one block (no worker) for a short history or a single CPU."""
    cpus = available_cpus() if cpus is None else cpus
    return [list(block) for block in contiguous(shas, max(1, min(cpus, len(shas) // MIN_BLOCK)))]


def contiguous(items: Sequence, count: int) -> list[Sequence]:
    """`items` cut into `count` contiguous slices whose lengths differ by one at most, the longer ones first."""
    size, extra = divmod(len(items), count)
    cut, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        cut.append(items[start:end])
        start = end
    return cut


def judge_apart(judge_block: Callable, jobs: list[tuple]) -> list:
    """`judge_block(*job)` of each job, each in its own fresh process (`spawn`: no git reader or heap of this process
    is shared), the results in the order of `jobs`. `judge_block` must be a module-level function."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(len(jobs)) as pool:  # leaving the block ends the workers without freeing their readings
        return pool.starmap(judge_block, jobs)
