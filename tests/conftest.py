"""Shared test setup. Without a GPU, the kernels run through the Triton interpreter, which
must be switched on before Triton is first imported."""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import interpreter_speed
from suite_processes import SUITES_DIR_ENV, attach_suites, discard_suites, start_suites, suites_folder

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
if os.environ.get("TRITON_INTERPRET") == "1":
    interpreter_speed.install()

SUITE_RUNS = pytest.StashKey[dict]()


SUITES_TEST_FILE = "tests/test_validation_suites.py"

# Under `--dist loadfile` each file runs whole on one worker, in collection order. The files that
# take longest on two cores go first, so that no worker is still in a long file while the other idles.
LONGEST_FILES_FIRST = ("test_kernels_semantics.py", "test_evidence_plugin.py", "test_site_build.py",
                       "test_series_approvals.py", "test_series_scenarios.py", "test_adoption.py",
                       "test_bench_variant.py", "test_site_browser.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: place for place, name in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file keeps its order


def _xdist_controller(config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def _may_select_suites_file(config) -> bool:
    """Whether the command line can select the suites' test file (before collection, by its arguments)."""
    if config.option.keyword or config.option.markexpr:
        return False  # the workers start the suites themselves if a selected test needs them
    root = Path(str(config.rootpath))
    target = (root / SUITES_TEST_FILE).resolve()
    for arg in config.args:
        path = (Path(str(config.invocation_params.dir)) / arg.split("::")[0]).resolve()
        if path == target or path in target.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """Spread over workers: start the suites once, here, before the workers start, and tell them where."""
    config = session.config
    if _xdist_controller(config) and _may_select_suites_file(config):
        runs = config.stash[SUITE_RUNS] = start_suites()
        os.environ[SUITES_DIR_ENV] = str(suites_folder(runs))


def pytest_collection_finish(session):
    """Start the numeric and bitwise suites now if their test file is among the selected tests."""
    config = session.config
    if _xdist_controller(config) or SUITE_RUNS in config.stash:
        return
    if not any(item.nodeid.startswith(SUITES_TEST_FILE) for item in session.items):
        return
    if hasattr(config, "workerinput"):  # a worker: attach to the controller's suites, else start them when needed
        if os.environ.get(SUITES_DIR_ENV):
            config.stash[SUITE_RUNS] = attach_suites(Path(os.environ[SUITES_DIR_ENV]))
        return
    config.stash[SUITE_RUNS] = start_suites()


def pytest_unconfigure(config):
    discard_suites(config.stash.get(SUITE_RUNS, {}))


@pytest.fixture(scope="session")
def suite_runs(request):
    """suite name -> SuiteRun (tests/suite_processes.py), started at session start or collection."""
    runs = request.config.stash.get(SUITE_RUNS, None)
    if runs is None:  # selected in a way collection did not see (e.g. by keyword at run time)
        runs = request.config.stash[SUITE_RUNS] = start_suites()
    return runs


@pytest.fixture
def launch_config(monkeypatch):
    """`launch_config(field=value, ...)`: the kernels run with those LaunchConfig fields, the
    rest as `launch_config.py` chooses them, until the test ends. Each call starts again
    from the project's own config."""
    from kernels.decode_attention import api

    original = api.partial_launch_config

    def set_fields(**fields):
        monkeypatch.setattr(api, "partial_launch_config",
                            lambda *args, **kwargs: replace(original(*args, **kwargs), **fields))

    return set_fields


@pytest.fixture
def examples_repo(tmp_path):
    """A writable copy of tests/examples (records, evidence, the example package) as a repository root."""
    root = tmp_path / "repo"
    shutil.copytree(Path(__file__).resolve().parent / "examples", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".git").mkdir()
    return root
