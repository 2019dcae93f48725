"""A run that judges nothing says so in one line and how to set it up; CI can ask for exit 2.

Without records, configuration or policy, `gate-check`, `--base` and `--history` used to
exit 0 printing only "0 record(s)", even after code was committed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitrepo_builder import GitRepo, seeded_repo

cli = pytest.importorskip("gates.frontends.cli")

EXAMPLES = Path(__file__).parent / "examples"


@pytest.fixture
def bare(tmp_path):
    """A repository with committed code and nothing of design-gates: no configuration, policy or records."""
    repo = GitRepo(tmp_path / "bare")
    repo.write("src/kernel.py", "def kernel():\n    return 1\n")
    repo.commit("kernel")
    repo.write("src/kernel.py", "def kernel():\n    return 2\n")
    repo.commit("kernel: faster")
    return repo


def run(repo, capsys, *args):
    code = cli.main([*args, "--repo-root", str(repo.root)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("args", [(), ("--base", "HEAD~1"), ("--history",)], ids=["plain", "base", "history"])
def test_nothing_configured_passes_but_says_so_and_how_to_set_it_up(bare, capsys, args):
    code, out, err = run(bare, capsys, *args)
    assert code == 0 and "0 record(s)" in out
    assert "gate-check: nothing configured: no .design-gates/config.yaml" in err
    assert "gate-check new ID" in err


@pytest.mark.parametrize("args", [(), ("--base", "HEAD~1"), ("--history",)], ids=["plain", "base", "history"])
def test_require_records_turns_nothing_configured_into_exit_2(bare, capsys, args):
    code, out, err = run(bare, capsys, *args, "--require-records")
    assert code == 2 and out == ""
    assert "gate-check: error: nothing configured" in err


def test_base_without_a_policy_says_no_path_is_a_hot_path(bare, capsys):
    _, _, err = run(bare, capsys, "--base", "HEAD~1")
    assert "no policy file .design-gates/policy.yaml at the base HEAD~1: no path is a hot path" in err
    assert run(bare, capsys, "--base", "HEAD~1", "--require-records")[0] == 2


def test_history_without_a_policy_file_says_there_is_none(bare, capsys):
    _, _, err = run(bare, capsys, "--history")
    assert "there is no policy file .design-gates/policy.yaml at HEAD" in err
    assert "sets no history.enforce_from" not in err


def test_history_with_a_policy_but_no_enforce_from_names_the_key(tmp_path, capsys):
    repo = seeded_repo(tmp_path / "repo")
    code, _, err = run(repo, capsys, "--history")
    assert code == 0 and "the policy .design-gates/policy.yaml at HEAD sets no history.enforce_from" in err
    assert run(repo, capsys, "--history", "--require-records")[0] == 2


def test_history_says_how_many_judged_commits_had_no_policy_at_their_base(bare, capsys):
    first = bare.git("rev-list", "--max-parents=0", "HEAD").strip()
    bare.write(".design-gates/policy.yaml", "schema_version: 1\nrules: []\nhistory:\n"
               f"  enforce_from: {first}\n")
    bare.commit("Adopt design-gates at the head of an old history")
    _, _, err = run(bare, capsys, "--history")
    assert "history checks: 2 commit(s) after" in err
    assert "2 of them had no policy file at their base, so no path was hot" in err


def test_an_empty_records_folder_names_the_folder(bare, capsys):
    bare.write("docs/design/index.md", "# Records\n")
    _, _, err = run(bare, capsys)
    assert "no design record under docs/design (the records folders of the defaults)" in err


def test_paths_that_hold_no_record_are_named(bare, capsys):
    bare.write("notes/readme.md", "notes\n")
    code, _, err = run(bare, capsys, str(bare.root / "notes"))
    assert code == 0 and "no design record in" in err and "notes" in err


def test_the_configuration_key_asks_for_exit_2_like_the_flag(bare, capsys):
    bare.write(".design-gates/config.yaml", "records: [rfcs]\nrequire_records: true\n")
    (bare.root / "rfcs").mkdir()
    code, _, err = run(bare, capsys)
    assert code == 2 and "gate-check: error: no design record under rfcs (the records folders of .design-gates/config.yaml)" in err


def test_quiet_keeps_the_note_out_but_not_the_exit_code(bare, capsys):
    assert run(bare, capsys, "-q") == (0, "", "")
    assert run(bare, capsys, "-q", "--require-records")[0] == 2


def test_a_repository_with_a_record_gets_its_findings_and_no_note(tmp_path, capsys):
    repo = seeded_repo(tmp_path / "repo")
    repo.write("docs/design/form-complete-en.md", (EXAMPLES / "G0" / "positive" / "form-complete-en.md").read_text())
    code, out, err = run(repo, capsys, "--require-records", "--gate", "G0")
    assert code == 1 and "1 record(s): 0 passed, 1 failed" in out  # its example evidence is not in this repository
    assert err == ""
