"""The history ratchet: every commit merged after `history.enforce_from` passes the history checks.

`gate-check --history` reads `history.enforce_from` from the policy at HEAD (the file the
configuration at HEAD names) and judges each commit of HEAD's first-parent chain after
it (the enforce_from commit itself excluded) as its own change, with its first parent
as the base: one merge or squashed pull request at a time, the way it was merged, with
the configuration, policy and records of the commit it was merged onto. A change that spans many merges is not judged as one, since
a record legitimately moves one stage per merge.

The ratchet only moves back. A commit on the first-parent chain that removes
`history.enforce_from`, or moves it to a commit that is not an ancestor of the one
before (forward, or sideways), is reported under G8 at the policy file, wherever it
lies in the history: otherwise a change could move the ratchet past itself.

Where the base policy trusts forge reviews, a merged commit's approvals are the reviews of the
pull request it merged: `reviews` names a folder (outside the repository) holding
`<merged commit sha>.json` for each merge, the forge's export of that pull request's reviews,
which CI fetches from the forge for each commit it judges. A merged commit without one has no
forge approval (a push that bypassed review fails, as it should).

Setting the ratchet for the first time (a policy that had no `history.enforce_from`
gains one, and nothing else in it changes) is where enforcement starts: the history run does
not judge that commit's policy change. Its pull request needs no covering record where the
policy trusts no approval sources; with `approvals.sources` the ratchet also names the commit
whose YAML approvals count as legacy ones, and the pull request needs a record
(`only_sets_the_first_ratchet`). Without `history.enforce_from` the history is not judged, and
the run says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from gates.model.config import settings_from_reader
from gates.model.errors import InputError
from gates.model.findings import Finding
from gates.model.safe_yaml import load_yaml

KEY = ("history", "enforce_from")
OBJECT_ID = re.compile(r"[0-9a-f]{7,40}")  # the policy schema's pattern for history.enforce_from


@dataclass
class HistoryResult:
    findings: list[Finding] = field(default_factory=list)
    judged: list[str] = field(default_factory=list)  # the commits judged, oldest first
    enforce_from: str | None = None
    policy_path: str = ""
    policy_found: bool = True  # whether HEAD has a policy file at all
    without_policy: list[str] = field(default_factory=list)  # judged commits whose parent had no policy file
    # the paths those commits changed: an approval declared there was judged by no approval source
    changed_without_policy: frozenset[str] = frozenset()

    @property
    def configured(self) -> bool:
        return self.enforce_from is not None

    @property
    def note(self) -> str:
        if not self.policy_found:
            return (f"history checks not configured: there is no policy file {self.policy_path} at HEAD, "
                    "so no merged commit was judged; write one with history.enforce_from: <commit> "
                    "(the history-checks guide, gates/history-checks.md in the site)")
        if self.enforce_from is None:
            return (f"history checks not configured: the policy {self.policy_path} at HEAD sets no "
                    "history.enforce_from, so no merged commit was judged; set it to the commit after which "
                    "every merge is judged (the history-checks guide, gates/history-checks.md in the site)")
        note = f"history checks: {len(self.judged)} commit(s) after {self.enforce_from[:12]} judged"
        if self.without_policy:
            note += (f"; {len(self.without_policy)} of them had no policy file at their base, so no path was hot "
                     "and no approval source trusted there (only the record rules judged them)")
        return note


def enforce_from_of(text: str | None, policy_path: str) -> tuple[str | None, int]:
    """The policy text's history.enforce_from (without schema validation: old policies stay readable) and its line."""
    if text is None:
        return None, 1
    try:
        document = load_yaml(text, policy_path)
    except InputError:
        return None, 1
    data = document.data if isinstance(document.data, dict) else {}
    history = data.get("history")
    value = history.get("enforce_from") if isinstance(history, dict) else None
    return (value if isinstance(value, str) else None), document.lines.get(KEY, 1)


def _ratchet_moves(history, head: str, policy_path: str) -> list[Finding]:
    """A finding for each first-parent commit that removes the ratchet or moves it forward."""
    findings = []
    for sha in history.commits(head, path=policy_path):
        parent = history.resolve(f"{sha}^1")
        before, _ = enforce_from_of(history.read_at(parent, policy_path) if parent else None, policy_path)
        after, line = enforce_from_of(history.read_at(sha, policy_path), policy_path)
        if before is None or after == before:
            continue
        if after is None:
            message = f"history.enforce_from {before} removed; the history ratchet only moves back"
        elif not history.is_ancestor(after, before):
            message = (f"history.enforce_from moved from {before} to {after}, which is not an ancestor of it; "
                       "the history ratchet only moves back (to an older commit)")
        else:
            continue
        findings.append(Finding("G8", policy_path, line, 1, message, commit=sha))
    return findings


def check_history(repo_root, head: str = "HEAD", reviews=None) -> HistoryResult:
    """Judge every first-parent commit of `head` after the policy's history.enforce_from.

    Raises `InputError` when enforce_from is not a commit of `head`'s history, and
    `GitContextError` when the history is missing (no repository, a shallow clone).
    """
    from gates.history.forge_reviews import reviews_folder
    from gates.history.git_repo import FirstParentHistory
    from gates.history.commit_blocks import blocks, judge_apart
    from gates.history.heap import kept_between_commits

    folder = reviews_folder(reviews, repo_root) if reviews is not None else None

    history = FirstParentHistory(repo_root)
    try:
        head_sha = history.resolve(head)
        if head_sha is None:
            raise InputError(head, 1, "not a commit in this repository")
        policy_path = settings_from_reader(lambda path: history.read_at(head_sha, path)).policy
        result = HistoryResult(findings=_ratchet_moves(history, head_sha, policy_path), policy_path=policy_path)
        policy_text = history.read_at(head_sha, policy_path)
        result.policy_found = policy_text is not None
        enforce_from, line = enforce_from_of(policy_text, policy_path)
        if enforce_from is None:
            return result
        start = history.resolve_object_id(str(enforce_from))
        if start is None or not history.is_ancestor(start, head_sha):
            raise InputError(policy_path, line, f"history.enforce_from {enforce_from} is not a commit in the history "
                             f"of {head}: name one commit by its object id (a branch or tag can move, and a short "
                             "prefix can be ambiguous); fetch the full history, or name a commit of this branch")
        result.enforce_from = start
        result.judged = history.commits(head_sha, after=start)
        cut = blocks(result.judged)
        if len(cut) == 1:
            with kept_between_commits() as heap:
                _judge(history, repo_root, result.judged, result, folder, policy_path, heap)
        else:
            for findings, without_policy in judge_apart(
                    _judge_block, [(repo_root, block, folder, policy_path) for block in cut]):
                result.findings += findings
                result.without_policy += without_policy
        result.changed_without_policy = frozenset(path for sha in result.without_policy
                                                  for path in history.paths_changed_by(sha))
    finally:
        history.close()
    return result


def _judge_block(repo_root, shas: list[str], folder, policy_path: str) -> tuple[list[Finding], list[str]]:
    """(the findings, the commits whose parent has no policy) of one block of commits, judged in a worker process
    through a git reader of its own (`gates.history.commit_blocks`)."""
    from gates.history.git_repo import FirstParentHistory
    from gates.history.heap import kept_between_commits

    history = FirstParentHistory(repo_root)
    try:
        result = HistoryResult(policy_path=policy_path)
        with kept_between_commits() as heap:
            _judge(history, repo_root, shas, result, folder, policy_path, heap)
        return result.findings, result.without_policy
    finally:
        history.close()


def _judge(history, repo_root, shas: list[str], result: HistoryResult, folder, policy_path: str, heap) -> None:
    """Judge each commit of `shas` (oldest first) as its own change, adding its findings to `result`."""
    from gates.history import check_change
    from gates.history.forge_reviews import reviews_for_merge
    from gates.history.reused_checkouts import reused_checkouts

    with reused_checkouts():  # G5's import fallback brings one commit's checkouts to the next commit's trees
        for change in history.change_sets(repo_root, shas):
            sha = change.head
            if change.read_bytes_at(change.base, policy_path) is None:
                result.without_policy.append(sha)
            if folder is not None:
                change.forge_reviews, missing = reviews_for_merge(folder, sha, repo_root)
                change.forge_reviews_missing = missing or change.forge_reviews_missing
            else:
                change.forge_reviews_missing = "no --reviews folder of per-merge review exports was given"
            findings = check_change(change, {}, repo_root, judge_is_newer=True)
            if policy_path in change.changed_paths() and adds_only_the_first_ratchet(
                    change.read_at(change.base, policy_path), change.read_at(change.head, policy_path), policy_path):
                # where enforcement starts: before this commit no history was judged, so nothing it decides (the
                # legacy approvals under approval sources included) is a loosening the history could have held
                findings = [f for f in findings if not (f.gate == "G8" and f.path == policy_path)]
            result.findings += findings
            heap.commit_done()


def only_sets_the_first_ratchet(before: str | None, after: str | None, policy_path: str) -> bool:
    """The pull request's policy change sets the ratchet for the first time and nothing else
    (`adds_only_the_first_ratchet`), under a policy that trusts no approval sources.

    Setting the ratchet for the first time then loosens nothing (without it no history was
    judged), so, like a repository's first policy, it needs no covering record (`gates.history.hot_path`).
    Where the policy names `approvals.sources`, the ratchet also decides which YAML approvals count as legacy
    ones (those at the enforce_from commit), so setting it needs a record like any other policy change.
    """
    after_data = _policy_data(after, policy_path)
    approvals = after_data.get("approvals") if after_data is not None else None
    if isinstance(approvals, dict) and approvals.get("sources"):
        return False
    return adds_only_the_first_ratchet(before, after, policy_path)


def adds_only_the_first_ratchet(before: str | None, after: str | None, policy_path: str) -> bool:
    """The policy text `after` adds history.enforce_from to `before`, which had none, and changes nothing else."""
    before_data, after_data = _policy_data(before, policy_path), _policy_data(after, policy_path)
    if before_data is None or after_data is None:
        return False
    if isinstance(before_data.get("history"), dict) and before_data["history"].get(KEY[1]):
        return False
    if not isinstance(after_data.get("history"), dict) or not after_data["history"].get(KEY[1]):
        return False
    if not OBJECT_ID.fullmatch(str(after_data["history"][KEY[1]])):
        return False  # what the schema allows: an object id, not a branch, a tag or HEAD
    return _without_enforce_from(before_data) == _without_enforce_from(after_data)


def _without_enforce_from(policy: dict) -> dict:
    """The policy's data with history.enforce_from (and a history section holding nothing else) left out."""
    rest = {key: value for key, value in policy.items() if key != "history"}
    history = policy.get("history")
    if isinstance(history, dict):
        history = {key: value for key, value in history.items() if key != KEY[1]}
    if history:
        rest["history"] = history
    return rest


@lru_cache(maxsize=256)
def _policy_data(text: str | None, policy_path: str) -> dict | None:
    if text is None:
        return None
    try:
        data = load_yaml(text, policy_path).data
    except InputError:
        return None
    return data if isinstance(data, dict) else None
