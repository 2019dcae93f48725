"""Write evidence artifacts in the format of ARCHITECTURE.md (schema_version 1).

The writer binds an artifact to what it measured, never to a fixed list: `sources`
holds the SHA-256 of every existing file the governing record covers plus every
module of this repository the measuring process imported (`sys.modules` when the
artifact is built), computed by `gates.evidence.source_binding`. The covers globs come from
`DESIGN_GATES_COVERS` (a JSON list; gate-check sets it when it runs a suite), else
from the `covers` of every record under docs/design/. `command` is the real command
line of the process (`sys.orig_argv`) and `commit` the checkout's HEAD.

On a trusted runner, `write_artifact` signs the artifact when a signing key is set in
the environment (`DESIGN_GATES_SIGNING_KEY` or `DESIGN_GATES_SIGNING_KEY_FILE`, with
`DESIGN_GATES_SIGNING_KEY_ID`; see gates.evidence.attestation).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from gates.evidence.source_binding import source_tokens
from gates.evidence.evidence_writer import artifact_id_for, write_artifact  # noqa: F401 - the writer every suite here uses
from gates.evidence.source_binding import bound_sources

from .environment import environment

REPO_ROOT = Path(__file__).resolve().parent.parent
KINDS = ("profile", "numeric", "bitwise", "benchmark", "capture", "e2e")
COVERS_ENV = "DESIGN_GATES_COVERS"
COMMIT_ENV = "DESIGN_GATES_COMMIT"
RECORD_DIR = "docs/design"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def covers_from_environment(repo_root: Path = REPO_ROOT) -> list[str]:
    """The covers globs to bind: `DESIGN_GATES_COVERS` (JSON list), else every record's `covers`."""
    named = os.environ.get(COVERS_ENV)
    if named:
        try:
            covers = json.loads(named)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{COVERS_ENV} must be a JSON list of globs: {exc}") from None
        if not isinstance(covers, list) or not all(isinstance(c, str) for c in covers):
            raise ValueError(f"{COVERS_ENV} must be a JSON list of globs, got {named!r}")
        return covers
    return records_covers(repo_root)


def records_covers(repo_root: Path = REPO_ROOT) -> list[str]:
    """The union of the `covers` globs of the records under docs/design/ (unreadable records skipped)."""
    from gates.model.errors import InputError
    from gates.model.record import load_record

    covers: list[str] = []
    for path in sorted((Path(repo_root) / RECORD_DIR).glob("*.md")):
        try:
            record = load_record(path, repo_root)
        except InputError:
            continue
        for glob in record.get("covers", default=[]) or []:
            if isinstance(glob, str) and glob not in covers:
                covers.append(glob)
    return covers


def source_hashes(covers=None, repo_root: Path = REPO_ROOT, modules=None) -> dict[str, str]:
    """SHA-256 of the covered files and the imported repository modules, by repository-relative POSIX path."""
    return bound_sources(repo_root, covers_from_environment(repo_root) if covers is None else covers, modules)


def command_line() -> str:
    """The command line of this process, as run."""
    return shlex.join(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])


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


def build_artifact(*, artifact_id: str, kind: str, results: dict, fixtures: dict[str, str], command: str | None = None,
                   sources=None, covers=None) -> dict:
    """The artifact object. `command` defaults to this process's command line and `sources`
    to the covered files plus the repository modules imported so far."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    bound = source_hashes(covers) if sources is None else dict(sources)
    return {
        "schema_version": 1,
        "id": artifact_id,
        "kind": kind,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command or command_line(),
        "environment": environment(),
        "commit": git_commit(),
        "sources": bound,
        "source_tokens": source_tokens(REPO_ROOT, bound),  # a comment-only edit leaves the artifact fresh
        "fixtures": dict(sorted(fixtures.items())),
        "results": results,
    }
