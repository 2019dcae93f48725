"""Shared test setup. Without a GPU, the kernels run through the Triton interpreter, which
must be switched on before Triton is first imported."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
