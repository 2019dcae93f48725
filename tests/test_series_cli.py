"""`gate-check --base` end to end: exit codes, and findings that name the gate, path and commit."""

from __future__ import annotations

import json
import subprocess

import pytest

from gitrepo_builder import BEN, seeded_repo

cli = pytest.importorskip("gates.cli")


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def run(repo, capsys, *args):
    code = cli.main([*args, "--repo-root", str(repo.root)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_clean_change_exits_0(repo, capsys):
    repo.branch("docs")
    repo.write("docs/notes.md", "notes\n")
    repo.commit("docs: notes", who=BEN)
    code, out, err = run(repo, capsys, "--base", "main")
    assert code == 0, out + err


def test_a_broken_api_exits_1_with_gate_path_and_commit(repo, capsys):
    repo.branch("drop-scale")
    api = repo.read("kernels/decode_attention/api.py").replace(", *, scale=None, out=None", ", *, out=None")
    repo.write("kernels/decode_attention/api.py", api)
    bad = repo.commit("Drop scale", who=BEN)
    code, out, _ = run(repo, capsys, "--base", "main", "--format", "json")
    assert code == 1
    entries = {entry["path"]: entry for entry in json.loads(out)["records"]}
    findings = entries["kernels/decode_attention/api.py"]["gates"]["G5"]["findings"]
    assert any("parameter 'scale' removed" in f["message"] and f["commit"] == bad for f in findings)
    code, out, _ = run(repo, capsys, "--base", "main")
    assert "kernels/decode_attention/api.py:6:1: G5 error: public API break" in out
    assert f"[commit {bad[:12]}]" in out


def test_head_may_name_another_ref(repo, capsys):
    repo.branch("drop-scale")
    api = repo.read("kernels/decode_attention/api.py").replace(", *, scale=None, out=None", ", *, out=None")
    repo.write("kernels/decode_attention/api.py", api)
    repo.commit("Drop scale", who=BEN)
    repo.checkout("main")
    assert run(repo, capsys, "--base", "main")[0] == 0
    assert run(repo, capsys, "--base", "main", "--head", "drop-scale")[0] == 1


def test_a_shallow_clone_exits_2_and_says_what_to_fetch(repo, tmp_path, capsys):
    repo.write("docs/a.md", "a\n")
    repo.commit("second")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)], check=True)
    code = cli.main(["--base", "origin/main", "--repo-root", str(clone)])
    err = capsys.readouterr().err
    assert code == 2 and "fetch-depth: 0" in err and "Traceback" not in err


def test_an_unknown_base_exits_2(repo, capsys):
    code, _, err = run(repo, capsys, "--base", "origin/nope")
    assert code == 2 and "git fetch origin nope" in err
