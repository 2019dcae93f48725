"""History checks for the A -> B -> C -> D series: from a `ChangeSet` to findings.

`git_repo` is the git adapter (the only module that imports GitPython); it reads
base..head into the plain `ChangeSet` (`changeset`) that every check here receives.

`check_change(change, records_by_id, repo_root)` runs every check over what
base..head changes and returns findings, each naming its gate, path, line and
commit. The runner merges them into the gate results of the records they name.

| check | gate |
|---|---|
| stage scope, status and stage moves, stage-closing commits, no compiled bytecode | G0 |
| prerequisites of a stage, stacked records | G2 |
| public API diff, default route unchanged before D | G5 |
| approvals independent of the change's authors, hot-path policy | G8 |
| the checker is not the change's own modified copy (`checker_integrity`) | G8 |

`check_history(...)` judges each first-parent commit after the policy's
`history.enforce_from` as its own change (`gates.history.ratchet`).
"""

from __future__ import annotations

from pathlib import Path

from gates.model.findings import Finding
from gates.history import (api_compat, checker_integrity, compiled_code, hot_path, independence, prerequisites, scope,
                          transitions)
from gates.history.context import SeriesContext

CHECKS = (scope.check, compiled_code.check, transitions.check, prerequisites.check, api_compat.check, independence.check, hot_path.check,
          checker_integrity.check)


def check_change(change, records_by_id: dict, repo_root: Path, *, judge_is_newer: bool = False) -> list[Finding]:
    """Every finding the history of base..head raises, in a stable order.

    `records_by_id` (the working tree's records) is accepted for the runner's
    contract; the checks judge the records as they are at the base and head commits.
    `judge_is_newer` (history runs: a merged commit judged by the checker of a later,
    already judged tip) leaves out the check that the checker is not the change's copy.
    """
    ctx = SeriesContext(change)
    for run in CHECKS:
        if judge_is_newer and run is checker_integrity.check:
            continue
        run(ctx)
    unique = list(dict.fromkeys(ctx.findings))
    return sorted(unique, key=lambda f: (f.gate, f.path, f.line, f.message))
