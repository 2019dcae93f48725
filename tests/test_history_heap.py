"""A history run keeps the readings of earlier commits out of the cycle collector's walks, and hands the collector
back as it found it.

- while commits are judged the automatic collector is off; what the first commits left behind is frozen
  (`gc.freeze`) before the next one is judged, so a collection walks the commit in progress only;
- after the run (or when it fails) the collector is on again and nothing stays frozen;
- a process that froze objects itself keeps its own heap: the run freezes nothing then.
"""

from __future__ import annotations

import gc

import pytest

import gates.history as history_checks
from gates.history.ratchet import check_history
from gitrepo_builder import ADA, MAX, POLICY, seeded_repo


def _three_commits(tmp_path):
    repo = seeded_repo(tmp_path / "repo", files={"kernels/ops/other.py": "def other(x):\n    return x\n"})
    start = repo.sha("HEAD")
    for n in range(2):
        repo.write("docs/notes.md", f"note {n}\n")
        repo.commit(f"note {n}", who=ADA)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)
    return repo


@pytest.fixture
def collector_as_found():
    enabled = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


@pytest.fixture
def collector_seen(monkeypatch):
    """(collector enabled, frozen objects) as each commit of a history run is judged."""
    seen = []
    real = history_checks.check_change

    def judged(*args, **kwargs):
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return real(*args, **kwargs)

    monkeypatch.setattr(history_checks, "check_change", judged)
    return seen


def test_earlier_commits_are_frozen_while_the_next_is_judged(tmp_path, collector_as_found, collector_seen):
    repo = _three_commits(tmp_path)
    result = check_history(repo.root)
    seen = collector_seen

    assert len(result.judged) == 3
    assert [enabled for enabled, _ in seen] == [False, False, False]
    assert seen[0][1] == 0 and seen[1][1] > 0 and seen[2][1] >= seen[1][1]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_collector_is_handed_back_when_a_commit_fails(tmp_path, monkeypatch, collector_as_found):
    repo = _three_commits(tmp_path)

    def failing(*args, **kwargs):
        raise RuntimeError("a check failed")

    monkeypatch.setattr(history_checks, "check_change", failing)
    with pytest.raises(RuntimeError):
        check_history(repo.root)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_heap_the_caller_froze_is_left_alone(tmp_path, collector_as_found, collector_seen):
    repo = _three_commits(tmp_path)
    gc.freeze()
    frozen = gc.get_freeze_count()
    check_history(repo.root)
    seen = collector_seen
    # neither unfrozen (0) nor frozen further (more); a frozen object that is freed leaves the count
    assert len(seen) == 3 and all(enabled and 0 < count <= frozen for enabled, count in seen), (frozen, seen)
    assert gc.isenabled() and 0 < gc.get_freeze_count() <= frozen


def test_the_process_freezes_its_heap_when_it_exits_after_a_history_run(tmp_path, monkeypatch, collector_as_found):
    import gates.history.heap as heap

    registered = []
    monkeypatch.setattr(heap, "_EXIT_FREEZE", [])
    monkeypatch.setattr(heap.atexit, "register", registered.append)
    check_history(_three_commits(tmp_path).root)
    check_history(_three_commits(tmp_path / "again").root)
    assert registered == [gc.freeze]  # once per process
