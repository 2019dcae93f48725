"""Whether an evidence artifact's `environment` describes a run on a GPU, consistently.

An artifact states where it was produced. A gate that needs a device run (graph
capture, device fingerprints) accepts the environment only when every part of it
agrees: a device backend (`cuda` or `rocm`, never `cpu` or an `interpreter-*`
backend), a device name that is not a host processor, a torch build that is not
`+cpu` (nor built for the other vendor), and a Triton version. One contradiction
is enough to refuse it: `torch 2.13.0+cpu` next to `NVIDIA H200` was not run on
that H200.
"""

from __future__ import annotations

import re

DEVICE_BACKENDS = ("cuda", "rocm")
_HOST_DEVICE = re.compile(
    r"\b(cpu|interpreter|x86|x86_64|amd64|i[3-6]86|aarch64|arm64|armv\dl?|ppc64(le)?|s390x|riscv64|"
    r"xeon|epyc|ryzen|threadripper|core\(tm\)|neoverse|graviton|apple m\d)\b",
    re.IGNORECASE,
)
_TORCH_BUILD = {"cuda": ("cu",), "rocm": ("rocm",)}


def device_environment_problems(environment) -> list[str]:
    """Why `environment` (an artifact's `environment` object) is not a consistent GPU run;
    empty when it is."""
    if not isinstance(environment, dict):
        return ["the artifact states no environment"]
    problems = []
    backend = _text(environment.get("backend")).lower()
    if backend not in DEVICE_BACKENDS:
        problems.append(f"backend {backend or 'unknown'!r} is not a device backend ({', '.join(DEVICE_BACKENDS)})")
    backend_key = _text(environment.get("backend_key")).lower()
    if backend_key and backend in DEVICE_BACKENDS and not backend_key.startswith(backend):
        problems.append(f"backend_key {backend_key!r} contradicts backend {backend!r}")
    device = _text(environment.get("device"))
    if not device:
        problems.append("no device name")
    elif _HOST_DEVICE.search(device):
        problems.append(f"device {device!r} is a host processor, not a GPU")
    torch = _text(environment.get("torch"))
    local = torch.partition("+")[2].lower()
    if not torch:
        problems.append("no torch version")
    elif local == "cpu" or local.startswith("cpu"):
        problems.append(f"torch {torch} is a CPU-only build")
    elif local and backend in _TORCH_BUILD and not local.startswith(_TORCH_BUILD[backend]):
        problems.append(f"torch {torch} is not a {backend} build")
    if not _text(environment.get("triton")):
        problems.append("no triton version")
    return problems


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""
