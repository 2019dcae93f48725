"""Write evidence artifacts in the format of ARCHITECTURE.md (schema_version 1)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from .environment import environment

REPO_ROOT = Path(__file__).resolve().parent.parent
MEASURED_SOURCES = ("kernels/__init__.py", "kernels/decode_attention/*.py", "validation/*.py", "validation/suites/*.py")
KINDS = ("profile", "numeric", "bitwise", "benchmark", "capture", "e2e")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_hashes(patterns=MEASURED_SOURCES, repo_root: Path = REPO_ROOT) -> dict[str, str]:
    """SHA-256 of every file matching `patterns`, keyed by repository-relative POSIX path."""
    hashes = {}
    for pattern in patterns:
        for path in sorted(repo_root.glob(pattern)):
            if path.is_file():
                hashes[path.relative_to(repo_root).as_posix()] = file_sha256(path)
    return dict(sorted(hashes.items()))


COMMIT_ENV = "DESIGN_GATES_COMMIT"


def git_commit(repo_root: Path = REPO_ROOT) -> str | None:
    """The commit to record: DESIGN_GATES_COMMIT when set (a copied tree on a GPU machine
    may carry stale or no git metadata), else HEAD of the checkout, else None."""
    named = os.environ.get(COMMIT_ENV)
    if named:
        return named
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo_root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) == 40 else None


def build_artifact(*, artifact_id: str, kind: str, command: str, results: dict, fixtures: dict[str, str], sources=None) -> dict:
    """The artifact object; `sources` defaults to the kernel and validation sources."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return {
        "schema_version": 1,
        "id": artifact_id,
        "kind": kind,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
        "environment": environment(),
        "commit": git_commit(),
        "sources": source_hashes() if sources is None else dict(sources),
        "fixtures": dict(sorted(fixtures.items())),
        "results": results,
    }


def write_artifact(path, artifact: dict) -> Path:
    """Write `artifact` as indented JSON; the id defaults to the file stem."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(artifact, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path


def artifact_id_for(path) -> str:
    return Path(path).stem.lower()
