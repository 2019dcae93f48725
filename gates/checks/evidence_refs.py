"""How a record refers to its evidence: declared entries, citations, and checked loads.

Every gate that relies on an artifact goes through `checked_artifact`, so the shared
evidence rules hold the same way for G1, G2, G3, G4, G6 and G7: the record's pin,
kind and id; attestation when the policy at base requires it for the artifact's kind
at the record's level; and, when the artifact must describe the current tree
(`fresh`), its binding: it names every existing file the record covers and no bound
file has changed since.
"""

from __future__ import annotations

from dataclasses import dataclass

from gates.checks.context import GateContext
from gates.evidence.artifacts import EvidenceArtifact, verify_sha256
from gates.evidence.attestation import TrustedKeys, verification_problem
from gates.evidence.refresh_plan import count, shown_files
from gates.evidence.source_binding import covered_files
from gates.model.errors import InputError
from gates.model.findings import Finding
from gates.model.policy import LEVELS
from gates.model.record import Record


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
    problem = attestation_problem(record, ctx, artifact.data)
    if problem:
        findings.append(finding(f"evidence {entry.id!r} ({artifact.kind}) {problem}"))
    if fresh:
        findings.extend(finding(f"evidence {entry.id!r} {message}") for message in binding_problems(record, ctx, artifact.sources))
        stale = stale_message(ctx, artifact)
        if stale:
            findings.append(finding(f"evidence {entry.id!r} is stale: {stale}"))
    return artifact, findings


def stale_message(ctx: GateContext, artifact: EvidenceArtifact) -> str | None:
    """One line for every bound file that changed since `artifact` was measured (None when none did):
    how many, the first few, and the command that lists them all and re-runs the producer."""
    changed = ctx.evidence.stale_sources(artifact)
    if not changed:
        return None
    gone = [source for source in changed if ctx.evidence.source_hash(source) is None]
    commit = artifact.data.get("commit")
    since = f" at {commit[:12]}" if isinstance(commit, str) and commit else ""
    what = f"{count(len(changed), 'bound file')} changed since it was measured{since}"
    if gone:
        what += f" ({len(gone)} of them gone)"
    return (f"{what}: {shown_files(changed)}; `gate-check refresh --list --files` names them, "
            f"`gate-check refresh` re-runs its producer")


def record_covered_files(record: Record, ctx: GateContext) -> list[str]:
    """Existing files the record's `covers` globs match (computed once per record per run)."""
    cache = ctx.__dict__.setdefault("_covered_files", {})
    if record.rel_path not in cache:
        cache[record.rel_path] = covered_files(record.get("covers", default=[]) or [], ctx.repo_root)
    return cache[record.rel_path]


def record_level(record: Record, ctx: GateContext) -> str | None:
    """The highest policy level among the files the record covers (None without a policy)."""
    if ctx.policy is None:
        return None
    levels = [ctx.policy.level_of(path)[0] for path in record_covered_files(record, ctx)]
    return max(levels, key=LEVELS.index, default=ctx.policy.default_level)


def attestation_problem(record: Record, ctx: GateContext, data: dict) -> str | None:
    """Why artifact `data` falls short of the policy's attestation rule for this record, or None."""
    if ctx.policy is None:
        return None
    trusted = TrustedKeys.from_section(ctx.policy.section("attestation"))
    level = record_level(record, ctx)
    if data.get("kind") not in trusted.required_kinds(level):
        return None
    problem = verification_problem(data, trusted)
    if problem is None:
        return None
    return f"{problem}; the policy at base requires attested {data.get('kind')} evidence for {level} records"


def binding_problems(record: Record, ctx: GateContext, sources: dict) -> list[str]:
    """The artifact binds no sources, or misses files the record covers (messages without the subject)."""
    if not sources:
        return ["binds no sources: an artifact must name (with SHA-256) every file the record covers "
                "and every repository module its command imported"]
    missing = [path for path in record_covered_files(record, ctx) if path not in sources]
    if not missing:
        return []
    return [f"does not bind {count(len(missing), 'file')} the record covers ({shown_files(missing)}): "
            "it did not measure them as they are; `gate-check refresh` re-runs its producer"]
