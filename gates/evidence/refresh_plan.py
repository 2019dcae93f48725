"""Which evidence artifacts need their producer run again, and why.

Each producer of the configuration (`refresh.producers`) names the artifact it writes.
An artifact is

- `missing` when no file is at its path,
- `unreadable` when the file is no valid artifact (its loader's message says why),
- `stale` when a file it binds in `sources` changed or is gone since it was measured,
  or when it does not bind a file that a record citing it covers,
- `fresh` otherwise.

Staleness is the same rule the gates apply (`artifacts.stale_sources`), so an artifact
this plan calls fresh is one no gate calls stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gates.evidence.artifacts import EvidenceStore
from gates.evidence.source_binding import covered_files
from gates.model.config import Producer, Settings
from gates.model.errors import InputError

MISSING, UNREADABLE, STALE, FRESH = "missing", "unreadable", "stale", "fresh"


@dataclass(frozen=True)
class ArtifactState:
    """The state of one producer's artifact: `status`, the files behind it, and a one-line reason."""

    producer: Producer
    status: str
    changed: tuple[str, ...] = ()
    unbound: tuple[str, ...] = ()
    reason: str = ""
    commit: str | None = None

    @property
    def needs_refresh(self) -> bool:
        return self.status != FRESH

    def files(self) -> tuple[str, ...]:
        """Every file behind the state, for `--files`."""
        return self.changed + self.unbound


@dataclass(frozen=True)
class Citation:
    """A record that cites an artifact path, with the globs it covers."""

    record: str
    covers: tuple[str, ...]


def artifact_states(settings: Settings, repo_root, citations: dict[str, list[Citation]] | None = None,
                    store: EvidenceStore | None = None) -> list[ArtifactState]:
    """The state of every producer's artifact, in configuration order.

    `citations` maps an artifact path to the records citing it: a file one of them covers
    that the artifact does not bind makes it stale too.
    """
    store = store or EvidenceStore(repo_root)
    citations = citations or {}
    return [_state(producer, store, Path(repo_root), citations.get(producer.path, []))
            for producer in settings.refresh.producers.values()]


def _state(producer: Producer, store: EvidenceStore, root: Path, cited_by: list[Citation]) -> ArtifactState:
    if not (root / producer.path).exists():
        return ArtifactState(producer, MISSING, reason=f"no artifact at {producer.path}")
    try:
        artifact = store.get(producer.path)
    except InputError as exc:
        return ArtifactState(producer, UNREADABLE, reason=f"{exc.path}:{exc.line}: {exc.message}")
    commit = artifact.data.get("commit")
    changed = tuple(store.stale_sources(artifact))
    unbound = tuple(sorted({path for citation in cited_by for path in covered_files(citation.covers, root)}
                           - set(artifact.sources)))
    if not changed and not unbound:
        return ArtifactState(producer, FRESH, commit=commit)
    parts = []
    if changed:
        parts.append(f"{count(len(changed), 'bound file')} changed since it was measured"
                     + (f" at {commit[:12]}" if isinstance(commit, str) and commit else ""))
    if unbound:
        parts.append(f"{count(len(unbound), 'covered file')} not bound")
    return ArtifactState(producer, STALE, changed, unbound, "; ".join(parts), commit)


def count(n: int, noun: str) -> str:
    """`1 bound file`, `3 bound files`."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def shown_files(paths, limit: int = 3) -> str:
    """`a.py, b.py, c.py and 4 more` for a message that stays one line."""
    paths = list(paths)
    head = ", ".join(paths[:limit])
    return head + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
