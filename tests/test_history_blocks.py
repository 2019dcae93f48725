"""A long history is judged in contiguous blocks of commits, one worker process each, and reported as one process
reports it.

- the commits are cut in order into near-equal blocks, as many as there are CPUs but none shorter than
  `MIN_BLOCK`; a short history or a single CPU stays in one block, in the calling process;
- the findings of the blocks come back in commit order: the same list, in the same order, as one process finds.
"""

from __future__ import annotations

import gates.history.commit_blocks as commit_blocks
from gates.history.commit_blocks import blocks
from gates.history.ratchet import check_history
from gitrepo_builder import ADA, MAX, POLICY, seeded_repo

IMPL = "kernels/ops/_impl.py"
INIT = "kernels/ops/__init__.py"


def test_commits_are_cut_in_order_into_near_equal_blocks(monkeypatch):
    monkeypatch.setattr(commit_blocks, "MIN_BLOCK", 3)
    shas = [f"c{n}" for n in range(10)]
    assert blocks(shas, cpus=2) == [shas[:5], shas[5:]]
    assert blocks(shas, cpus=4) == [shas[:4], shas[4:7], shas[7:]]  # 10 // 3: three blocks of at least 3
    assert blocks(shas, cpus=1) == [shas]
    assert blocks(shas[:5], cpus=2) == [shas[:5]]  # two blocks would be shorter than MIN_BLOCK


def test_blocks_judged_apart_report_what_one_process_reports(tmp_path, monkeypatch):
    repo = seeded_repo(tmp_path / "repo", files={
        IMPL: "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
        INIT: "from kernels.ops._impl import rms_norm\n"})
    start = repo.sha("HEAD")
    for n, body in enumerate(["def rms_norm(x, weight):\n    return x\n",
                              "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
                              "def rms_norm(x):\n    return x\n"]):
        repo.write(IMPL, body)
        repo.commit(f"rms_norm: version {n}", who=ADA)
    repo.write(".design-gates/policy.yaml", POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Judge the history", who=MAX)

    alone = check_history(repo.root)
    monkeypatch.setattr(commit_blocks, "MIN_BLOCK", 2)
    monkeypatch.setattr(commit_blocks, "available_cpus", lambda: 2)
    started = []
    real = commit_blocks.judge_apart
    monkeypatch.setattr(commit_blocks, "judge_apart", lambda judge, jobs: started.append(len(jobs)) or real(judge, jobs))
    apart = check_history(repo.root)

    assert started == [2]
    assert len([f for f in alone.findings if f.gate == "G5" and f.severity == "error"]) == 3  # eps; weight and eps
    assert apart.findings == alone.findings
    assert apart.judged == alone.judged and apart.without_policy == alone.without_policy
