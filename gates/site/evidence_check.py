"""Does each evidence file a record pins still hash to its SHA-256?"""

from __future__ import annotations

from pathlib import Path

from gates.evidence.artifacts import file_sha256
from gates.model.paths import resolve_inside

VERIFIED, MISMATCH, MISSING = "verified", "mismatch", "missing"


def check_evidence(entries: list, repo_root: Path) -> dict[str, str]:
    """Evidence path -> ``"verified"`` (the file hashes to the pinned SHA-256), ``"mismatch"`` or ``"missing"``.

    A path that leaves the repository, or names no regular file, is ``"missing"``.
    """
    checks = {}
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("path"):
            continue
        rel_path = str(entry["path"])
        target = resolve_inside(repo_root, rel_path)
        if target is None or not target.is_file():
            checks[rel_path] = MISSING
            continue
        pinned = str(entry.get("sha256", "")).lower()
        checks[rel_path] = VERIFIED if file_sha256(target) == pinned else MISMATCH
    return checks
