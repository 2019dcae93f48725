"""Shared test setup. Without a GPU, the kernels run through the Triton interpreter, which
must be switched on before Triton is first imported."""

import os
from dataclasses import replace

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
