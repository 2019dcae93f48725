"""The interpreter without its repeated set-up (`tests/interpreter_speed.py`) gives the kernels' bits unchanged."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parent.parent

# One split launch whose programs call helpers of the kernel's module and of Triton's (`tl.zeros` lives in
# triton.language.standard), then the same call in a fresh interpreter that patches at every helper call.
CALL = """
import torch, kernels
gen = torch.Generator().manual_seed(3)
q = torch.randn(2, 4, 64, generator=gen).to(torch.float16)
k, v = (torch.randn(2, 2, 80, 64, generator=gen).to(torch.float16) for _ in range(2))
out = kernels.attention_decode_splitkv(q, k, v, torch.tensor([7, 80], dtype=torch.int32), num_splits=3)
"""


@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="the kernels run on a GPU here")
def test_a_kernel_gives_the_same_bits_with_and_without_the_repeated_patches(tmp_path):
    from triton.runtime import interpreter

    assert getattr(interpreter, "_design_gates_fast_patch", False), "tests/conftest.py installs it"
    scope = {}
    exec(CALL, scope)
    fresh = tmp_path / "fresh.pt"
    subprocess.run([sys.executable, "-c", CALL + f"torch.save(out, {str(fresh)!r})"], cwd=REPO, check=True,
                   env=dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(REPO)), timeout=300)
    assert torch.equal(scope["out"].view(torch.int16), torch.load(fresh).view(torch.int16))
