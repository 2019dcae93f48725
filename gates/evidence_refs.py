"""How a record refers to its evidence: declared entries, citations, and checked loads."""

from __future__ import annotations

from dataclasses import dataclass

from gates.context import GateContext
from gates.errors import InputError
from gates.evidence import EvidenceArtifact, verify_sha256
from gates.findings import Finding
from gates.record import Record


@dataclass(frozen=True)
class DeclaredEvidence:
    index: int
    id: str
    path: str
    sha256: str
    kind: str

    @property
    def keys(self) -> tuple:
        return ("evidence", self.index)


def declared_evidence(record: Record) -> list[DeclaredEvidence]:
    entries = []
    for index, item in enumerate(record.get("evidence", default=[]) or []):
        if isinstance(item, dict):
            entries.append(DeclaredEvidence(index, str(item.get("id")), str(item.get("path")), str(item.get("sha256")), str(item.get("kind"))))
    return entries


def evidence_by_id(record: Record) -> dict[str, DeclaredEvidence]:
    return {entry.id: entry for entry in declared_evidence(record)}


def cited_evidence(record: Record, section_number: int | None = None, kinds=None) -> list[DeclaredEvidence]:
    """Declared evidence the body (or one § section of it) links to, in declaration order."""
    if section_number is None:
        cited = record.cited_paths
    else:
        section = record.section(section_number)
        if section is None:
            return []
        cited = {
            rel
            for link in record.links
            if section.start_line <= link.line <= section.end_line and (rel := record.link_target_rel(link.target))
        }
    return [e for e in declared_evidence(record) if e.path in cited and (kinds is None or e.kind in kinds)]


def checked_artifact(record: Record, ctx: GateContext, entry: DeclaredEvidence, gate: str, *, fresh: bool = True):
    """Load a declared artifact and verify its pin, kind and (when `fresh`) staleness.

    Returns (artifact or None, findings); findings point at the evidence entry.
    """
    line = record.line_of(*entry.keys)

    def finding(message: str, keys=entry.keys) -> Finding:
        return Finding(gate, record.rel_path, record.line_of(*keys) if keys else line, 1, message)

    try:
        artifact = ctx.evidence.get(entry.path)
    except InputError as exc:
        return None, [finding(f"evidence {entry.id!r}: {exc.path}:{exc.line}: {exc.message}", entry.keys + ("path",))]
    findings = []
    if not verify_sha256(artifact, entry.sha256):
        findings.append(finding(
            f"evidence {entry.id!r}: {entry.path} has SHA-256 {artifact.file_sha256}, the record pins {entry.sha256}",
            entry.keys + ("sha256",)))
    if artifact.kind != entry.kind:
        findings.append(finding(f"evidence {entry.id!r}: the record says kind {entry.kind!r}, the artifact is {artifact.kind!r}",
                                entry.keys + ("kind",)))
    if artifact.id != entry.id:
        findings.append(finding(f"evidence {entry.id!r}: the artifact's own id is {artifact.id!r}", entry.keys + ("id",)))
    if fresh:
        for source in ctx.evidence.stale_sources(artifact):
            state = "is missing" if ctx.evidence.source_hash(source) is None else "changed"
            findings.append(finding(f"evidence {entry.id!r} is stale: {source} {state} since it was measured"))
    return artifact, findings
