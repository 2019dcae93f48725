"""Shared test setup. Without a GPU, the kernels run through the Triton interpreter, which
must be switched on before Triton is first imported."""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


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
