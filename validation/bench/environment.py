"""What an evidence artifact records about where and on what it was measured."""

from __future__ import annotations

import datetime
import platform
import subprocess
from pathlib import Path

from validation import artifacts
from validation.artifacts import git_commit  # noqa: F401  (re-exported for the bench modules)

REPO_ROOT = Path(__file__).resolve().parents[2]
def source_hashes(root: Path = REPO_ROOT) -> dict[str, str]:
    """SHA-256 of the files the records cover and the repository modules this process imported."""
    return artifacts.source_hashes(repo_root=root)


def source_tokens(sources: dict[str, str], root: Path = REPO_ROOT) -> dict:
    """The token digests of the Python files among `sources` (a comment-only edit leaves them fresh)."""
    from gates.evidence.source_binding import source_tokens as tokens

    return tokens(root, sources)


def _driver() -> str | None:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True, timeout=20).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def environment() -> dict:
    import torch
    import triton

    env = {"backend": "cuda" if torch.cuda.is_available() else "cpu", "torch": torch.__version__,
           "triton": triton.__version__, "python": platform.python_version()}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update({"device": props.name, "sm_count": props.multi_processor_count,
                    "compute_capability": f"{props.major}.{props.minor}", "driver": _driver(),
                    "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()})
    return env


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
