"""Session plumbing of the G3/G4 suites: CPU runs go through the Triton interpreter, with
DESIGN_GATES_EVIDENCE_OUT set the session writes its evidence artifact at the end,
`--suite-tier ci` runs each case in one dtype (validation/suites/tiers.py), and `--pull DIR`
makes the process one of several that share the suite case by case
(validation/suites/case_queue.py)."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from gates.evidence.collection_record import collection_of, track_collection  # noqa: E402
from gates.evidence.read_files import record_file_reads  # noqa: E402
from validation.artifacts import REPO_ROOT, source_hashes  # noqa: E402
from validation.evidence import EVIDENCE_KEY, EvidenceRecorder, write_session_artifacts  # noqa: E402
from validation.shapes import CPU_CASES, GPU_CASES, MODEL_CASES  # noqa: E402
from validation.suite_shards import PART_ENV, write_part  # noqa: E402
from validation.suites.case_queue import ORDERS, CaseQueue  # noqa: E402
from validation.suites.tiers import TIERS, parse_shard, selected, shard_of  # noqa: E402

COLLECTED_IDS = pytest.StashKey[list]()


def pytest_addoption(parser):
    parser.addoption("--suite-tier", choices=TIERS, default="full",
                     help="full: every case in every dtype (evidence runs); ci: each case in one dtype")
    parser.addoption("--shard", default=None, metavar="K/N",
                     help="run only the K-th of N shards, each case whole in one shard (to compile kernels in "
                          "parallel processes before an evidence run); a sharded run writes no evidence")
    parser.addoption("--pull", default=None, metavar="DIR",
                     help="share the suite with other processes given the same DIR: run only the cases this "
                          "process claims first (python -m validation.run_suite --jobs N); writes no evidence")
    parser.addoption("--pull-order", choices=ORDERS, default="forward",
                     help="walk the cases from the first (forward) or the last (reverse) when pulling")


def pytest_configure(config):
    config.stash[EVIDENCE_KEY] = EvidenceRecorder()
    track_collection(config)
    if config.getoption("--shard") is not None:
        try:
            parse_shard(config.getoption("--shard"))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    if config.getoption("--pull") is not None:
        if config.getoption("--shard") is not None:
            raise pytest.UsageError("--pull and --shard split the suite in two different ways: give one")
        config.pluginmanager.register(CaseQueue(config.getoption("--pull"), config.getoption("--pull-order")),
                                      "case-queue")


def pytest_sessionstart(session):
    if os.environ.get(PART_ENV):  # a shard binds the files it reads, as a whole run does through the evidence plugin
        record_file_reads(active=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    yield
    if os.environ.get(PART_ENV):
        record_file_reads(active=False)


def pytest_collection_modifyitems(config, items):
    config.stash[COLLECTED_IDS] = [item.nodeid for item in items]
    tier = config.getoption("--suite-tier")
    shard = config.getoption("--shard")
    if tier == "full" and shard is None:
        return
    index, count = parse_shard(shard) if shard is not None else (0, 1)
    cases = CPU_CASES + GPU_CASES + MODEL_CASES
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        keep = selected(params, cases, tier) and shard_of(params, count) == index
        (kept if keep else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def evidence(request) -> EvidenceRecorder:
    return request.config.stash[EVIDENCE_KEY]


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("DESIGN_GATES_EVIDENCE_OUT")
    if session.config.getoption("--shard") is not None or session.config.getoption("--pull") is not None:
        out = None  # a shard measured part of the suite: it is no evidence of the suite
    recorder = session.config.stash.get(EVIDENCE_KEY, None)
    part = os.environ.get(PART_ENV)
    if part and recorder is not None:  # one shard of `run_suite --jobs N`: hand what it measured to the merge
        write_part(part, recorder, collection_of(session.config, REPO_ROOT),
                   session.config.stash.get(COLLECTED_IDS, []), [item.nodeid for item in session.items],
                   session.testsfailed > 0 or exitstatus not in (0, 5), source_hashes())
    if out and recorder is not None:
        failed = session.testsfailed > 0 or exitstatus not in (0, 5)
        collection = collection_of(session.config, REPO_ROOT)
        for path in write_session_artifacts(recorder, out, session_failed=failed, collection=collection):
            print(f"\nevidence artifact written: {path}")
