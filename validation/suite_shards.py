"""Run one suite as N pytest processes at once and write one artifact for the whole suite.

On a fresh GPU machine a suite run is mostly Triton compiling kernels and the CPU building
fixtures and references, one case after another. `python -m validation.run_suite numeric
--jobs 8` runs eight processes that share the suite case by case (`--pull DIR`,
validation/suites/case_queue.py: each takes the next case nobody has claimed, every test
of a case in one process), so they finish together however unevenly the cases cost. Each
process collects the whole suite, runs the cases it claimed and hands back what it
measured (`DESIGN_GATES_EVIDENCE_PART`: the recorder's state, what pytest collected and
ran, the node ids it ran, and the sources it imported); the merge checks that every
process collected the same tests and that together they ran each of them exactly once,
then writes one artifact. Its `results.collection` describes the suite as a whole: every
test collected, none deselected, the outcomes of all processes, and `shards: N`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PART_ENV = "DESIGN_GATES_EVIDENCE_PART"
CASE_LINE = re.compile(r"^\[\s*[\d.]+ s\] case (?P<case>.+): \d+ test\(s\) in (?P<seconds>[\d.]+) s$")


class ShardMismatch(RuntimeError):
    """The shards did not together run the suite exactly once."""


def write_part(path, recorder, collection: dict, collected_ids: list[str], ran_ids: list[str], session_failed: bool,
               sources: dict) -> None:
    """What one shard measured, for `merge_parts` (called by the suites' conftest)."""
    Path(path).write_text(json.dumps({
        "recorder": recorder.state(), "collection": collection, "collected_ids": collected_ids,
        "ran_ids": ran_ids, "session_failed": session_failed, "sources": sources}))


def merge_parts(parts: list[dict]):
    """(recorder, collection, sources, session_failed) of the whole suite from its shards' parts.

    Raises `ShardMismatch` when the shards collected different tests or a test ran in two shards.
    A collected test that ran in no shard (a `--tier ci` run leaves half out) is counted as
    deselected, as pytest counts it in one process, and the gates refuse such evidence."""
    from validation.evidence import EvidenceRecorder

    if not parts:
        raise ShardMismatch("no shard wrote its part")
    collected = parts[0]["collected_ids"]
    for index, part in enumerate(parts[1:], start=1):
        if part["collected_ids"] != collected:
            raise ShardMismatch(f"shard {index} collected other tests than shard 0")
    ran = Counter(node for part in parts for node in part["ran_ids"])
    twice = sorted(node for node, times in ran.items() if times > 1)
    if twice:
        raise ShardMismatch(f"{len(twice)} test(s) ran in more than one shard, e.g. {twice[0]}")
    missing = [node for node in collected if node not in ran]
    recorder = EvidenceRecorder()
    sources: dict[str, str] = {}
    outcomes: Counter = Counter()
    for part in parts:
        recorder.merge(part["recorder"])
        sources.update(part["sources"])
        outcomes.update(part["collection"].get("outcomes", {}))
    first = parts[0]["collection"]
    collection = dict(first)
    collection.update({
        "collected": len(collected),
        "deselected": len(missing),
        "deselected_ids": missing[:20],
        "dropped": sum(p["collection"].get("dropped", 0) for p in parts),
        "collection_errors": max(p["collection"].get("collection_errors", 0) for p in parts),
        "not_run": sum(p["collection"].get("not_run", 0) for p in parts),
        "outcomes": dict(sorted(outcomes.items())),
        "shards": len(parts),
    })
    return recorder, collection, sources, any(p["session_failed"] for p in parts)


def run_sharded(suite_file: Path, jobs: int, out: str, tier: str, extra: list[str], order: str = "forward") -> int:
    """Run `suite_file` as `jobs` processes pulling cases in `order` and write the merged artifact
    to `out`; pytest's exit status."""
    from validation.artifacts import source_hashes
    from validation.evidence import write_session_artifacts

    work = Path(tempfile.mkdtemp(prefix="design-gates-shards-"))
    # Each process builds fixtures and the fp64 oracle on the CPU; left alone, torch starts a
    # thread per core in every one of them and `jobs` processes oversubscribe the machine.
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    capped = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    start = time.monotonic()
    processes = []
    for index in range(jobs):
        part, log = work / f"part-{index}.json", work / f"shard-{index}.log"
        env = {**capped, **os.environ, PART_ENV: str(part)}
        env.pop("DESIGN_GATES_EVIDENCE_OUT", None)
        argv = [sys.executable, "-m", "pytest", str(suite_file), "-q", "-p", "no:cacheprovider",
                "--suite-tier", tier, "--pull", str(work / "claims"), "--pull-order", order, *extra]
        with open(log, "w", encoding="utf-8") as handle:
            processes.append((index, part, log, subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT,
                                                                  stdin=subprocess.DEVNULL, env=env)))
    codes = {}
    for index, part, log, process in processes:
        codes[index] = process.wait()
        text = log.read_text(errors="replace")
        last = text.strip().splitlines()[-1:] or ["(no output)"]
        print(f"[{time.monotonic() - start:6.1f} s] process {index + 1}/{jobs}: exit {codes[index]}: {last[0]}; "
              f"{_case_summary(text)}", flush=True)
        if codes[index] not in (0, 1, 5):
            print(text[-3000:], flush=True)
    parts = [json.loads(part.read_text()) for _, part, _, _ in processes if part.exists()]
    if len(parts) != jobs:
        print(f"error: {jobs - len(parts)} process(es) wrote no part; no artifact written", file=sys.stderr)
        return max(codes.values()) or 1
    try:
        recorder, collection, sources, failed = merge_parts(parts)
    except ShardMismatch as exc:
        print(f"error: {exc}; no artifact written", file=sys.stderr)
        return 1
    sources.update(source_hashes())  # and the runner itself (this module, run_suite)
    for path in write_session_artifacts(recorder, out, session_failed=failed, collection=collection, sources=sources):
        print(f"evidence artifact written: {path} ({collection['collected']} tests in {jobs} processes, "
              f"{time.monotonic() - start:.1f} s)")
    ran = [code for code in codes.values() if code != 5]  # 5: the process collected nothing
    return max(ran, default=5)


def _case_summary(log: str) -> str:
    """'N cases, slowest: a 12.0 s, b 9.1 s' from a pulling process's log lines."""
    timed = []
    for line in log.splitlines():
        match = CASE_LINE.match(line)
        if match:
            timed.append((float(match["seconds"]), match["case"]))
    slowest = ", ".join(f"{case} {seconds:.1f} s" for seconds, case in sorted(timed, reverse=True)[:3])
    return f"{len(timed)} case(s)" + (f", slowest: {slowest}" if slowest else "")
