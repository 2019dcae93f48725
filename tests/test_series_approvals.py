"""Approvals that count, walked through real git repositories, and the ways an author tried to fake one.

Declared mode (no `approvals.sources` in the base policy) keeps the YAML decisions as
the approvals but dismisses stale ones and recognises authors under aliases.
Verified mode counts only forge reviews and signed approval commits (signatures
checked by a fake verifier here, and once end to end with real ssh keys).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from gates.checks.runner import check_records
from gates.frontends.cli import main as gate_check
from gates.history.changeset import SignatureCheck
from gates.history.contract import contract_changes
from gates.history.git_repo import ChangeSet
from gates.model.policy import POLICY_PATH
from gitrepo_builder import ADA, BEN, MAX, POLICY, RITA, GitRepo, Who, record_text, seeded_repo

REC = "docs/design/splitkv.md"
KERNEL = "kernels/decode_attention/kernel_partial.py"
KERNEL_GLOB = "kernels/decode_attention/**"
SIGNERS = ".design-gates/allowed_signers"
NUMERIC = {"oracle": "validation.oracle:decode_attention_fp64", "suite": "validation/suites/test_numeric.py",
           "tolerances": [{"metric": "rel_l2", "dtype": "bf16", "max": 0.015625}]}
LOOSE = {**NUMERIC, "tolerances": [{"metric": "rel_l2", "dtype": "bf16", "max": 1.0}]}
SIGNED_POLICY = POLICY + f"approvals:\n  sources: [signed-commit]\n  allowed_signers: {SIGNERS}\n"
FORGE_POLICY = POLICY + "approvals:\n  sources: [forge]\n  forge_reviewers: {rita-o: rita@kernels.example}\n"


SCHEMA_COMPLETION = {"unknowns": [], "claim_level": "kernel", "independence": {"defect": False},
                     "self_check": {f"G{n}": "n/a" for n in range(9)}}


def record(*, numeric=NUMERIC, status="approved", reviewers=((RITA, "approved"),), extra=None, **kw) -> str:
    """The split-KV record with a numeric contract, complete enough for the record schema."""
    return record_text("splitkv", status=status, reviewers=reviewers, questions_decided=True,
                       extra={"numeric_contract": numeric, **SCHEMA_COMPLETION, **(extra or {})}, **kw)


def messages(findings, gate: str, path: str) -> list[str]:
    return [f.message for f in findings if f.gate == gate and f.path == path]


def has(findings, gate: str, path: str, text: str) -> bool:
    found = messages(findings, gate, path)
    assert any(text in m for m in found), f"no {gate} finding at {path} with {text!r}; got {found}"
    return True


def commit_as(repo, message: str, *, author: Who, committer: Who) -> str:
    """A commit whose committer is not the maintainer (the builder always commits as Max)."""
    repo.git("add", "-A")
    env = dict(os.environ, GIT_AUTHOR_NAME=author.name, GIT_AUTHOR_EMAIL=author.email,
               GIT_COMMITTER_NAME=committer.name, GIT_COMMITTER_EMAIL=committer.email,
               GIT_CONFIG_NOSYSTEM="1", HOME=str(repo.root.parent))
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo.root, env=env, check=True, capture_output=True)
    return repo.sha("HEAD")


@pytest.fixture
def repo(tmp_path):
    """Declared mode: main holds the split-KV record, approved by Rita, recorded by Max."""
    repo = seeded_repo(tmp_path / "repo")
    repo.write(REC, record())
    repo.commit("Record Rita's approval of the split-KV design", who=MAX, trailers=[RITA.trailer("Approved-by")])
    return repo


def test_a_kernel_change_under_an_independently_approved_record_passes(repo):
    repo.branch("partial")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=ADA)
    assert repo.check() == []


def test_raising_a_tolerance_and_widening_covers_dismisses_the_approval(repo):
    repo.branch("loosen")
    repo.write(REC, record(numeric=LOOSE, covers=("kernels/**",)))
    repo.write(KERNEL, "x = 1\n")
    repo.commit("Loosen the tolerance, widen covers and edit the kernel", who=ADA)
    findings = repo.check()
    has(findings, "G8", REC, "approved without an independent approval in this change: Rita Okafor "
        "<rita@kernels.example> (approval on base main) is stale: the contract changed after it "
        "(covers, numeric_contract.tolerances)")
    has(findings, "G8", KERNEL, "hot-path change without an approval that counts")


def test_a_re_review_recorded_after_the_contract_change_counts_again(repo):
    repo.branch("loosen")
    repo.write(REC, record(numeric=LOOSE, status="in-review", reviewers=((RITA, "pending"),)))
    repo.commit("Loosen the tolerance", who=ADA)
    repo.write(REC, record(numeric=LOOSE))
    repo.commit("Record Rita's re-review", who=MAX, trailers=[RITA.trailer("Approved-by")])
    assert repo.check() == []


def test_withdrawing_the_record_in_the_change_that_edits_its_kernel(repo):
    repo.branch("withdraw")
    repo.write(REC, record(status="withdrawn"))
    repo.write(KERNEL, "x = 1\n")
    repo.commit("Withdraw the design and edit the kernel", who=ADA)
    has(repo.check(), "G8", KERNEL, "this change withdraws the records covering it (splitkv (withdrawn))")


def test_the_approver_as_committer_of_someone_else_s_commit_is_not_independent(repo):
    repo.branch("committed-by-rita")
    repo.write(KERNEL, "x = 1\n")
    sha = commit_as(repo, "feat(kernels): partial kernel", author=ADA, committer=RITA)
    has(repo.check(), "G8", KERNEL, f"is the committer of commit {sha[:12]} in this change")


def test_the_approver_s_sign_off_makes_them_a_writer(repo):
    repo.branch("signed-off")
    repo.write(KERNEL, "x = 1\n")
    sha = repo.commit("feat(kernels): partial kernel", who=ADA, trailers=[RITA.trailer("Signed-off-by")])
    has(repo.check(), "G8", KERNEL, f"self-approved hot-path change: {KERNEL} is L4")
    has(repo.check(), "G8", KERNEL, f"is the signer-off of commit {sha[:12]}")


@pytest.mark.parametrize(
    "alias",
    [
        pytest.param(Who("R. Okafor", "rita+laptop@kernels.example"), id="plus-tag-email"),
        pytest.param(Who("Rita\u200b Okafor", "r@home.example"), id="zero-width-name"),
        pytest.param(Who("RITA OKAFOR", "RITA@Kernels.Example"), id="case"),
    ],
)
def test_the_approver_writing_under_an_alias_is_still_the_approver(repo, alias):
    repo.branch("alias")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=alias)
    has(repo.check(), "G8", KERNEL, "self-approved hot-path change")


def test_a_mailmap_at_base_unmasks_a_private_address(repo):
    repo.write(POLICY_PATH, POLICY + "approvals:\n  mailmap: .mailmap\n")
    repo.write(".mailmap", "Rita Okafor <rita@kernels.example> <ro@home.example>\n")
    repo.commit("Map reviewers' private addresses", who=MAX)
    repo.branch("private")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=Who("ro", "ro@home.example"))
    has(repo.check(), "G8", KERNEL, "self-approved hot-path change")


def test_a_mailmap_the_policy_names_but_base_lacks_is_reported(repo):
    repo.write(POLICY_PATH, POLICY + "approvals:\n  mailmap: .mailmap\n")
    repo.commit("Name a mailmap", who=MAX)
    repo.branch("partial")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=ADA)
    has(repo.check(), "G8", POLICY_PATH, "approvals.mailmap names .mailmap, which does not exist on base")


@pytest.fixture
def signed(monkeypatch):
    """sha -> principal: the commits the fake verifier accepts, and whose key signed them."""
    principals: dict[str, str] = {}
    monkeypatch.setattr(ChangeSet, "verify_signature",
                        lambda self, sha, allowed: SignatureCheck(principals.get(sha), "not signed by a listed key"))
    return principals


def verified_repo(tmp_path, policy: str = SIGNED_POLICY):
    repo = seeded_repo(tmp_path / "repo")
    repo.write(POLICY_PATH, policy)
    repo.write(SIGNERS, f"{RITA.email} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTheFakeVerifier\n")
    repo.commit("Count only verified approvals", who=MAX)
    return repo


def approve(repo, signed: dict, *, who: Who = RITA, principal: str | None = "", record_id: str = "splitkv") -> str:
    sha = repo.commit(f"Approve the {record_id} design", who=who, trailers=[f"Design-Approved: {record_id}"])
    if principal is not None:
        signed[sha] = principal or who.email
    return sha


def test_a_yaml_approval_is_a_claim_when_the_base_policy_trusts_sources(tmp_path, signed):
    repo = verified_repo(tmp_path)
    repo.branch("a")
    repo.write(REC, record())
    repo.commit("docs(design): split-KV record, approved by Rita", who=ADA)
    findings = repo.check()
    has(findings, "G8", REC, "Rita Okafor <rita@kernels.example>'s 'decision: approved' is a claim, not an approval")
    has(findings, "G8", REC, "approved without an independent approval in this change: no approval from a signed "
        "approval commit")


def test_a_signed_approval_commit_counts_here_and_a_later_kernel_change_needs_its_own(tmp_path, signed):
    repo = verified_repo(tmp_path)
    repo.branch("a")
    repo.write(REC, record(status="in-review", reviewers=((RITA, "pending"),)))
    repo.commit("docs(design): split-KV record", who=ADA)
    approve(repo, signed)
    repo.write(REC, record())
    repo.commit("Record Rita's signed approval", who=MAX)
    assert repo.check() == []
    repo.merge("a")
    repo.branch("b")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=ADA)
    has(repo.check(), "G8", KERNEL, "was given before this change (it is on base main): it approved the change it "
        "followed, and nobody has approved this one")
    approve(repo, signed)
    assert repo.check() == []
    repo.checkout("main")
    repo.branch("loosen")
    repo.write(REC, record(numeric=LOOSE))
    repo.write(KERNEL, "x = 2\n")
    repo.commit("Loosen the tolerance and edit the kernel", who=ADA)
    findings = repo.check()
    has(findings, "G8", KERNEL, "is stale: the contract changed after it (numeric_contract.tolerances)")
    has(findings, "G8", REC, "approved without an independent approval")


@pytest.mark.parametrize(
    "how, reason",
    [
        pytest.param("unsigned", "its signature is not from a key in the allowed signers on base", id="unsigned"),
        pytest.param("not-a-reviewer", "the signer ben@kernels.example is not a reviewer of the record", id="stranger"),
        pytest.param("touches-files", "an approval commit must be an empty, single-parent commit", id="not-empty"),
        pytest.param("other-record", "no approval from a signed approval commit", id="other-record"),
    ],
)
def test_approval_commits_that_do_not_count(tmp_path, signed, how, reason):
    repo = verified_repo(tmp_path)
    repo.branch("a")
    repo.write(REC, record(status="in-review", reviewers=((RITA, "pending"),)))
    repo.commit("docs(design): split-KV record", who=ADA)
    if how == "unsigned":
        approve(repo, signed, principal=None)
    elif how == "not-a-reviewer":
        approve(repo, signed, who=BEN)
    elif how == "touches-files":
        repo.write("docs/notes.md", "Rita was here\n")
        approve(repo, signed)
    else:
        approve(repo, signed, record_id="paged")
    repo.write(REC, record())
    repo.commit("Record Rita's approval", who=MAX)
    has(repo.check(), "G8", REC, reason)


def test_a_signed_approval_by_someone_who_wrote_the_change_does_not_count(tmp_path, signed):
    repo = verified_repo(tmp_path)
    repo.branch("a")
    repo.write(REC, record(status="in-review", reviewers=((RITA, "pending"),)))
    sha = repo.commit("docs(design): split-KV record", who=ADA, trailers=[RITA.trailer("Co-authored-by")])
    approve(repo, signed)
    repo.write(REC, record())
    repo.commit("Record Rita's approval", who=MAX)
    has(repo.check(), "G8", REC, f"is the co-author of commit {sha[:12]} in this change")


def test_legacy_approvals_at_enforce_from_are_accepted_until_the_contract_changes(tmp_path, signed):
    repo = seeded_repo(tmp_path / "repo")
    repo.write(REC, record())
    legacy = repo.commit("Record Rita's approval (before verified approvals)", who=MAX)
    repo.write(POLICY_PATH, SIGNED_POLICY + f"history:\n  enforce_from: {legacy}\n")
    repo.write(SIGNERS, f"{RITA.email} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTheFakeVerifier\n")
    repo.commit("Count only verified approvals from here on", who=MAX)
    repo.branch("partial")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=ADA)
    assert repo.check() == []
    repo.write(REC, record(numeric=LOOSE))
    repo.commit("Loosen the tolerance", who=ADA)
    findings = repo.check()
    has(findings, "G8", KERNEL, f"(legacy approval held at {legacy[:12]}) is stale")


def test_without_enforce_from_a_yaml_approval_on_base_is_no_approval(tmp_path, signed):
    repo = seeded_repo(tmp_path / "repo")
    repo.write(REC, record())
    repo.write(POLICY_PATH, SIGNED_POLICY)
    repo.write(SIGNERS, f"{RITA.email} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTheFakeVerifier\n")
    repo.commit("Record and policy", who=MAX)
    repo.branch("partial")
    repo.write(KERNEL, "x = 1\n")
    repo.commit("feat(kernels): partial kernel", who=ADA)
    has(repo.check(), "G8", KERNEL, "hot-path change without an approval that counts")


def forge_setup(tmp_path):
    repo = verified_repo(tmp_path, FORGE_POLICY)
    repo.branch("a")
    reviewers = [dict(RITA.as_dict(), decision="approved", login="rita-o")]
    repo.write(REC, record(extra={"reviewers": reviewers}))
    head = repo.commit("docs(design): split-KV record", who=ADA)
    return repo, head


def review(login: str, state: str, commit_id: str, when: str) -> dict:
    return {"user": {"login": login}, "state": state, "commit_id": commit_id, "submitted_at": when}


def run_with_reviews(repo, tmp_path, capsys, reviews) -> tuple[int, str]:
    file = tmp_path / "reviews.json"
    file.write_text(json.dumps(reviews), encoding="utf-8")
    code = gate_check(["--base", "main", "--reviews", str(file), "--gate", "G8", "--repo-root", str(repo.root)])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_standing_forge_approval_counts(tmp_path, capsys):
    repo, head = forge_setup(tmp_path)
    code, out = run_with_reviews(repo, tmp_path, capsys, [
        review("ada-l", "COMMENTED", head, "2026-12-01T09:00:00Z"),
        review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z"),
        review("rita-o", "COMMENTED", head, "2026-12-01T11:00:00Z"),
    ])
    assert code == 0, out


@pytest.mark.parametrize(
    "later, text",
    [
        pytest.param("CHANGES_REQUESTED", "approved without an independent approval", id="changes-requested-later"),
        pytest.param("DISMISSED", "approved without an independent approval", id="dismissed"),
    ],
)
def test_a_later_forge_review_withdraws_the_approval(tmp_path, capsys, later, text):
    repo, head = forge_setup(tmp_path)
    code, out = run_with_reviews(repo, tmp_path, capsys, [
        review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z"),
        review("rita-o", later, head, "2026-12-01T11:00:00Z"),
    ])
    assert code == 1 and text in out, out


def test_a_forge_approval_before_a_contract_change_is_stale(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    repo.write(REC, record(numeric=LOOSE, extra={"reviewers": [dict(RITA.as_dict(), decision="approved",
                                                                     login="rita-o")]}))
    repo.commit("Loosen the tolerance after the review", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 1 and f"forge review by @rita-o at {reviewed[:12]}) is stale" in out, out


def test_a_forge_approval_before_a_code_change_in_the_same_change_is_stale(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\n# tuned\n")
    later = repo.commit("Tune the kernel after the review", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 1, out
    assert (f"is stale: kernels/decode_attention/api.py changed after it (commit {later[:12]}); a review counts for "
            "the change it saw, so review again") in out


def _test_commit_under_the_approved_review(tmp_path, capsys, who: Who) -> tuple[str, int, str]:
    """A test commit by `who` in a change Rita (login rita-o) approved after it: (its sha, exit code, output)."""
    repo, _ = forge_setup(tmp_path)
    repo.write("tests/test_api.py", repo.read("tests/test_api.py") + "\n# one more case\n")
    sha = repo.commit("Test one more case", who=who)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", sha, "2026-12-01T10:00:00Z")])
    return sha, code, out


def test_a_reviewer_who_pushed_a_commit_under_the_forge_no_reply_address_is_its_author(tmp_path, capsys):
    sha, code, out = _test_commit_under_the_approved_review(
        tmp_path, capsys, Who("R. O.", "4512345+rita-o@users.noreply.github.com"))
    assert code == 1, out
    assert f"(forge review by @rita-o at {sha[:12]}) is the author of commit {sha[:12]} in this change" in out


def test_a_reviewer_who_commits_under_a_look_alike_of_her_name_is_its_author_in_forge_mode(tmp_path, capsys):
    sha, code, out = _test_commit_under_the_approved_review(
        tmp_path, capsys, Who("R\u0456ta Okafor", "r.okafor@home.example"))  # Cyrillic і
    assert code == 1, out
    assert f"(forge review by @rita-o at {sha[:12]}) is the author of commit {sha[:12]} in this change" in out


def test_someone_else_s_no_reply_address_leaves_the_forge_approval_standing(tmp_path, capsys):
    _, code, out = _test_commit_under_the_approved_review(
        tmp_path, capsys, Who("Ada", "4500001+ada-l@users.noreply.github.com"))
    assert code == 0, out


def _merge_main_into_a(repo, *, also_write: dict | None = None) -> str:
    """Bring a commit of main into branch `a` by a merge commit; `also_write` edits the merge's own tree."""
    repo.checkout("main")
    repo.write("docs/notes.md", "A note on main.\n")
    repo.commit("docs: a note", who=MAX)
    repo.checkout("a")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "main", who=ADA)
    for path, text in (also_write or {}).items():
        repo.write(path, text)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Merge branch 'main' into a", who=ADA)
    return repo.sha("HEAD")


def test_a_merge_that_only_brings_the_base_in_keeps_a_forge_approval(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    _merge_main_into_a(repo)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 0, out


def test_a_merge_commit_that_edits_the_kernel_makes_a_forge_approval_stale(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    kernel = "kernels/decode_attention/api.py"
    merge = _merge_main_into_a(repo, also_write={kernel: repo.read(kernel) + "\nSCALE = 1.01\n"})
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 1, out
    assert f"is stale: {kernel} changed after it (commit {merge[:12]})" in out, out


def test_a_merge_that_keeps_the_branchs_side_over_a_later_base_fix_makes_the_approval_stale(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    kernel = "kernels/decode_attention/api.py"
    repo.checkout("main")
    repo.write(kernel, repo.read(kernel) + "\nCHECKED = True  # a fix reviewed on main\n")
    repo.commit("fix(kernels): check the shapes", who=MAX)
    repo.checkout("a")
    repo.git("merge", "-q", "-s", "ours", "-m", "Merge branch 'main' into a", "main", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 1 and f"is stale: {kernel} changed after it" in out, out


def test_a_review_at_a_commit_that_reached_the_base_covers_nothing_after_it(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    kernel = "kernels/decode_attention/api.py"
    repo.write(kernel, repo.read(kernel) + "\nSCALE = 1.01\n")
    repo.commit("Tune the kernel after the review", who=ADA)
    repo.checkout("main")
    repo.git("merge", "-q", "--ff-only", reviewed, who=MAX)  # the reviewed commit lands by another route
    repo.checkout("a")
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 1 and f"is stale: {kernel} changed after it" in out, out


def test_recording_the_reviewers_decision_after_the_review_keeps_it(tmp_path, capsys):
    repo, reviewed = forge_setup(tmp_path)
    repo.write(REC, repo.read(REC).replace("# Split", "# Split", 1) + "\nReviewed on the forge.\n")
    repo.commit("Note the review in the record", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 0, out


def test_a_login_the_base_policy_does_not_list_approves_nothing(tmp_path, capsys):
    repo, _ = forge_setup(tmp_path)
    reviewers = [dict(RITA.as_dict(), decision="approved", login="sam-sock")]
    repo.write(REC, record(extra={"reviewers": reviewers}))
    head = repo.commit("Name another account as Rita's", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("sam-sock", "APPROVED", head, "2026-12-01T10:00:00Z")])
    assert code == 1 and "@sam-sock is not among approvals.forge_reviewers on base" in out, out


def test_a_listed_login_counts_only_as_the_person_the_base_gives_it_to(tmp_path, capsys):
    repo = verified_repo(tmp_path, FORGE_POLICY.replace("{rita-o: rita@kernels.example}",
                                                         "{rita-o: rita@kernels.example, ada-l: ada@kernels.example}"))
    repo.branch("a")
    repo.write(REC, record(extra={"reviewers": [dict(RITA.as_dict(), decision="approved", login="ada-l")]}))
    head = repo.commit("The author's own account, under Rita's name", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("ada-l", "APPROVED", head, "2026-12-01T10:00:00Z")])
    assert code == 1, out
    assert "@ada-l reviews as ada@kernels.example (approvals.forge_reviewers on base), but the record gives that " \
        "login to rita@kernels.example" in out, out


def test_a_review_by_an_account_without_write_access_approves_nothing(tmp_path, capsys):
    repo, head = forge_setup(tmp_path)
    outsider = dict(review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z"), author_association="NONE")
    code, out = run_with_reviews(repo, tmp_path, capsys, [outsider])
    assert code == 1 and "@rita-o has no write access to the repository (author_association NONE)" in out, out
    member = dict(outsider, author_association="MEMBER")
    assert run_with_reviews(repo, tmp_path, capsys, [member])[0] == 0


def test_a_forge_policy_without_its_reviewer_list_is_reported(tmp_path, capsys):
    repo = verified_repo(tmp_path, POLICY + "approvals:\n  sources: [forge]\n")
    repo.branch("a")
    repo.write(REC, record(extra={"reviewers": [dict(RITA.as_dict(), decision="approved", login="rita-o")]}))
    head = repo.commit("docs(design): split-KV record", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z")])
    assert code != 0 and "forge_reviewers" in out, out


def test_without_the_review_export_a_forge_policy_finds_no_approval(tmp_path, capsys):
    repo, _ = forge_setup(tmp_path)
    code = gate_check(["--base", "main", "--gate", "G8", "--repo-root", str(repo.root)])
    out, _ = capsys.readouterr()
    assert code == 1 and "(no --reviews file was given)" in out, out


def test_a_review_export_inside_the_repository_is_refused(tmp_path, capsys):
    repo, head = forge_setup(tmp_path)
    repo.write("reviews.json", json.dumps([review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z")]))
    code = gate_check(["--base", "main", "--reviews", str(repo.root / "reviews.json"), "--repo-root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2 and "must come from outside the repository" in err


@pytest.mark.parametrize("content", ["{not json", '{"user": "x"}', '[{"state": "APPROVED"}]'], ids=["json", "object", "no-user"])
def test_a_malformed_review_export_exits_2(tmp_path, capsys, content):
    repo, _ = forge_setup(tmp_path)
    file = tmp_path / "reviews.json"
    file.write_text(content, encoding="utf-8")
    assert gate_check(["--base", "main", "--reviews", str(file), "--repo-root", str(repo.root)]) == 2
    assert gate_check(["--reviews", str(file), "--repo-root", str(repo.root)]) == 2  # --reviews needs --base
    capsys.readouterr()


def test_a_plain_run_says_it_cannot_verify_and_a_legacy_approval_stays_quiet(tmp_path):
    repo = seeded_repo(tmp_path / "repo")
    repo.write(REC, record())
    legacy = repo.commit("Record Rita's approval", who=MAX)
    repo.write(POLICY_PATH, SIGNED_POLICY)
    repo.commit("Count only verified approvals", who=MAX)
    report = check_records([], repo.root, gates=["G8"])
    [result] = report.records
    assert result.gates["G8"].ok
    assert [f.severity for f in result.gates["G8"].findings] == ["warning"]
    assert "approval is declared, not verified" in result.gates["G8"].findings[0].message
    repo.write(POLICY_PATH, SIGNED_POLICY + f"history:\n  enforce_from: {legacy}\n")
    assert check_records([], repo.root, gates=["G8"]).records[0].gates["G8"].findings == []


SSH_KEYGEN = shutil.which("ssh-keygen")


def _key(tmp_path, name: str) -> tuple[str, str]:
    path = tmp_path / f"{name}_ed25519"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    return str(path), (tmp_path / f"{name}_ed25519.pub").read_text(encoding="utf-8").strip()


@pytest.mark.skipif(SSH_KEYGEN is None, reason="end-to-end signature check needs ssh-keygen; the logic is tested "
                    "above with a fake verifier")
def test_a_real_ssh_signed_approval_verifies_against_the_allowed_signers_at_base(tmp_path):
    rita_key, rita_pub = _key(tmp_path, "rita")
    ada_key, _ = _key(tmp_path, "ada")
    repo = seeded_repo(tmp_path / "repo")
    repo.write(POLICY_PATH, SIGNED_POLICY)
    repo.write(SIGNERS, f"{RITA.email} {rita_pub}\n")
    repo.commit("Trust Rita's key", who=MAX)
    repo.branch("a")
    repo.write(REC, record(status="in-review", reviewers=((RITA, "pending"),)))
    repo.commit("docs(design): split-KV record", who=ADA)

    def signed_approval(who: Who, key: str) -> None:
        repo.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S", "--allow-empty",
                 "-m", "Approve the split-KV design\n\nDesign-Approved: splitkv", who=who)

    signed_approval(RITA, ada_key)  # Ada signs an approval in Rita's name: not a listed key
    repo.write(REC, record())
    repo.commit("Record Rita's approval", who=MAX)
    has(repo.check(), "G8", REC, "its signature is not from a key in the allowed signers on base")
    signed_approval(RITA, rita_key)
    assert repo.check() == []
    assert not list((repo.root / ".git").glob("design-gates-allowed-signers-*"))


@pytest.mark.skipif(SSH_KEYGEN is None, reason="end-to-end signature check needs ssh-keygen")
def test_a_signed_one_line_approval_commit_counts_and_is_no_authorship(tmp_path):
    """`git commit -S --allow-empty -m "Design-Approved: splitkv"`: git reads no trailer in a subject
    line, yet a message of nothing but approval lines approves, and the empty commit writes nothing."""
    rita_key, rita_pub = _key(tmp_path, "rita")
    repo = seeded_repo(tmp_path / "repo")
    repo.write(POLICY_PATH, SIGNED_POLICY)
    repo.write(SIGNERS, f"{RITA.email} {rita_pub}\n")
    repo.commit("Trust Rita's key", who=MAX)
    repo.branch("a")
    repo.write(REC, record(status="in-review", reviewers=((RITA, "pending"),)))
    repo.commit("docs(design): split-KV record", who=ADA)
    repo.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={rita_key}", "commit", "-q", "-S", "--allow-empty",
             "-m", "Design-Approved: splitkv", who=RITA)
    repo.write(REC, record())
    repo.commit("Record Rita's approval", who=MAX)
    assert repo.check() == []


def test_a_subject_that_only_mentions_an_approval_approves_nothing():
    from gates.history.changeset import approved_records

    assert approved_records("", "Design-Approved: splitkv\n") == ("splitkv",)
    assert approved_records("", "Design-Approved: splitkv\nDesign-Approved: paged") == ("splitkv", "paged")
    assert approved_records("", "Revert \"Design-Approved: splitkv\"\n\nIt was premature.") == ()
    assert approved_records("", "Design-Approved: splitkv\n\nbut only after the benchmark") == ()


def test_a_trusted_signed_commit_source_without_its_signers_file_is_reported(tmp_path, signed):
    repo = seeded_repo(tmp_path / "repo")
    repo.write(POLICY_PATH, SIGNED_POLICY)
    repo.commit("Trust signed approvals, but forget the signers file", who=MAX)
    repo.branch("a")
    repo.write(REC, record())
    repo.commit("docs(design): split-KV record", who=ADA)
    has(repo.check(), "G8", POLICY_PATH, f"the allowed-signers file {SIGNERS} does not exist on base main")


def test_adding_a_key_to_the_allowed_signers_file_is_a_change_of_the_rules(tmp_path, signed):
    # No rule of the policy names .design-gates/: the file is L4 because the policy trusts it.
    repo = verified_repo(tmp_path)
    repo.branch("a")
    repo.write(SIGNERS, repo.read(SIGNERS) + f"{ADA.email} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAdasOwnKey\n")
    repo.commit("chore: add my signing key", who=ADA)
    has(repo.check(), "G8", SIGNERS, "is L4 (the policy's approvals.allowed_signers names it")


def test_changing_the_checker_pin_is_a_change_of_the_rules_once_there_is_a_policy(tmp_path):
    repo = seeded_repo(tmp_path / "repo")
    repo.delete(POLICY_PATH)
    repo.commit("Before design-gates", who=MAX)
    repo.branch("setup")  # no policy yet: the set-up adds the pin freely, with the first policy
    repo.write(POLICY_PATH, POLICY)
    repo.write(".design-gates/requirements.txt", "design-gates @ git+https://example.invalid/design-gates@v0.1.0\n")
    repo.commit("Set up design-gates", who=MAX)
    assert [f for f in repo.check() if f.gate == "G8"] == []
    repo.merge("setup")
    repo.branch("fork")
    repo.write(".design-gates/requirements.txt", "design-gates @ git+https://example.invalid/ada/fork@main\n")
    repo.commit("build: a faster checker", who=ADA)
    has(repo.check(), "G8", ".design-gates/requirements.txt", "is L4 (it names the design-gates that CI installs")


def test_editing_the_mailmap_the_policy_names_is_a_change_of_the_rules(repo):
    repo.write(POLICY_PATH, POLICY + "approvals:\n  mailmap: .mailmap\n")
    repo.write(".mailmap", "Rita Okafor <rita@kernels.example> <ro@home.example>\n")
    repo.commit("Map reviewers' private addresses", who=MAX)
    repo.branch("alias")
    repo.write(".mailmap", "Rita Okafor <rita@kernels.example> <ro@home.example>\n"
               "Ada Lindqvist <ada@kernels.example> <ada@home.example>\n")
    repo.commit("chore: tidy the mailmap", who=ADA)
    has(repo.check(), "G8", ".mailmap", "is L4 (the policy's approvals.mailmap names it")


# What an approval covers: the contract beyond the numbers. Each case: main holds the record as Rita
# approved it (a signed approval commit), and a change edits the kernel and the record.

QUESTIONS = [
    {"id": "Q1", "question": "Combine in a separate kernel?", "recommendation": "yes", "decision": "accepted",
     "blast_radius": "low"},
    {"id": "Q3", "question": "Change the splits4 fingerprint (reverse combine)?", "recommendation": "Accept.",
     "decision": "rejected", "blast_radius": "high"},
]
U1_OPEN = {"id": "U1", "question": "Do the split partials stay within the tolerances?", "closes_at": "B",
           "status": "open", "evidence": []}
U1_CLOSED = dict(U1_OPEN, status="closed", evidence=["numeric-h200"], answer="Yes, on the H200.")
CAPTURE = {"required": True, "due": "C"}
APPROVED_FIELDS = {"questions": QUESTIONS, "unknowns": [U1_OPEN], "capture": CAPTURE}


def approved_on_main(tmp_path, signed, fields=APPROVED_FIELDS):
    """main: the record with `fields`, approved by Rita's signed commit and merged with a merge commit."""
    repo = verified_repo(tmp_path)
    repo.branch("a")
    repo.write(REC, record(status="in-review", reviewers=((RITA, "pending"),), extra=fields))
    repo.commit("docs(design): split-KV record", who=ADA)
    approve(repo, signed)
    repo.write(REC, record(extra=fields))
    repo.commit("Record Rita's signed approval", who=MAX)
    repo.merge("a")
    return repo


def change_record(repo, **fields):
    """A change that edits the kernel and sets `fields` in the record; its findings."""
    repo.branch("b")
    repo.write(KERNEL, "x = 1\n")
    repo.write(REC, record(extra={**APPROVED_FIELDS, **fields}))
    repo.commit("feat(kernels): partial kernel", who=ADA)
    return repo.check()


def test_dropping_the_capture_requirement_after_the_approval_stales_it(tmp_path, signed):
    findings = change_record(approved_on_main(tmp_path, signed), capture={"required": False})
    has(findings, "G8", KERNEL, "is stale: the contract changed after it (capture.due, capture.required)")
    has(findings, "G8", REC, "approved without an independent approval")


def test_flipping_a_reviewer_s_decision_after_the_approval_stales_it(tmp_path, signed):
    flipped = [QUESTIONS[0], dict(QUESTIONS[1], decision="accepted")]
    findings = change_record(approved_on_main(tmp_path, signed), questions=flipped)
    has(findings, "G8", KERNEL, "is stale: the contract changed after it (questions.Q3.decision)")


def test_postponing_an_unknown_after_the_approval_stales_it(tmp_path, signed):
    findings = change_record(approved_on_main(tmp_path, signed), unknowns=[dict(U1_OPEN, closes_at="D")])
    has(findings, "G8", KERNEL, "is stale: the contract changed after it (unknowns.U1.closes_at)")


def test_reopening_a_closed_unknown_after_the_approval_stales_it(tmp_path, signed):
    repo = approved_on_main(tmp_path, signed, dict(APPROVED_FIELDS, unknowns=[U1_CLOSED]))
    findings = change_record(repo, unknowns=[dict(U1_CLOSED, status="open", evidence=[])])
    has(findings, "G8", KERNEL, "is stale: the contract changed after it (unknowns.U1.status, unknowns.U1.evidence)")


def test_a_new_question_with_a_decision_stales_the_approval(tmp_path, signed):
    added = QUESTIONS + [{"id": "Q9", "question": "Accept splits4?", "recommendation": "Accept.",
                          "decision": "accepted", "blast_radius": "low"}]
    findings = change_record(approved_on_main(tmp_path, signed), questions=added)
    has(findings, "G8", KERNEL, "is stale: the contract changed after it (questions.Q9 (new, with a decision))")


def test_the_normal_flow_after_an_approval_keeps_it(tmp_path, signed):
    """Closing U1 with evidence, naming the capture artifact, a new undecided question, a note, a new unknown."""
    questions = [dict(QUESTIONS[0], note="Combine stays a separate launch."), QUESTIONS[1],
                 {"id": "Q4", "question": "Prefetch page ids?", "recommendation": "Later.", "decision": None,
                  "blast_radius": "low"}]
    unknowns = [U1_CLOSED, {"id": "U2", "question": "Best num_splits per shape?", "closes_at": "D", "status": "open"}]
    repo = approved_on_main(tmp_path, signed)
    findings = change_record(repo, questions=questions, unknowns=unknowns, capture=dict(CAPTURE, evidence="capture-h200"))
    assert not any("is stale" in f.message for f in findings), findings
    approve(repo, signed)  # the kernel change itself is approved in the change, as a forge review of its pull request
    assert [f.format_text() for f in repo.check() if f.gate == "G8"] == []


@pytest.mark.parametrize(
    "before, after, changed",
    [
        pytest.param({"numeric_contract": NUMERIC}, {"numeric_contract": {**NUMERIC, "evidence": "numeric-h200"}}, [],
                     id="evidence-named-where-none-was"),
        pytest.param({"numeric_contract": {**NUMERIC, "evidence": "numeric-h200"}},
                     {"numeric_contract": {**NUMERIC, "evidence": "numeric-cpu"}}, ["numeric_contract.evidence"],
                     id="evidence-swapped"),
        pytest.param({"capture": {"required": True, "evidence": "capture-h200"}}, {"capture": {"required": True}},
                     ["capture.evidence"], id="capture-evidence-dropped"),
        pytest.param({"claim_level": "kernel"}, {"claim_level": "e2e"}, ["claim_level"], id="claim-level"),
        pytest.param({"bitwise": {"fingerprints": {"path": "fp.json"}}},
                     {"bitwise": {"fingerprints": {"path": "fp.json", "accepted_changes": [
                         {"key": "splits4", "question": "Q3", "to": "ab" * 32}]}}},
                     ["bitwise.fingerprints"], id="fingerprint-acceptance-added"),
        pytest.param({"questions": QUESTIONS}, {"questions": QUESTIONS[:1]}, ["questions.Q3 (removed)"],
                     id="question-removed"),
        pytest.param({"questions": QUESTIONS}, {"questions": QUESTIONS + [dict(QUESTIONS[1], decision="accepted")]},
                     ["questions.Q3"], id="question-id-repeated"),
        pytest.param({"questions": QUESTIONS}, {"questions": [QUESTIONS[0], dict(QUESTIONS[1], question="Anything?")]},
                     ["questions.Q3.question"], id="question-reworded"),
        pytest.param({"unknowns": [U1_OPEN]}, {"unknowns": []}, ["unknowns.U1 (removed)"], id="unknown-removed"),
        pytest.param({"unknowns": [U1_CLOSED]}, {"unknowns": [dict(U1_CLOSED, evidence=["numeric-cpu"])]},
                     ["unknowns.U1.evidence"], id="closed-unknown-evidence-swapped"),
        pytest.param({"unknowns": [U1_OPEN]}, {"unknowns": [U1_CLOSED]}, [], id="unknown-closed"),
    ],
)
def test_what_the_contract_compares(before, after, changed):
    assert contract_changes(before, after) == changed


def policy_in_records_folder_repo(tmp_path):
    """main: the forge policy kept at docs/design/policy.yaml, and an approved record covering the kernels and it."""
    repo = seeded_repo(tmp_path / "repo", files={".design-gates/config.yaml": "policy: docs/design/policy.yaml\n",
                                                 "docs/design/policy.yaml": FORGE_POLICY})
    reviewers = [dict(RITA.as_dict(), decision="approved", login="rita-o")]
    repo.write(REC, record(extra={"reviewers": reviewers, "covers": [KERNEL_GLOB, "docs/design/policy.yaml"]}))
    repo.commit("docs(design): split-KV record, approved", who=MAX)
    repo.branch("a")
    return repo


def test_a_policy_kept_in_the_records_folder_is_no_record_an_edit_after_the_review_stales_it(tmp_path, capsys):
    repo = policy_in_records_folder_repo(tmp_path)
    repo.write("docs/design/policy.yaml", FORGE_POLICY + "# reviewed wording\n")
    reviewed = repo.commit("Policy: a comment", who=ADA)
    repo.write("docs/design/policy.yaml", FORGE_POLICY.replace("level: L4", "level: L0"))
    later = repo.commit("Lower the kernels' level after the review", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 1, out
    assert f"is stale: docs/design/policy.yaml changed after it (commit {later[:12]})" in out


def test_a_record_edited_in_the_records_folder_after_the_review_keeps_it(tmp_path, capsys):
    repo = policy_in_records_folder_repo(tmp_path)
    repo.write("docs/design/policy.yaml", FORGE_POLICY + "# reviewed wording\n")
    reviewed = repo.commit("Policy: a comment", who=ADA)
    repo.write(REC, repo.read(REC).replace("Text.", "Text, reworded.", 1))
    repo.commit("docs(design): reword the record", who=ADA)
    code, out = run_with_reviews(repo, tmp_path, capsys, [review("rita-o", "APPROVED", reviewed, "2026-12-01T10:00:00Z")])
    assert code == 0, out


def merged_reviewed_pull_request(tmp_path):
    """main under the forge policy with a history ratchet, and a merged pull request adding a record Rita
    reviewed: (repo, merge commit, the reviewed head)."""
    repo = verified_repo(tmp_path, FORGE_POLICY)
    repo.write(POLICY_PATH, FORGE_POLICY + f"history:\n  enforce_from: {repo.sha('HEAD')}\n")
    repo.commit("Judge the history from here on", who=MAX)
    repo, head = forge_setup_on(repo)
    merge = repo.merge("a")
    return repo, merge, head


def forge_setup_on(repo):
    repo.branch("a")
    reviewers = [dict(RITA.as_dict(), decision="approved", login="rita-o")]
    repo.write(REC, record(extra={"reviewers": reviewers}))
    return repo, repo.commit("docs(design): split-KV record", who=ADA)


def run_history(repo, capsys, *args) -> tuple[int, str]:
    code = gate_check(["--history", "--gate", "G8", "--repo-root", str(repo.root), *args])
    out, err = capsys.readouterr()
    return code, out + err


def test_history_reads_the_review_export_archived_for_each_merge(tmp_path, capsys):
    repo, merge, head = merged_reviewed_pull_request(tmp_path)
    folder = tmp_path / "reviews"
    folder.mkdir()
    (folder / f"{merge}.json").write_text(json.dumps([review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z")]))
    code, out = run_history(repo, capsys, "--reviews", str(folder))
    assert code == 0, out
    # the history checks verified Rita's approval at the merge: the record's check says nothing of it
    assert "declared, not verified" not in out, out


def test_history_over_a_modified_working_tree_still_says_a_declared_approval_is_not_verified(tmp_path, capsys):
    repo, merge, head = merged_reviewed_pull_request(tmp_path)
    folder = tmp_path / "reviews"
    folder.mkdir()
    (folder / f"{merge}.json").write_text(json.dumps([review("rita-o", "APPROVED", head, "2026-12-01T10:00:00Z")]))
    reviewers = [dict(RITA.as_dict(), decision="approved", login="rita-o"),
                 {"name": "Sam Reviewer", "email": "sam@kernels.example", "decision": "approved"}]
    repo.write(REC, record(extra={"reviewers": reviewers}))  # not committed: no history check has seen Sam's approval
    code, out = run_history(repo, capsys, "--reviews", str(folder))
    assert "Sam Reviewer's approval is declared, not verified" in out, out


def test_history_says_a_declared_approval_is_not_verified_where_no_base_policy_judged_it(tmp_path, capsys):
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "# kernels\n")
    start = repo.commit("Start the repository", who=MAX)
    reviewers = [dict(RITA.as_dict(), decision="approved", login="rita-o")]
    repo.write(REC, record(extra={"reviewers": reviewers}))
    repo.write(POLICY_PATH, FORGE_POLICY + f"history:\n  enforce_from: {start}\n")
    repo.commit("Adopt design-gates with a record already approved", who=MAX)  # its base has no policy
    code, out = run_history(repo, capsys)
    assert "had no policy file at their base" in out and "Rita Okafor's approval is declared, not verified" in out, out


def test_history_without_the_export_of_a_merge_finds_no_approval_for_it(tmp_path, capsys):
    repo, merge, _ = merged_reviewed_pull_request(tmp_path)
    folder = tmp_path / "reviews"
    folder.mkdir()
    code, out = run_history(repo, capsys, "--reviews", str(folder))
    assert code == 1 and f"(no review export {folder / (merge + '.json')} for this merged commit)" in out, out
    code, out = run_history(repo, capsys)
    assert code == 1 and "(no --reviews folder of per-merge review exports was given)" in out, out


def test_history_refuses_a_review_folder_inside_the_repository(tmp_path, capsys):
    repo, _, _ = merged_reviewed_pull_request(tmp_path)
    (repo.root / "reviews").mkdir()
    code, out = run_history(repo, capsys, "--reviews", str(repo.root / "reviews"))
    assert code == 2 and "must come from outside the repository" in out


def test_a_review_export_nested_a_hundred_thousand_levels_deep_exits_2(tmp_path, capsys):
    repo, _ = forge_setup(tmp_path)
    file = tmp_path / "reviews.json"
    file.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code = gate_check(["--base", "main", "--reviews", str(file), "--repo-root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2 and f"{file}:1:1: error: not a review export: JSON nested too deeply to read" in err, err
