"""`gate-check pin`: evidence pins re-recorded in place, nothing else in the record touched."""

from __future__ import annotations

import hashlib

import pytest

from gates.frontends.cli import main

RECORD = "G3/positive/numeric-within-tolerance.md"


@pytest.fixture()
def repo(examples_repo):
    return examples_repo


def pin(repo, *args):
    return main(["pin", *(str(a) for a in args), "--repo-root", str(repo)])


def test_a_current_record_needs_no_pin(repo, capsys):
    assert pin(repo, repo / RECORD, "--check") == 0
    assert "0 pin(s) out of date, 0 problem(s)" in capsys.readouterr().out


def test_a_changed_artifact_is_re_pinned_and_nothing_else_changes(repo, capsys):
    artifact = repo / "evidence" / "numeric-cpu.json"
    artifact.write_text(artifact.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    before = (repo / RECORD).read_text(encoding="utf-8")

    assert pin(repo, repo / RECORD, "--check") == 1
    assert (repo / RECORD).read_text(encoding="utf-8") == before
    assert pin(repo, repo / RECORD) == 0
    out = capsys.readouterr().out
    assert f"numeric-cpu: 897ce517f00c -> {digest[:12]}" in out

    after = (repo / RECORD).read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(changed) == 1 and changed[0][1] == changed[0][0].replace(
        "897ce517f00c246e886ad083c80ee956aec00332f97cfc6eb1585a32f44f94e4", digest)
    assert pin(repo, repo / RECORD, "--check") == 0


def test_a_missing_artifact_is_reported_not_guessed(repo, capsys):
    (repo / "evidence" / "numeric-cpu.json").unlink()
    before = (repo / RECORD).read_text(encoding="utf-8")
    assert pin(repo, repo / RECORD) == 1
    assert "numeric-cpu: no file at 'evidence/numeric-cpu.json'" in capsys.readouterr().out
    assert (repo / RECORD).read_text(encoding="utf-8") == before


def test_a_pin_yaml_reads_as_a_number_is_named_not_guessed(repo, capsys):
    record = repo / RECORD
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace("897ce517f00c246e886ad083c80ee956aec00332f97cfc6eb1585a32f44f94e4", "0" * 64),
                      encoding="utf-8")
    assert pin(repo, record) == 1
    assert "sha256 is read as int 0, not text" in capsys.readouterr().out
