"""The composite action `.github/actions/gate-check`: its inputs, its steps, and its history check.

The action cannot run here (it installs design-gates from the network); its YAML is
read instead, and the step that refuses a shallow clone is run on real clones.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from gitrepo_builder import GitRepo

ACTION = Path(__file__).resolve().parents[1] / ".github" / "actions" / "gate-check" / "action.yml"


@pytest.fixture(scope="module")
def action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def step(action: dict, name: str) -> dict:
    """The step named exactly `name`, else the one step whose name starts with it."""
    steps = action["runs"]["steps"]
    found = [s for s in steps if s.get("name") == name] or [s for s in steps if s.get("name", "").startswith(name)]
    assert len(found) == 1, [s.get("name") for s in action["runs"]["steps"]]
    return found[0]


def test_the_action_is_composite_with_the_documented_inputs(action):
    assert action["runs"]["using"] == "composite"
    assert {"base", "head", "version", "format", "upload-sarif", "reviews"} <= set(action["inputs"])
    assert action["inputs"]["version"]["default"] == ""
    assert action["inputs"]["format"]["default"] == "github"
    assert "pull_request.base.sha" in action["inputs"]["base"]["default"]
    assert action["outputs"]["gate-check"]["value"] == "${{ steps.install.outputs.gate-check }}"


def test_every_shell_step_reads_its_inputs_from_the_environment(action):
    """`${{ inputs.x }}` pasted into a script is shell injection; the steps pass inputs as env."""
    for entry in action["runs"]["steps"]:
        if "run" in entry:
            assert entry["shell"] == "bash", entry["name"]
            assert "${{" not in entry["run"], entry["name"]


def test_the_checker_comes_from_the_base_commit_into_a_venv_of_its_own(action):
    script = step(action, "Install design-gates")["run"]
    assert 'python3 -m venv "$venv"' in script
    assert 'git worktree add --detach "$base_tree" "$BASE"' in script
    assert "pip install -r .design-gates/requirements.txt" in script
    assert 'pip install "$VERSION"' in script
    assert "action_repository" not in script  # empty inside a composite action (actions/runner#2525)


def test_gate_check_runs_on_base_and_head_and_sarif_is_uploaded_on_request(action):
    check = step(action, "gate-check")
    assert '--base "$BASE" --head "$HEAD" --format "$FORMAT"' in check["run"]
    assert '"$GATE_CHECK"' in check["run"]
    sarif = step(action, "gate-check (SARIF")
    assert "--format sarif" in sarif["run"] and "inputs.upload-sarif == 'true'" in sarif["if"]
    upload = step(action, "Upload the SARIF")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"].endswith("/design-gates.sarif")


def run_history_step(action: dict, clone: Path, base: str, head: str) -> subprocess.CompletedProcess:
    script = step(action, "Check that the history")["run"]
    return subprocess.run(["bash", "-c", script], cwd=clone, capture_output=True, text=True,
                          env=dict(os.environ, BASE=base, HEAD=head), timeout=60)


def test_the_history_step_refuses_a_shallow_clone_and_accepts_a_full_one(action, tmp_path):
    origin = GitRepo(tmp_path / "origin")
    for n in range(3):
        origin.write("README.md", f"# kernels {n}\n")
        origin.commit(f"commit {n}")
    base, head = origin.sha("HEAD~1"), origin.sha("HEAD")
    url = (tmp_path / "origin").as_uri()
    subprocess.run(["git", "clone", "-q", "--depth", "1", url, str(tmp_path / "shallow")], check=True)
    subprocess.run(["git", "clone", "-q", url, str(tmp_path / "full")], check=True)

    shallow = run_history_step(action, tmp_path / "shallow", base, head)
    assert shallow.returncode == 2 and "fetch-depth: 0" in shallow.stdout
    full = run_history_step(action, tmp_path / "full", base, head)
    assert full.returncode == 0, full.stdout
    missing = run_history_step(action, tmp_path / "full", "0" * 40, head)
    assert missing.returncode == 2 and re.search(r"0{40} is not a commit in this clone", missing.stdout)


def test_lint_pr_runs_on_the_pull_requests_description_by_default(action):
    assert action["inputs"]["lint-pr"]["default"] == "true"
    lint = step(action, "gate-check lint-pr")
    assert "github.event_name == 'pull_request'" in lint["if"] and "inputs.lint-pr == 'true'" in lint["if"]
    assert lint["env"]["PR_BODY"] == "${{ github.event.pull_request.body }}"
    assert '"$GATE_CHECK" lint-pr --body-file "$body" --format "$format"' in lint["run"]


def test_the_lint_pr_step_writes_the_description_and_keeps_a_format_lint_pr_knows(action, tmp_path):
    script = step(action, "gate-check lint-pr")["run"]
    fake = tmp_path / "gate-check"
    fake.write_text('#!/bin/sh\necho "$@"\ncat "$3"\n', encoding="utf-8")
    fake.chmod(0o755)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, env=dict(
        os.environ, RUNNER_TEMP=str(tmp_path), GATE_CHECK=str(fake), FORMAT="junit", PR_BODY="It cuts `TTFT` by 30%."))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"lint-pr --body-file {tmp_path}/pull-request-description.md --format github",
                                        "It cuts `TTFT` by 30%."]
