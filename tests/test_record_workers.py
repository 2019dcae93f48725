"""Many records are checked on several processes, with the report a single process writes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from gates.checks import record_workers
from gates.checks.record_workers import worker_count
from gates.history.commit_blocks import contiguous

ROOT = Path(__file__).resolve().parents[1]
LINUX = sys.platform.startswith("linux")


def test_blocks_are_contiguous_and_near_equal():
    assert contiguous(range(10), 3) == [range(0, 4), range(4, 7), range(7, 10)]
    assert contiguous(range(2), 2) == [range(0, 1), range(1, 2)]


def test_few_records_stay_in_one_process(monkeypatch):
    monkeypatch.setattr(record_workers, "fork_is_safe", lambda: True)
    per_worker = record_workers.MIN_RECORDS_PER_WORKER
    assert worker_count(2 * per_worker - 1, jobs=8) == 1
    assert worker_count(2 * per_worker, jobs=8) == 2
    assert worker_count(100 * per_worker, jobs=3) == 3
    assert worker_count(100 * per_worker, jobs=1) == 1


def test_no_worker_is_forked_where_forking_is_unsafe(monkeypatch):
    monkeypatch.setattr(record_workers, "fork_is_safe", lambda: False)
    assert worker_count(100 * record_workers.MIN_RECORDS_PER_WORKER, jobs=8) == 1


def test_jobs_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        worker_count(10, jobs=0)


def test_a_second_thread_makes_forking_unsafe():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert record_workers.fork_is_safe() is False
    finally:
        stop.set()
        thread.join()


WORKERS_AGREE = textwrap.dedent("""
    import json, os, re, subprocess, sys, tempfile
    from pathlib import Path
    sys.path.insert(0, sys.argv[1] + "/scripts")
    from bench_static_gates import make_repo
    from gates.checks import record_workers
    from gates.checks.runner import check_records
    from gates.frontends.report_formats import render

    seen = {"fork_safe_alone": record_workers.fork_is_safe()}
    child = subprocess.Popen(["sleep", "30"])
    seen["fork_safe_with_a_child"] = record_workers.fork_is_safe()
    child.kill(); child.wait()
    record_workers.MIN_RECORDS_PER_WORKER = 3
    repo = make_repo(Path(tempfile.mkdtemp()), 9)
    design, evidence = repo / "docs" / "design", repo / "evidence"
    failing = design / "generated-00004.md"
    failing.write_text(re.sub("(?m)^risk: .*$", "risk: L9", failing.read_text(), count=1))  # fails G0
    os.unlink(evidence / "numeric-cpu-00007.json")
    os.mkfifo(evidence / "numeric-cpu-00007.json")  # refused: not a regular file
    used = []
    original = record_workers.check_in_workers
    def counted(records, check_one, workers, refused):
        used.append(workers)
        return original(records, check_one, workers, refused)
    import gates.checks.runner as runner
    runner.check_in_workers = counted
    apart = check_records(None, repo, jobs=3)
    alone = check_records(None, repo, jobs=1)
    seen.update(workers=used, records=len(alone.records), failing=[r.path for r in alone.records if not r.ok],
                refused=[str(e) for e in alone.input_errors], same_report=render(apart, "json") == render(alone, "json"),
                same_refused=[str(e) for e in apart.input_errors] == [str(e) for e in alone.input_errors])
    print(json.dumps(seen))
""")


@pytest.mark.skipif(not LINUX, reason="records are checked on several processes on Linux only")
def test_records_checked_apart_give_the_report_of_one_process(tmp_path):
    """In a fresh process (one thread), the workers' report is the single process's, failing records and refused
    inputs included, in the same order; a child process makes forking unsafe."""
    done = subprocess.run([sys.executable, "-c", WORKERS_AGREE, str(ROOT)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["fork_safe_alone"] is True
    assert seen["fork_safe_with_a_child"] is False
    assert seen["workers"] == [3]  # the run with jobs=3 forked three workers; jobs=1 none
    assert seen["records"] == 10  # nine generated and the base record they stack on
    assert seen["failing"] == ["docs/design/generated-00004.md", "docs/design/generated-00007.md"]
    assert len(seen["refused"]) == 1 and "numeric-cpu-00007.json" in seen["refused"][0]
    assert seen["same_report"] and seen["same_refused"]
