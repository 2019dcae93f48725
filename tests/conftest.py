"""Shared test setup. Without a GPU, the kernels run through the Triton interpreter, which
must be switched on before Triton is first imported."""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from suite_processes import start_suites

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

SUITE_RUNS = pytest.StashKey[dict]()


def pytest_collection_finish(session):
    """Start the numeric and bitwise suites now if their test file is among the selected tests."""
    if any(item.nodeid.startswith("tests/test_validation_suites.py") for item in session.items):
        session.config.stash[SUITE_RUNS] = start_suites()


def pytest_unconfigure(config):
    for run in config.stash.get(SUITE_RUNS, {}).values():
        run.stop()


@pytest.fixture(scope="session")
def suite_runs(request):
    """suite name -> SuiteRun (tests/suite_processes.py), started at collection."""
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
