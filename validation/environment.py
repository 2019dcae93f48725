"""Where the kernels run: the backend key that keys fingerprints, and the environment record."""

from __future__ import annotations

import os
import platform
import subprocess

import torch


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def device() -> str:
    """The device the suites run on: "cuda" on a GPU machine, "cpu" under the interpreter."""
    return "cpu" if interpreting() or not torch.cuda.is_available() else "cuda"


def cpu_simd_tag() -> str:
    """The widest SIMD level numpy dispatches to here (avx512_skx, avx2, asimd, ... or baseline).

    The interpreter computes with numpy, whose float32 kernels give different last bits
    at different SIMD levels, so interpreter fingerprints are keyed by it.
    """
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        from numpy.core._multiarray_umath import __cpu_features__ as features
    for name in ("AVX512_SKX", "AVX2", "SSE42", "ASIMD", "VSX2"):
        if features.get(name):
            return name.lower()
    return "baseline"


def backend_key() -> str:
    """`interpreter-cpu-<machine>-<simd>`, or `cuda-sm<cc>-triton<major.minor>` (bits change with the compiler)."""
    if device() == "cpu":
        return f"interpreter-cpu-{platform.machine().lower()}-{cpu_simd_tag()}"
    import triton

    major, minor = torch.cuda.get_device_capability()
    version = ".".join(triton.__version__.split(".")[:2])
    return f"cuda-sm{major}{minor}-triton{version}"


def environment() -> dict:
    """The `environment` object of an evidence artifact."""
    import numpy
    import triton

    env = {
        "backend": "interpreter-cpu" if device() == "cpu" else "cuda",
        "backend_key": backend_key(),
        "device": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }
    if device() == "cuda":
        env["device"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        env["driver"] = _driver_version()
    return env


def _driver_version() -> str | None:
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else None
