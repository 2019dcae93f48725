"""Which approvals count: from a source the author cannot write, by someone who wrote none of the change, still current.

The base policy's `approvals` section names the trusted sources:

- `forge`: the pull request's reviews as the forge exports them (`--reviews FILE`);
  a user's standing `APPROVED` review counts for every record that lists the
  user's `login` among its reviewers (the record as it is on base, or at head for a
  new record);
- `signed-commit`: a commit with the trailer `Design-Approved: <record-id>`,
  reachable from head, that touches no file and whose signature `git verify-commit`
  accepts against `approvals.allowed_signers` read at base; the key's principal
  must be a reviewer of the record.

With sources configured, a reviewer's `decision: approved` in the YAML is a claim,
not an approval, except where the base policy's `history.enforce_from` commit
already held it (a legacy approval, accepted under the rules of its time). Without
sources the YAML decisions are the approvals (declared mode), as before.

Every approval is given at a commit: the forge review's `commit_id`, the approval
commit, `enforce_from` for a legacy approval, and in declared mode the newest
commit of the change with an `Approved-by:` trailer naming the reviewer, else the
base when the reviewer had already approved there. It is stale when the record's
contract differs between that commit and head, and a forge or signed approval given in this
change is stale when a later commit of the change touches any file but a record (the code, the tests, the evidence
the reviewer saw, and the policy or any other file kept in a records folder: only records are judged by
their contract instead); GitHub's "dismiss stale pull request approvals" does
the same on the forge. It counts only when its reviewer is
no author of the record and no author, committer, co-author or signer-off of a
commit in base..head (verified approval commits excepted).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from gates.history.changeset import Commit, Person, SignatureCheck, is_record_path
from gates.history.context import SeriesContext, field_of
from gates.history.contract import contract_changes
from gates.history.forge_reviews import standing_approvals
from gates.history.identity import among, approvers, people_of, person_of, same_person
from gates.model.errors import InputError
from gates.model.identity import Mailmap, identity_of, normalise_email, parse_mailmap
from gates.model.record import parse_record

WRITER_ROLES = (("author", None), ("committer", None), ("co-author", "Co-authored-by"), ("signer-off", "Signed-off-by"))


@dataclass(frozen=True)
class Approval:
    person: Person
    source: str  # "forge" | "signed-commit" | "legacy" | "declared"
    at: str | None  # the commit it was given at; None: in this change, at head
    where: str  # for messages: "forge review by @rita at 1a2b3c4d5e6f"


@dataclass(frozen=True)
class Verdict:
    """An approval and why it does not count (empty `reason`: it counts)."""

    approval: Approval
    reason: str = ""
    independence: bool = False  # the reason is that the approver wrote the change or the record

    @property
    def counts(self) -> bool:
        return not self.reason


class ApprovalBook:
    """The approvals of one change, judged once per `SeriesContext`."""

    def __init__(self, ctx: SeriesContext):
        self._changed_after: dict[str, list[tuple[str, str]]] = {}
        self.ctx = ctx
        self.change = ctx.change
        settings = ctx.policy.section("approvals")
        self.sources: tuple[str, ...] = tuple(settings.get("sources") or ())
        self._settings = settings
        self._records_at: dict[tuple[str, str], dict | None] = {}
        self._signatures: dict[str, SignatureCheck] = {}

    @property
    def verified_mode(self) -> bool:
        return bool(self.sources)

    def _policy_problem(self, message: str) -> None:
        self.ctx.report("G8", self.ctx.policy_path, 1, message, commit=self.change.base)

    @cached_property
    def mailmap(self) -> Mailmap | None:
        path = self._settings.get("mailmap")
        if not path:
            return None
        try:
            text = self.change.read_at(self.change.base, path)
        except InputError as exc:
            self._policy_problem(f"approvals.mailmap {path} on base is unreadable: {exc.message}")
            return None
        if text is None:
            self._policy_problem(f"approvals.mailmap names {path}, which does not exist on base "
                                 f"{self.change.base_ref}")
            return None
        try:
            return parse_mailmap(text, path)
        except InputError as exc:
            self.ctx.report("G8", path, exc.line, exc.message, commit=self.change.base)
            return None

    @cached_property
    def forge_reviewers(self) -> dict[str, str]:
        """Forge login (case-folded) -> email, from the base policy: whose reviews count, as whom."""
        mapping = self._settings.get("forge_reviewers") or {}
        if "forge" in self.sources and not mapping:
            self._policy_problem("approvals.sources trusts the forge, but approvals.forge_reviewers (the login and "
                                 "email of each reviewer whose forge review counts) is not set on base "
                                 f"{self.change.base_ref}; no forge review can count")
        return {str(login).casefold(): str(email) for login, email in mapping.items()}

    @cached_property
    def allowed_signers(self) -> bytes | None:
        path = self._settings.get("allowed_signers")
        if "signed-commit" not in self.sources:
            return None
        data = self.change.read_bytes_at(self.change.base, path) if path else None
        if data is None:
            self._policy_problem(f"approvals.sources trusts signed-commit, but the allowed-signers file "
                                 f"{path or '(approvals.allowed_signers unset)'} does not exist on base "
                                 f"{self.change.base_ref}; no signed approval can be verified")
        return data

    @cached_property
    def enforce_from(self) -> str | None:
        rev = self.ctx.policy.section("history").get("enforce_from")
        if not rev:
            return None
        sha = self.change.resolve_object_id(str(rev))
        if sha is None or not self.change.is_ancestor(sha, self.change.head):
            self._policy_problem(f"history.enforce_from {rev} is not a commit in the history of head; "
                                 "no approval is accepted as legacy")
            return None
        return sha

    @cached_property
    def approval_commits(self) -> list[Commit]:
        return self.change.approval_commits()

    def signature(self, commit: Commit) -> SignatureCheck:
        if commit.sha not in self._signatures:
            signers = self.allowed_signers
            self._signatures[commit.sha] = (self.change.verify_signature(commit.sha, signers) if signers is not None
                                            else SignatureCheck(None, "no allowed-signers file on base"))
        return self._signatures[commit.sha]

    @staticmethod
    def is_approval_commit(commit: Commit) -> bool:
        """An empty, single-parent commit with a `Design-Approved:` trailer: it approves and writes nothing."""
        return bool(commit.approves) and not commit.paths and not commit.is_merge

    @cached_property
    def writers(self) -> list[tuple[Person, str, str]]:
        """(person, commit sha, role) for everyone who wrote a commit of the change (approval commits excepted)."""
        found = []
        for commit in self.change.commits:
            if self.is_approval_commit(commit):
                continue
            for role, trailer in WRITER_ROLES:
                if trailer:
                    found.extend((p, commit.sha, role) for p in commit.trailer_people(trailer))
                else:
                    found.append((getattr(commit, role), commit.sha, role))
        return found

    def wrote(self, person: Person) -> tuple[str, str] | None:
        """(sha, role) of a commit in base..head that `person` wrote, else None."""
        for writer, sha, role in self.writers:
            if same_person(writer, person, self.mailmap):
                return sha, role
        return None

    def same(self, a: Person, b: Person) -> bool:
        return same_person(a, b, self.mailmap)

    def same_email(self, a: str, b: str) -> bool:
        """The two addresses name one person (normalised, through the base .mailmap); names do not count."""
        first, second = identity_of("", a, self.mailmap), identity_of("", b, self.mailmap)
        return bool(first.email) and first.email == second.email

    def is_among(self, person: Person, people) -> bool:
        return among(person, people, self.mailmap)

    def front_matter_at(self, sha: str, path: str) -> dict | None:
        key = (sha, path)
        if key not in self._records_at:
            front = None
            try:
                text = self.change.read_at(sha, path)
                if text is not None:
                    front = parse_record(text, path, self.change.repo_root).front_matter
            except InputError:
                front = None
            self._records_at[key] = front
        return self._records_at[key]

    def _declared(self, path: str, judged: dict | None, base_front: dict | None) -> list[Approval]:
        found = []
        before = [p for _, p in approvers(field_of(base_front, "reviewers"))]
        for _, person in approvers(field_of(judged, "reviewers")):
            trailer_commit = next((c for c in self.change.commits if path in c.paths and any(
                self.same(person, p) for p in c.trailer_people("Approved-by"))), None)
            if trailer_commit is not None:
                found.append(Approval(person, "declared", trailer_commit.sha,
                                      f"'Approved-by' on commit {trailer_commit.sha[:12]}"))
            elif self.is_among(person, before):
                found.append(Approval(person, "declared", self.change.merge_base, f"approval on base {self.change.base_ref}"))
            else:
                found.append(Approval(person, "declared", None, "approval declared in this change"))
        return found

    def _legacy(self, path: str, current: dict | None) -> list[Approval]:
        if self.enforce_from is None:
            return []
        then = self.front_matter_at(self.enforce_from, path)
        still = [p for _, p in approvers(field_of(current, "reviewers"))]
        return [Approval(p, "legacy", self.enforce_from, f"legacy approval held at {self.enforce_from[:12]}")
                for _, p in approvers(field_of(then, "reviewers")) if self.is_among(p, still)]

    def _forge(self, reviewers) -> tuple[list[Approval], list[Verdict]]:
        if "forge" not in self.sources or self.change.forge_reviews is None:
            return [], []
        found, rejected = [], []
        by_login = {}
        for entry in reviewers if isinstance(reviewers, list) else []:
            login = entry.get("login") if isinstance(entry, dict) else None
            if isinstance(login, str) and person_of(entry) is not None:
                by_login.setdefault(login.casefold(), person_of(entry))
        for login, review in standing_approvals(self.change.forge_reviews).items():
            person = by_login.get(login)
            if person is None:
                continue
            sha = self.change.resolve_commit(review.commit_id) if review.commit_id else None
            approval = Approval(person, "forge", sha, f"forge review by @{review.login} at "
                                f"{(review.commit_id or '(no commit)')[:12]}")
            refusal = self._forge_refusal(review, person, sha)
            if refusal:
                rejected.append(Verdict(approval, refusal))
            else:
                found.append(approval)
        return found, rejected

    def _forge_refusal(self, review, person: Person, sha: str | None) -> str | None:
        """Why a standing forge approval does not count for `person`, or None when it does.

        The login must be one the base policy lists, for this person's email: the record's
        author writes the record's `login`, so it cannot decide whose account speaks for whom.
        """
        email = self.forge_reviewers.get(review.login.casefold())
        if email is None:
            return f"@{review.login} is not among approvals.forge_reviewers on base {self.change.base_ref}"
        if not self.same_email(person.email, email):
            return (f"@{review.login} reviews as {email} (approvals.forge_reviewers on base), but the record gives "
                    f"that login to {person.email}")
        if not review.has_write_access:
            return (f"@{review.login} has no write access to the repository (author_association "
                    f"{review.association})")
        if sha is None:
            return f"the review's commit {review.commit_id or '(none)'} is not in this clone"
        return None

    def _signed(self, record_id: str, reviewers) -> tuple[list[Approval], list[Verdict]]:
        if "signed-commit" not in self.sources:
            return [], []
        found, rejected = [], []
        _ = self.allowed_signers  # a trusted source without its signers file is reported even with no approval commit
        for commit in self.approval_commits:
            if record_id not in commit.approves:
                continue
            check = self.signature(commit)
            where = f"approval commit {commit.sha[:12]}"
            who = next((p for p in reviewers if check.principal and
                        normalise_email(p.email) == normalise_email(check.principal)), None)
            approval = Approval(who or Person(check.principal or commit.author.name, check.principal or ""),
                                "signed-commit", commit.sha, where)
            if check.principal is None:
                rejected.append(Verdict(approval, f"its signature is not from a key in the allowed signers on base "
                                        f"({check.detail})"))
            elif commit.paths or commit.is_merge:
                rejected.append(Verdict(approval, "an approval commit must be an empty, single-parent commit"))
            elif who is None:
                rejected.append(Verdict(approval, f"the signer {check.principal} is not a reviewer of the record"))
            else:
                found.append(approval)
        return found, rejected

    def judge(self, record_id: str, path: str, judged: dict | None, base_front: dict | None,
              head_front: dict | None, *, of_this_change: bool = False) -> list[Verdict]:
        """Every approval of a record, with why each does not count.

        `judged` is the version whose reviewers are read (head for a changed record,
        base for a record that covers a hot path); `head_front` is the contract the
        approval must still match. `of_this_change` (a hot-path change): a signed approval
        commit must be one of this change, as a forge review must be one of its pull request;
        an approval commit already on the base approved an earlier change, not this one.
        """
        authors = [p for front in (base_front, head_front, judged) for p in people_of(field_of(front, "authors"))]
        if not self.verified_mode:
            candidates, verdicts = self._declared(path, judged, base_front), []
        else:
            listed = base_front if base_front is not None else head_front
            reviewer_people = [p for front in (base_front, head_front) for p in people_of(field_of(front, "reviewers"))]
            forge, forge_rejected = self._forge(field_of(listed, "reviewers"))
            signed, signed_rejected = self._signed(record_id, reviewer_people)
            candidates = self._legacy(path, judged) + forge + signed
            verdicts = forge_rejected + signed_rejected
        for approval in candidates:
            verdicts.append(self._verdict(approval, path, authors, head_front, of_this_change))
        return verdicts

    def _verdict(self, approval: Approval, path: str, authors: list[Person], head_front: dict | None,
                 of_this_change: bool = False) -> Verdict:
        person = approval.person
        if self.is_among(person, authors):
            return Verdict(approval, "is an author of the record", independence=True)
        wrote = self.wrote(person)
        if wrote is not None:
            sha, role = wrote
            return Verdict(approval, f"is the {role} of commit {sha[:12]} in this change", independence=True)
        if approval.at is not None and head_front is not None:
            changed = contract_changes(self.front_matter_at(approval.at, path), head_front)
            if changed:
                return Verdict(approval, f"is stale: the contract changed after it ({', '.join(changed)})")
        # A forge review belongs to this pull request, wherever its commit now lies (a review
        # at a commit that reached the base another way covers nothing after it); a signed
        # approval commit already on the base approves the record, not a later hot-path change.
        in_change = approval.at is not None and not self.change.is_ancestor(approval.at, self.change.merge_base)
        if of_this_change and approval.source == "signed-commit" and not in_change:
            return Verdict(approval, f"was given before this change (it is on base {self.change.base_ref}): it "
                           "approved the change it followed, and nobody has approved this one; add a signed approval "
                           "commit to this change")
        if approval.at is not None and (approval.source == "forge" or (approval.source == "signed-commit" and in_change)):
            later = self.changed_after(approval.at)
            if later:
                (first, sha), more = later[0], len(later) - 1
                return Verdict(approval, f"is stale: {first} changed after it (commit {sha[:12]}"
                               f"{f', and {more} more file(s)' if more else ''}); a review counts for the change "
                               "it saw, so review again")
        return Verdict(approval)

    def changed_after(self, sha: str) -> list[tuple[str, str]]:
        """(path, commit) of every file, records excepted, that would merge other than the
        review at `sha` saw it.

        Compared by content, not by walking commits: a file this change changes (base to
        head) or that the reviewed commit had changed (its merge base to it) must be at head
        what it was at `sha`, over the same base content as then. So a later commit, a merge
        commit's own edits, a force push and a merge that keeps the branch's side of a file
        the base has since changed (`-s ours`) all count, while a merge that only brings the
        base in does not. Records are judged
        by their contract instead (a reviewer's decision recorded after the review leaves
        the contract as it was).
        """
        if sha not in self._changed_after:
            change = self.change
            ours = {p for c in change.changed for p in (c.path, c.old_path) if p}
            reviewed_base = change.merge_base_of(sha, change.base)
            theirs = set(change.paths_differing(reviewed_base, sha)) if reviewed_base else set()
            differing = set(change.paths_differing(sha, change.head))
            # The base under a file moved since the review: the diff that merges is not the one seen.
            moved = set(change.paths_differing(reviewed_base, change.merge_base)) if reviewed_base else set()
            found = []
            for path in sorted((differing | moved) & (ours | theirs)):
                # Only a record is judged by its contract; a policy, signers file or page kept beside the records is not.
                if not is_record_path(path, change.record_dirs) or path == self.ctx.policy_path:
                    found.append((path, change.newest_commit_touching(sha, path) or change.head))
            self._changed_after[sha] = found
        return self._changed_after[sha]

    def claims_without_approval(self, judged: dict | None, verdicts: list[Verdict]) -> list[tuple[int, Person]]:
        """Reviewers declared `approved` in `judged` with no verified or legacy approval behind them."""
        if not self.verified_mode:
            return []
        backed = [v.approval.person for v in verdicts]
        return [(i, p) for i, p in approvers(field_of(judged, "reviewers")) if not self.is_among(p, backed)]

    def describe_sources(self) -> str:
        parts = []
        if "forge" in self.sources:
            parts.append("a standing forge review by a reviewer's login" + (
                "" if self.change.forge_reviews is not None else f" ({self.change.forge_reviews_missing})"))
        if "signed-commit" in self.sources:
            parts.append("a signed approval commit ('Design-Approved: <record-id>')")
        return " or ".join(parts)


def describe(verdicts: list[Verdict]) -> str:
    """`Rita <r@x> (forge review by @rita at 1a2b...) is stale: ...; ...` for a finding."""
    return "; ".join(f"{v.approval.person} ({v.approval.where}) {v.reason}" for v in verdicts if not v.counts)
