"""`gate-check --explain`: how G7 read each sentence with an end-to-end word in the records checked.

One line per judged clause, in the findings' form with the severity `note`:

    docs/design/x.md:112:1: note: claim: 'TTFT' with the result 'drops 30%'
    docs/design/x.md:118:5: note: not a claim: 'TTFT' is a plan ('will … measured')

The verdicts are those of the engine behind G7, `gate-check lint-pr --explain` and results pages
(`gates.checks.claim_detection`), so a sentence is explained the same way wherever it stands.
"""

from __future__ import annotations

from pathlib import Path

from gates.checks.claim_detection import record_verdicts, vocabulary_of
from gates.model.config import load_settings
from gates.model.errors import InputError
from gates.model.record import load_record


def explain_records(paths: list[str], root: Path) -> str:
    """The verdict lines of every record among `paths` (repository-relative) that can be read."""
    words = vocabulary_of(load_settings(root))
    lines = []
    for path in paths:
        try:
            record = load_record(Path(root) / path, root)
        except InputError:
            continue  # the report already names what cannot be read
        lines.extend(f"{path}:{verdict.line}:{verdict.col}: note: {verdict.explain()}"
                     for verdict in record_verdicts(record, words))
    return "".join(line + "\n" for line in lines)
