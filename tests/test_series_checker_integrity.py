"""The checker judging a change must not be the change's own copy of itself."""

from __future__ import annotations

import pytest

from gates.history import checker_integrity
from gitrepo_builder import ADA, MAX, seeded_repo

HOT_PATH = "gates/history/hot_path.py"
RUNNING = (checker_integrity.RUNNING_ROOT / HOT_PATH).read_text(encoding="utf-8")
DISABLED = RUNNING.replace("def check(ctx: SeriesContext) -> None:\n",
                           "def check(ctx: SeriesContext) -> None:\n    return\n", 1)


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def test_a_change_that_edits_the_running_checker_is_judged_by_a_modified_checker(repo):
    assert DISABLED != RUNNING
    repo.write(HOT_PATH, DISABLED.replace("    return\n", "    pass\n", 1))  # base: some other version
    repo.commit("gates: the base's hot-path check", who=MAX)
    repo.branch("weaken")
    repo.write(HOT_PATH, RUNNING)  # head: byte for byte the checker that runs now
    bad = repo.commit("gates: tidy the hot-path check", who=ADA)
    (finding,) = repo.check()
    assert (finding.gate, finding.path, finding.commit) == ("G8", HOT_PATH, bad)
    assert "the checker judging this change is modified by it" in finding.message
    assert "run the base ref's gate-check" in finding.message


def test_the_base_s_checker_judging_a_change_to_the_checker_is_no_finding(repo):
    repo.write(HOT_PATH, RUNNING)  # base: the checker that runs now
    repo.commit("gates: the hot-path check", who=MAX)
    repo.branch("weaken")
    repo.write(HOT_PATH, DISABLED)
    repo.commit("gates: return early", who=ADA)
    assert repo.check() == []


def test_a_checker_file_deleted_by_the_change_alone_does_not_trip_it(repo):
    repo.write("gates/history/no_such_module_in_the_running_checker.py", "X = 1\n")
    repo.commit("gates: a module", who=MAX)
    repo.branch("drop")
    repo.delete("gates/history/no_such_module_in_the_running_checker.py")
    repo.commit("gates: drop the module", who=ADA)
    assert repo.check() == []
