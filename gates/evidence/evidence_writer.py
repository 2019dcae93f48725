"""Build and write an evidence artifact for the repository a test session ran in.

Used by the pytest plugin (`gates.evidence.evidence_plugin`) for any repository's suite, not
only this one's. The artifact is bound to what ran, never to a fixed list:

- `sources`: SHA-256 of every file the governing record covers (the globs in
  `DESIGN_GATES_COVERS`, a JSON list, else the `covers` of every record under
  `docs/design/`) and of every Python file of the repository the session imported;
  paths are relative to the repository's top level (`git rev-parse --show-toplevel`),
  or to pytest's rootdir outside a git checkout;
- `source_tokens`: the Python files among them once more, by their token stream without comments
  (`gates.evidence.source_binding.comment_blind_digest`), so a comment-only edit leaves the
  evidence fresh;
- `commit`: the checkout's HEAD (`DESIGN_GATES_COMMIT` when set: a copied tree on a
  device machine may carry stale or no git metadata);
- `command`: this process's real command line;
- `environment`: python, and torch, triton and the device when the session used them.

A covers glob that matches no file is an error of the artifact, not an empty binding.
`write_artifact` signs the artifact when a runner's signing key is set in the
environment (see `gates.evidence.attestation`).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

from gates.evidence.attestation import sign, signing_key_from_environment
from gates.evidence.source_binding import bound_sources, covered_files, source_imports, source_tokens

COVERS_ENV = "DESIGN_GATES_COVERS"
COMMIT_ENV = "DESIGN_GATES_COMMIT"
ID_ENV = "DESIGN_GATES_EVIDENCE_ID"
RECORD_DIR = ("docs", "design")


def host_checkout(start) -> tuple[Path, str | None]:
    """(repository root, commit) for a session started in `start`: the git top level and
    HEAD, else `start` itself and no commit."""
    from gates.history.git_repo import checkout_of

    found = checkout_of(start)
    root, commit = found if found is not None else (Path(start).resolve(), None)
    return root, os.environ.get(COMMIT_ENV) or commit


def covers_to_bind(root: Path) -> tuple[list[str], list[str]]:
    """(covers globs, errors): `DESIGN_GATES_COVERS` when set, else every record's `covers`."""
    named = os.environ.get(COVERS_ENV)
    if named:
        try:
            covers = json.loads(named)
        except json.JSONDecodeError as exc:
            return [], [f"{COVERS_ENV} is not JSON ({exc.msg}); it must be a JSON list of globs"]
        if not isinstance(covers, list) or not all(isinstance(c, str) and c for c in covers):
            return [], [f"{COVERS_ENV} must be a JSON list of non-empty glob strings, got {named!r}"]
        return covers, []
    return records_covers(root), []


def records_covers(root: Path) -> list[str]:
    """The union of the `covers` of the records under docs/design/ (unreadable records skipped)."""
    from gates.model.errors import InputError
    from gates.model.record import load_record

    covers: list[str] = []
    for path in sorted(root.joinpath(*RECORD_DIR).glob("*.md")):
        try:
            record = load_record(path, root)
        except InputError:
            continue
        covers += [g for g in record.get("covers", default=[]) or [] if isinstance(g, str) and g not in covers]
    return covers


def binding(root: Path, covers: list[str]) -> tuple[dict[str, str], list[str]]:
    """(sources, errors): covered files and imported repository modules; a glob matching nothing is an error."""
    errors = [f"covers glob {glob!r} matches no file under {root}" for glob in covers
              if not covered_files([glob], root)]
    return bound_sources(root, covers), errors


def command_line() -> str:
    """This process's command line as it ran; an inline `-c` program is shown as <program>."""
    argv = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
    if "-c" in argv[:-1]:
        argv[argv.index("-c") + 1] = "<program>"
    return shlex.join(argv)


def environment() -> dict:
    """The `environment` of the artifact: where the session's tensors were computed."""
    env = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    backend, device = "cpu", platform.processor() or platform.machine() or "cpu"
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        env["torch"] = str(torch.__version__)
        try:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                backend = "rocm" if getattr(torch.version, "hip", None) else "cuda"
                device = torch.cuda.get_device_name()
                env["cuda"] = torch.version.cuda
        except Exception:  # noqa: BLE001 - a broken CUDA setup still leaves a CPU session to describe
            pass
    triton = sys.modules.get("triton")
    if triton is not None and hasattr(triton, "__version__"):
        env["triton"] = str(triton.__version__)
        if backend == "cpu" and os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
            backend = "interpreter-cpu"
    env["backend"], env["device"] = backend, device
    return env


def artifact_id_for(path) -> str:
    """`DESIGN_GATES_EVIDENCE_ID`, else the output file's stem in the artifact id alphabet."""
    named = os.environ.get(ID_ENV)
    if named:
        return named
    stem = re.sub(r"[^a-z0-9._-]+", "-", Path(path).stem.lower()).lstrip("._-")
    return stem[:100] or "evidence"


def build_artifact(*, kind: str, artifact_id: str, results: dict, commit: str | None,
                   sources: dict[str, str], env: dict, command: str | None = None, root=None) -> dict:
    """The artifact; with `root`, the Python sources are bound by their token stream as well (`source_tokens`)."""
    artifact = {
        "schema_version": 1,
        "id": artifact_id,
        "kind": kind,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command or command_line(),
        "environment": env,
        "commit": commit,
        "sources": dict(sorted(sources.items())),
        "fixtures": {},
        "results": results,
    }
    if root is not None:
        artifact["source_tokens"] = source_tokens(root, sources)
        artifact["source_imports"] = source_imports(root, sources)
    return artifact


def write_artifact(path, artifact: dict) -> Path:
    """Write `artifact` as indented JSON, signed when the runner's signing key is set."""
    signing = signing_key_from_environment()
    if signing is not None:
        artifact = sign(artifact, *signing)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(artifact, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
