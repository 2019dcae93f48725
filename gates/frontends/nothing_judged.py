"""What a `gate-check` run had nothing to judge with, one line each, with how to set it up.

A run that finds no record, or a `--base`/`--history` run without a policy (or, for
`--history`, without `history.enforce_from`), passes by default: in a repository that has
not adopted design-gates yet, nothing failed. It says so instead of printing only
"0 record(s)", and `--require-records` (or `require_records: true` in the configuration)
turns each of these lines into an error, exit 2, for a CI job that must judge something.
"""

from __future__ import annotations

from pathlib import Path

from gates.model.config import CONFIG_FILE, Settings

SET_UP_RECORDS = ('`gate-check new ID --title "..." --author "Name <email>"` writes a first record; '
                  "the adoption guide (adopting.md in design-gates' documentation) sets up a repository")


def nothing_judged(report, repo_root: Path, paths, settings: Settings, *, change=None, change_policy=None,
                   history=None) -> list[str]:
    """The parts of this run that judged nothing: records, the change's policy, the history ratchet."""
    lines = []
    if not any(record.id != "(change)" for record in report.records) and not report.input_errors:
        lines.append(_no_records(repo_root, paths, settings))
    if change is not None and change_policy is None:
        lines.append(f"no policy file {settings.policy} at the base {change.base_ref}: no path is a hot path, "
                     "so G8 required no covering record for any change; the adoption guide (adopting.md in design-gates' "
                     "documentation) writes a first policy")
    if history is not None and not history.configured:
        lines.append(history.note)
    return lines


def _no_records(repo_root: Path, paths, settings: Settings) -> str:
    if paths:
        return f"no design record in {', '.join(map(str, paths))}: nothing was checked; {SET_UP_RECORDS}"
    missing = [folder for folder in settings.records if not (repo_root / folder).is_dir()]
    if settings.source is None and missing:
        return (f"nothing configured: no {CONFIG_FILE}, no [tool.design-gates] in pyproject.toml and no "
                f"{settings.records_text()} folder, so no record was checked; {SET_UP_RECORDS}")
    return (f"no design record under {settings.records_text()} (the records folders of "
            f"{settings.source or 'the defaults'}): nothing was checked; {SET_UP_RECORDS}")
