"""`--history` reads each merged commit through one git reader, and reads it as a change of its own would be read.

The first-parent history below holds the kinds of commits a library merges: a kernel edit,
a rename, a rename with an edit, a deletion, a file replaced by a symbolic link, a record
added and changed, and a merge of a branch with two commits. For every one, the change set
the history run builds (`FirstParentHistory.change_sets`: commits from one `git log`, paths
from the trees) equals the one `load_change_set(root, sha^1, sha)` reads, and so do the
findings of the history checks.
"""

from __future__ import annotations

import os

import pytest

from gates.history import check_change
from gates.history.git_repo import FirstParentHistory, load_change_set
from gitrepo_builder import ADA, BEN, KERNEL_API, MAX, RITA, record_text, seeded_repo


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    repo = seeded_repo(tmp_path_factory.mktemp("history") / "repo")
    start = repo.sha("HEAD")
    api = "kernels/decode_attention/api.py"
    repo.write(api, KERNEL_API.replace("return None", "return q"))
    repo.commit("A kernel edit", who=ADA, trailers=[RITA.trailer("Co-authored-by")])
    repo.git("mv", "tests/test_api.py", "tests/test_decode_api.py")
    repo.commit("A rename", who=BEN)
    repo.write("docs/notes.md", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n")
    repo.commit("Notes", who=BEN)
    repo.git("mv", "docs/notes.md", "docs/reading.md")
    repo.write("docs/reading.md", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n")
    repo.commit("A rename with an edit", who=BEN)
    repo.write("docs/design/paged.md", record_text("paged", stage="A"))
    repo.commit("A design record", who=ADA)
    repo.write("docs/design/paged.md", record_text("paged", stage="A", questions_decided=True))
    repo.commit("The record, revised", who=ADA)
    repo.delete("README.md")
    repo.commit("A deletion", who=MAX)
    os.symlink("reading.md", repo.root / "docs" / "latest.md")
    repo.commit("A link", who=MAX)
    repo.branch("feature")
    repo.write("kernels/extra.py", "def extra(q):\n    return q\n")
    repo.commit("Feature, part one", who=ADA)
    repo.write("kernels/extra.py", "def extra(q, *, scale=None):\n    return q\n")
    repo.commit("Feature, part two", who=BEN)
    repo.merge("feature")
    return repo, start


def summary(change):
    records = [(r.rel_path, r.status, r.base.front_matter if r.base else None, r.head.front_matter if r.head else None)
               for r in change.records]
    return (change.base, change.head, change.merge_base, change.changed, change.commits, records, change.record_dirs)


def test_each_commit_reads_as_its_own_change(history):
    repo, start = history
    reader = FirstParentHistory(repo.root)
    try:
        shas = reader.commits(repo.sha("HEAD"), after=start)
        assert len(shas) == 9
        for change in reader.change_sets(repo.root, shas):
            alone = load_change_set(repo.root, f"{change.head}^1", change.head)
            try:
                assert summary(change) == summary(alone), change.head
                assert check_change(change, {}, repo.root, judge_is_newer=True) == \
                    check_change(alone, {}, repo.root, judge_is_newer=True)
            finally:
                alone.close()
    finally:
        reader.close()


def test_renames_deletions_links_and_merges_are_what_git_diff_says(history):
    repo, start = history
    reader = FirstParentHistory(repo.root)
    try:
        kinds = {c.status for change in reader.change_sets(repo.root, reader.commits(repo.sha("HEAD"), after=start))
                 for c in change.changed}
    finally:
        reader.close()
    assert {"M", "R", "A", "D"} <= kinds
