"""What every gate may consult besides the record itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gates.evidence.artifacts import EvidenceStore
from gates.model.config import Profile, Settings, load_settings
from gates.model.policy import Policy
from gates.model.record import STAGES, Record


@dataclass
class GateContext:
    """Repository root, every known record by id, the evidence store and run options.

    `stage` (from `--stage`) raises every record's stage for the stage-dependent
    rules: a record at A checked with `stage="B"` must already meet B's rules.
    `change` is the `ChangeSet` of `--base` runs (None otherwise). `policy` is the
    policy that judges the records: read at the base commit when there is a change,
    else from the working tree (None when the repository has none). `settings` is the
    configuration (`gates.model.config`) that judges them: its rules read where the policy is.
    `run_memo` keeps what the gates read of the repository's files for the length of one run (a run
    sees one tree; a context lives for one run), by what they asked: the pytest configuration along a
    suite's folders, which every record that declares the suite reads.
    `approvals_judged_except`: on a `--history` run over a working tree that is HEAD's, the paths that
    commits judged without a base policy changed (every other record's declared approvals were judged
    against the policy's approval sources by the history checks); None on any other run.
    """

    repo_root: Path
    records_by_id: dict[str, Record] = field(default_factory=dict)
    evidence: EvidenceStore | None = None
    run_suites: bool = False
    stage: str | None = None
    change: object | None = None
    suite_timeout_s: float = 600.0
    duplicate_ids: dict[str, list[str]] = field(default_factory=dict)
    policy: Policy | None = None
    settings: Settings | None = None
    run_memo: dict = field(default_factory=dict)
    approvals_judged_except: frozenset[str] | None = None

    def __post_init__(self):
        self.repo_root = Path(self.repo_root).resolve()
        if self.evidence is None:
            self.evidence = EvidenceStore(self.repo_root)
        if self.settings is None:
            self.settings = load_settings(self.repo_root)

    def profile_of(self, record: Record) -> Profile | None:
        """The process `record` follows (its `process`, else the default); None when not allowed."""
        process = record.get("process")
        return self.settings.profile_for(process if isinstance(process, str) else None)

    def effective_stage(self, record: Record) -> str:
        """The record's stage, raised to `--stage` when that is later."""
        own = record.stage or "A"
        if self.stage in STAGES and STAGES.index(self.stage) > STAGES.index(own):
            return self.stage
        return own


def stage_at_least(stage: str, other: str) -> bool:
    return STAGES.index(stage) >= STAGES.index(other)
