"""The split-KV record's end-to-end claim, as G7 judges it: backed by the committed H200 A/B, and by nothing else."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from gates.checks.runner import check_records

REPO = Path(__file__).resolve().parent.parent
RECORD = "docs/design/splitkv-decode-attention.md"
ARTIFACT = "docs/evidence/e2e-decode-llama-3-8b-h200.json"


def g7_findings(root: Path) -> list[str]:
    report = check_records([root / RECORD], root, gates=["G7"])
    return [f"{f.line}: {f.message}" for result in report.records for f in result.findings() if f.gate == "G7"]


def copy_of_the_repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for part in ("docs", ".design-gates", "pyproject.toml"):
        source = REPO / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / part)
    return root


def test_the_committed_ab_run_backs_the_claim():
    assert g7_findings(REPO) == []


def test_without_the_artifact_the_claim_fails(tmp_path):
    root = copy_of_the_repository(tmp_path)
    (root / ARTIFACT).unlink()
    assert any("end-to-end claim" in finding for finding in g7_findings(root))


def test_a_misquoted_median_fails(tmp_path):
    root = copy_of_the_repository(tmp_path)
    record = root / RECORD
    text = record.read_text(encoding="utf-8")
    quoted = re.search(r"split-kv decodes at ([0-9.]+) tok/s", text).group(1)
    wrong = f"{float(quoted) + 10:.1f}"
    record.write_text(text.replace(f"decodes at {quoted} tok/s", f"decodes at {wrong} tok/s"), encoding="utf-8")
    assert any(wrong in finding for finding in g7_findings(root))
