"""The forge's review export: who approved the pull request, at which commit.

CI fetches GitHub's `GET /repos/{owner}/{repo}/pulls/{number}/reviews` (for
example `gh api --paginate --slurp repos/o/r/pulls/7/reviews > "$RUNNER_TEMP/reviews.json"`)
and passes the file with `gate-check --base ... --reviews FILE`. The file is a JSON
list of reviews `{"user": {"login": ...}, "state": ..., "commit_id": ..., "submitted_at": ...}`,
or a list of such lists (one per page, as `--slurp` writes it).

A review whose `author_association` (when the export has it) is not `OWNER`, `MEMBER` or
`COLLABORATOR` comes from an account without write access to the repository; it is kept
here and refused by G8.

The merged history (`gate-check --history --reviews DIR`) reads the export of each merged
commit from a folder: `DIR/<merged commit sha>.json`, the reviews of the pull request that
commit merged, as CI fetched them from the forge for that commit (`reviews_for_merge`). A
merged commit without its export has no forge approval.

The latest review of each user decides, as on the forge: `COMMENTED` and `PENDING`
reviews do not change a user's standing; a later `CHANGES_REQUESTED` or `DISMISSED`
withdraws an earlier `APPROVED`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gates.model.errors import InputError, UsageError

DECIDING_STATES = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
WRITE_ACCESS_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ForgeReview:
    login: str
    state: str
    commit_id: str
    submitted_at: str
    association: str = ""  # GitHub's author_association, upper case; "" when the export lacks it

    @property
    def has_write_access(self) -> bool:
        """False when the export says the account has no write access to the repository."""
        return not self.association or self.association in WRITE_ACCESS_ASSOCIATIONS


def _review_of(entry, path: str, index: int) -> ForgeReview:
    user = entry.get("user") if isinstance(entry, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    state, commit_id = (entry.get("state"), entry.get("commit_id")) if isinstance(entry, dict) else (None, None)
    if not (isinstance(login, str) and login and isinstance(state, str)):
        raise InputError(path, 1, f"review {index}: expected an object with user.login and state, as GitHub's "
                         "pull-request reviews API returns")
    submitted = entry.get("submitted_at")
    association = entry.get("author_association")
    return ForgeReview(login, state.upper(), commit_id if isinstance(commit_id, str) else "",
                       submitted if isinstance(submitted, str) else "",
                       association.upper() if isinstance(association, str) else "")


def parse_reviews(text: str, path: str) -> list[ForgeReview]:
    """Every review in the export, in file order; `InputError` names the file on bad input."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(path, 1, "not a review export: JSON nested too deeply to read") from None
    if not isinstance(data, list):
        raise InputError(path, 1, "expected a JSON list of reviews (GitHub's pull-request reviews API)")
    entries = []
    for item in data:
        entries.extend(item if isinstance(item, list) else [item])
    return [_review_of(entry, path, index) for index, entry in enumerate(entries)]


def _outside_repository(path: Path, repo_root: Path) -> Path:
    resolved, repo_root = Path(path).resolve(), Path(repo_root).resolve()
    if resolved == repo_root or repo_root in resolved.parents:
        raise UsageError(f"--reviews {path}: the forge's review export must come from outside the repository "
                         "(a file the change under review cannot write), e.g. $RUNNER_TEMP/reviews.json")
    return resolved


def reviews_folder(folder: Path, repo_root: Path) -> Path:
    """`--reviews DIR` of a history run: a folder outside the repository."""
    resolved = _outside_repository(folder, repo_root)
    if not resolved.is_dir():
        raise UsageError(f"--reviews {folder}: with --history, --reviews names a folder holding one review export "
                         "per merged commit, <commit sha>.json")
    return resolved


def reviews_for_merge(folder: Path, sha: str, repo_root: Path) -> tuple[list[ForgeReview] | None, str]:
    """(the export archived for merged commit `sha`, else None; why there is none)."""
    file = Path(folder) / f"{sha}.json"
    if not file.is_file():
        return None, f"no review export {file} for this merged commit"
    return load_reviews(file, repo_root), ""


def load_reviews(file: Path, repo_root: Path) -> list[ForgeReview]:
    """Read `--reviews FILE`. The file must lie outside the repository: a change cannot write it."""
    file = Path(file)
    resolved = _outside_repository(file, repo_root)
    try:
        data = resolved.read_bytes()
    except OSError as exc:
        raise UsageError(f"--reviews {file}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise InputError(str(file), 1, f"review export larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(str(file), 1, f"not valid UTF-8 (byte offset {exc.start})") from None
    return parse_reviews(text, str(file))


def standing_approvals(reviews: list[ForgeReview]) -> dict[str, ForgeReview]:
    """login (case-folded) -> the review that stands, for users whose latest deciding review approves."""
    latest: dict[str, tuple[tuple[str, int], ForgeReview]] = {}
    for order, review in enumerate(reviews):
        if review.state not in DECIDING_STATES:
            continue
        key = review.login.casefold()
        when = (review.submitted_at, order)
        if key not in latest or when >= latest[key][0]:
            latest[key] = (when, review)
    return {login: review for login, (_, review) in latest.items() if review.state == "APPROVED"}
