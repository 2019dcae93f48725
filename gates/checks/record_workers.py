"""Checking many records on several processes.

A run without a change and without suites judges each record on its own: its gates read the record, the
artifacts it cites, the other records by id and the configuration, and what one record's check reads or caches
changes no other record's result. So a run of many records is cut into contiguous blocks, one per CPU, and each
block is checked in a process forked from this one after every record is loaded: the workers start without
importing anything again and see the same records, policy and configuration. The results come back in record
order, and the report is the one a single process writes.

A worker is forked only where that is safe: on Linux, from a process with one thread and no child process (no
git reader, no import server whose pipe a worker would share). Anywhere else, and for fewer than
`MIN_RECORDS_PER_WORKER` records per worker, the records are checked in this process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Callable, Sequence

from gates.history.commit_blocks import available_cpus, contiguous

MIN_RECORDS_PER_WORKER = 48  # below this a worker's start and its results' transfer cost more than they save

_BLOCK_INPUTS: dict = {}  # set just before the workers fork; what they check


def worker_count(record_count: int, jobs: int | None = None) -> int:
    """How many processes check `record_count` records: `jobs` (None: one per CPU this process may run on),
    but none with fewer than `MIN_RECORDS_PER_WORKER` records, and one where forking is not safe."""
    wanted = available_cpus() if jobs is None else jobs
    if wanted < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    count = max(1, min(wanted, record_count // MIN_RECORDS_PER_WORKER))
    return count if count > 1 and fork_is_safe() else 1


def fork_is_safe() -> bool:
    """True on Linux in a process with a single thread and no child process."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        threads = os.listdir("/proc/self/task")
        for thread in threads:
            with open(f"/proc/self/task/{thread}/children", encoding="ascii") as handle:
                if handle.read().strip():
                    return False
    except OSError:
        return False
    return len(threads) == 1


def check_in_workers(records: Sequence, check_one: Callable, workers: int,
                     refused: Callable[[], list]) -> tuple[list, list]:
    """(`check_one(record)` of every record in order, the inputs refused) with the records cut into `workers` blocks,
    each checked in a forked process. `refused()` lists, in a worker after its block, what it refused to read
    (each refusal once, in the order met)."""
    _BLOCK_INPUTS.update(records=records, check_one=check_one, refused=refused)
    try:
        pool = multiprocessing.get_context("fork").Pool(workers)
        try:
            parts = pool.map(_check_block, contiguous(range(len(records)), workers), chunksize=1)
        except BaseException:
            pool.terminate()
            raise
        pool.close()  # the workers end as processes do, and what they started sees its pipe close
        pool.join()
    finally:
        _BLOCK_INPUTS.clear()
    results, refusals, seen = [], [], set()
    for block_results, block_refused in parts:
        results.extend(block_results)
        for error in block_refused:
            if str(error) not in seen:
                seen.add(str(error))
                refusals.append(error)
    return results, refusals


def _check_block(block: range) -> tuple[list, list]:
    records, check_one = _BLOCK_INPUTS["records"], _BLOCK_INPUTS["check_one"]
    return [check_one(records[index]) for index in block], list(_BLOCK_INPUTS["refused"]())
