"""Evidence artifacts: load (schema-checked), pin (SHA-256 of the file) and staleness.

An artifact is bound to the source files it measured by their SHA-256. When a file
in `sources` no longer hashes the same in the working tree (or is gone), the
artifact is stale and `stale_sources` names the file. An artifact is opened only
when it is a regular file: a FIFO, a device, a folder or a symlink loop named as
evidence is refused (`NotRegularFileError`, exit 2), never waited on.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from gates.evidence.source_binding import (
    comment_blind_digest, import_shadows, outside_shadows, recorded_token_digests, shadowing_files,
)
from gates.model.errors import InputError
from gates.model.paths import path_problem, resolve_inside
from gates.model.schemas import validate

MAX_ARTIFACT_BYTES = 16 * 1024 * 1024
KINDS = ("profile", "numeric", "bitwise", "benchmark", "capture", "e2e")


@dataclass(frozen=True)
class EvidenceArtifact:
    """A loaded, schema-valid artifact. `rel_path` is repository-relative."""

    rel_path: str
    data: dict
    file_sha256: str

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def kind(self) -> str:
        return self.data["kind"]

    @property
    def sources(self) -> dict:
        return self.data["sources"]

    @property
    def fixtures(self) -> dict:
        return self.data["fixtures"]

    @property
    def results(self) -> dict:
        return self.data["results"]

    @property
    def environment(self) -> dict:
        return self.data["environment"]

    @property
    def attestation(self) -> dict | None:
        return self.data.get("attestation")


class NotRegularFileError(InputError):
    """An evidence path that names something other than a regular file (FIFO, device, folder, loop)."""


def read_regular_file(path, label: str, limit: int = MAX_ARTIFACT_BYTES) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes.

    Opened without blocking and checked on the open descriptor, so a FIFO or a
    device is refused at once; `label` names the file in the `InputError`.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputError(label, 1, "artifact file does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFileError(label, 1, "artifact path is a symlink loop, not a regular file") from None
        raise InputError(label, 1, f"cannot read artifact: {exc.strerror or exc}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(label, 1, f"artifact path is {_file_type(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise InputError(label, 1, f"artifact is over the {limit}-byte limit")
        chunks, total = [], 0
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise InputError(label, 1, f"artifact is over the {limit}-byte limit")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(label, 1, f"cannot read artifact: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _no_duplicates(rel_path: str):
    def hook(pairs):
        result = {}
        for key, value in pairs:
            if key in result:
                raise InputError(rel_path, 1, f"duplicate JSON key {key!r}")
            result[key] = value
        return result

    return hook


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _line_of_key(text: str, path: tuple) -> int:
    """Best-effort line of the last string key of `path` in JSON `text`."""
    for key in reversed(path):
        if isinstance(key, str):
            index = text.find(json.dumps(key))
            if index >= 0:
                return text.count("\n", 0, index) + 1
    return 1


def parse_artifact(raw: bytes, rel_path: str) -> tuple[dict, str]:
    """Decode and schema-check artifact bytes; returns (data, text). Raises `InputError`."""
    if len(raw) > MAX_ARTIFACT_BYTES:
        raise InputError(rel_path, 1, f"artifact is over the {MAX_ARTIFACT_BYTES}-byte limit")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(rel_path, raw.count(b"\n", 0, exc.start) + 1, "artifact is not valid UTF-8") from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(rel_path), parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(rel_path, exc.lineno, f"invalid JSON: {exc.msg}", col=exc.colno) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(rel_path, 1, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(rel_path, 1, "an evidence artifact is a JSON object")
    errors = validate("evidence", data)
    if errors:
        first = errors[0]
        raise InputError(rel_path, _line_of_key(text, first.path), f"artifact does not match the evidence schema: {first.message}")
    for source in data["sources"]:
        problem = path_problem(source)
        if problem:
            raise InputError(rel_path, _line_of_key(text, (source,)), f"sources: {problem}")
    return data, text


def load_artifact(rel_path: str, repo_root) -> EvidenceArtifact:
    """Load the artifact at repository-relative `rel_path`. Raises `InputError`."""
    problem = path_problem(rel_path)
    if problem:
        raise InputError(rel_path, 1, problem)
    resolved = resolve_inside(Path(repo_root), rel_path)
    if resolved is None:
        raise InputError(rel_path, 1, "artifact lies outside the repository (after following symlinks)")
    raw = read_regular_file(resolved, rel_path)
    data, _ = parse_artifact(raw, rel_path)
    return EvidenceArtifact(rel_path, data, sha256_bytes(raw))


def stale_sources(artifact: EvidenceArtifact, repo_root, hasher=None, token_hasher=None) -> list[str]:
    """Source files whose working tree differs from what the artifact measured (or that are gone): the
    SHA-256 of their bytes differs, and, for a Python file the artifact also binds by its token stream
    (`source_tokens`, scheme python-tokens/2), so does that (a comment-only edit keeps it fresh). A module
    that Python would no longer import from its file counts as changed too: a package or extension of its name
    beside it (`shadowing_files`), or one in a folder earlier on the run's import path (`import_shadows`)."""
    hasher = hasher or _hash_in_repo
    token_hasher = token_hasher or _token_hash_in_repo
    tokens = recorded_token_digests(artifact.data)
    changed = []
    for source, expected in sorted(artifact.sources.items()):
        same = hasher(Path(repo_root), source) == expected or \
            source in tokens and token_hasher(Path(repo_root), source) == tokens[source]
        if not same or shadowing_files(Path(repo_root), source):
            changed.append(source)
    shadowed = set(import_shadows(artifact.data, repo_root))
    shadowed |= {f"{found} (new since the measurement, imported as {name} in place of the module the run used)"
                 for found, name in outside_shadows(artifact.data, repo_root).items()}
    return sorted(set(changed) | shadowed)


def verify_sha256(artifact: EvidenceArtifact, expected: str) -> bool:
    """Whether the artifact file is the one a record pinned with `expected`."""
    return isinstance(expected, str) and artifact.file_sha256 == expected.lower()


def _token_hash_in_repo(repo_root: Path, rel_path: str) -> str | None:
    resolved = resolve_inside(repo_root, rel_path)
    if resolved is None:
        return None
    try:
        return comment_blind_digest(read_regular_file(resolved, rel_path, limit=1 << 30))
    except InputError:
        return None


def _hash_in_repo(repo_root: Path, rel_path: str) -> str | None:
    resolved = resolve_inside(repo_root, rel_path)
    if resolved is None:
        return None
    try:
        return sha256_bytes(read_regular_file(resolved, rel_path, limit=1 << 30))
    except InputError:
        return None


class EvidenceStore:
    """Loads artifacts and hashes sources once per run; errors are kept as values.

    `get(rel_path)` returns an `EvidenceArtifact` or raises the `InputError` it met
    (again on every call, so each gate relying on a bad artifact reports it).
    `refused` lists the paths that were no regular file, for the run to end with exit 2.
    """

    def __init__(self, repo_root):
        self.repo_root = Path(repo_root).resolve()
        self._artifacts: dict[str, object] = {}
        self._hashes: dict[str, str | None] = {}
        self.refused: list[InputError] = []

    def get(self, rel_path: str) -> EvidenceArtifact:
        if rel_path not in self._artifacts:
            try:
                self._artifacts[rel_path] = load_artifact(rel_path, self.repo_root)
            except InputError as exc:
                self._artifacts[rel_path] = exc
                if isinstance(exc, NotRegularFileError):
                    self.refused.append(exc)
        value = self._artifacts[rel_path]
        if isinstance(value, InputError):
            raise value
        return value

    def source_hash(self, rel_path: str) -> str | None:
        if rel_path not in self._hashes:
            self._hashes[rel_path] = _hash_in_repo(self.repo_root, rel_path)
        return self._hashes[rel_path]

    def stale_sources(self, artifact: EvidenceArtifact) -> list[str]:
        return stale_sources(artifact, self.repo_root, hasher=lambda _root, rel: self.source_hash(rel))
