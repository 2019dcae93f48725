"""Bitwise anchors: byte equality of two outputs, with a readable account of the first difference."""

from __future__ import annotations

import torch

from .fixtures import tensor_bytes

ANCHORS = {
    "A1-split1-equals-single-pass": "split(num_splits=1) == single-pass, contiguous and paged",
    "A2-paged-equals-contiguous": "paged == contiguous, single pass and every num_splits",
    "A3-request-alone-equals-in-batch": "one request alone == the same request inside its batch",
    "A4-run-to-run": "two identical calls give the same bytes",
    "A5-graph-replay-equals-eager": "CUDA-graph replay == eager launch (CUDA only)",
}


def bytes_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when both tensors have the same dtype, shape and bytes (NaN payloads included)."""
    return a.dtype == b.dtype and a.shape == b.shape and tensor_bytes(a) == tensor_bytes(b)


def describe_difference(a: torch.Tensor, b: torch.Tensor) -> str:
    """One line: how many elements differ and where the first one is."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"dtype/shape differ: {a.dtype} {tuple(a.shape)} vs {b.dtype} {tuple(b.shape)}"
    ia = a.detach().cpu().contiguous()
    ib = b.detach().cpu().contiguous()
    if ia.dtype in (torch.bfloat16, torch.float16):
        ia, ib = ia.view(torch.int16), ib.view(torch.int16)
    differ = ia != ib
    count = int(differ.sum())
    if count == 0:
        return "identical"
    first = tuple(int(i) for i in differ.nonzero()[0])
    return f"{count} of {a.numel()} elements differ; first at {first}: {a.detach().cpu()[first].item()!r} vs {b.detach().cpu()[first].item()!r}"
