"""A design series walked through real git repositories: A -> B -> C -> D, and the PRs that must fail.

Each failing pull request must be reported under the right gate, at the offending
path, and with the commit that introduced the problem.
"""

from __future__ import annotations

import pytest

from gitrepo_builder import ADA, BEN, KERNEL_API, MAX, POLICY, RITA, by_gate, evidence_json, record_text, seeded_repo

REC = "docs/design/splitkv.md"
PAGED = "docs/design/paged.md"
NCU = "docs/evidence/ncu-single-pass.json"
COVERS = ("kernels/decode_attention/**", "kernels/decode_layer.py")
PARTIAL = '''\
def partial(q, k_cache, v_cache, visible_tokens, *, num_splits):
    return None
'''
LAYER = '''\
SPLITKV_DEFAULT = False


def route_for(batch, visible_tokens, *, num_splits=None):
    return "split-kv" if SPLITKV_DEFAULT else "single-pass"
'''


def split_record(**kw) -> str:
    kw.setdefault("covers", COVERS)
    kw.setdefault("evidence", [NCU])
    return record_text("splitkv", **kw)


APPROVED = dict(status="approved", reviewers=((RITA, "approved"),), questions_decided=True)


def find(findings, gate, path, commit=None, text=""):
    """The findings of `gate` at `path` (and `commit`) whose message contains `text`."""
    hits = [
        f for f in findings
        if f.gate == gate and f.path == path and text in f.message and (commit is None or f.commit == commit)
    ]
    assert hits, f"no {gate} finding at {path} containing {text!r}; got:\n" + "\n".join(
        f.format_text() for f in findings
    )
    return hits


def pr_a(repo, *, record=split_record, path=REC, branch="a-splitkv"):
    """Stage A: the record and its profile; Rita approves; Max records the approval."""
    repo.branch(branch)
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(path, record())
    repo.commit("docs(design): split-KV decode attention record", who=ADA)
    assert repo.check() == []
    repo.write(path, record(**APPROVED))
    repo.commit("Record the review: approved, every question decided", who=MAX, trailers=[RITA.trailer("Approved-by")])
    return repo


def pr_b(repo, sha_a):
    repo.branch("b-splitkv")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write("tests/test_partial.py", "def test_partial():\n    assert True\n")
    repo.write(REC, split_record(stage="B", closed={"A": sha_a}, **APPROVED))
    return repo.commit("feat(kernels): split-KV partial kernel and its tests", who=ADA)


def pr_c(repo, sha_a, sha_b):
    repo.branch("c-splitkv")
    repo.write("kernels/decode_layer.py", LAYER)
    repo.write("tests/test_layer.py", "def test_route():\n    assert True\n")
    repo.write(REC, split_record(stage="C", closed={"A": sha_a, "B": sha_b}, **APPROVED))
    return repo.commit("feat(kernels): opt-in split-KV route in the decode layer", who=ADA)


def pr_d(repo, sha_a, sha_b, sha_c):
    repo.branch("d-splitkv")
    repo.write("docs/results/splitkv.md", "# Split-KV results\n")
    repo.write("docs/evidence/bench-h200.json", evidence_json("bench-h200"))
    repo.write("validation/bench/run.py", "def main():\n    return 0\n")
    repo.write(REC, split_record(stage="D", closed={"A": sha_a, "B": sha_b, "C": sha_c},
                                 evidence=[NCU, "docs/evidence/bench-h200.json"], **APPROVED))
    return repo.commit("bench: split-KV results on H200", who=ADA)


@pytest.fixture
def repo(tmp_path):
    return seeded_repo(tmp_path / "repo")


def walk(repo, until: str) -> dict[str, str]:
    """Merge the stages up to `until`; returns the merge commit of each."""
    shas = {}
    pr_a(repo)
    assert repo.check() == []
    shas["A"] = repo.merge("a-splitkv")
    if until == "A":
        return shas
    pr_b(repo, shas["A"])
    assert repo.check() == []
    shas["B"] = repo.merge("b-splitkv")
    if until == "B":
        return shas
    pr_c(repo, shas["A"], shas["B"])
    assert repo.check() == []
    shas["C"] = repo.merge("c-splitkv")
    if until == "C":
        return shas
    pr_d(repo, shas["A"], shas["B"], shas["C"])
    assert repo.check() == []
    shas["D"] = repo.merge("d-splitkv")
    return shas


def test_a_record_walks_through_a_b_c_d_and_flips_the_default_after_d(repo):
    shas = walk(repo, "D")
    # After D: record D's closing commit and release the default route, in the record alone ...
    repo.branch("close-d")
    released = dict(stage="D", closed=shas, evidence=[NCU, "docs/evidence/bench-h200.json"],
                    default_route_unchanged=False, questions_decided=True)
    repo.write(REC, split_record(status="in-review", **released))
    repo.commit("docs(design): stage D closed; the default route may now be discussed", who=ADA)
    # Releasing the default route changes the record's contract (api), so Rita approves again.
    repo.write(REC, split_record(status="approved", reviewers=((RITA, "approved"),), **released))
    repo.commit("Record the re-review of the default-route release", who=MAX, trailers=[RITA.trailer("Approved-by")])
    assert repo.check() == []
    repo.merge("close-d")
    # ... then the flip itself, written by Ada and covered by Rita's approval.
    repo.branch("flip-default")
    repo.write("kernels/decode_layer.py", LAYER.replace("SPLITKV_DEFAULT = False", "SPLITKV_DEFAULT = True"))
    repo.commit("Turn the split-KV route on by default", who=ADA)
    assert repo.check() == []


def test_b_before_a_is_approved_fails_g2_and_g8(repo):
    repo.branch("a-splitkv")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record())
    sha_a = repo.commit("docs(design): split-KV record", who=ADA)
    repo.merge("a-splitkv")
    repo.branch("b-too-early")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(REC, split_record(stage="B", closed={"A": sha_a}))
    bad = repo.commit("feat(kernels): split-KV partial kernel", who=ADA)
    findings = repo.check()
    find(findings, "G2", REC, bad, "needs the record approved on base main; there it is in-review")
    find(findings, "G2", REC, bad, "undecided there: Q1, Q2")
    find(findings, "G8", "kernels/decode_attention/kernel_partial.py", bad, "hot-path change before approval")


def test_stage_a_touching_kernel_code_fails_the_stage_scope(repo):
    repo.branch("a-splitkv")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record())
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\n# tweak\n")
    bad = repo.commit("docs(design): split-KV record (and a small kernel tweak)", who=ADA)
    findings = repo.check()
    find(findings, "G0", "kernels/decode_attention/api.py", bad, "outside the scope of the stage")
    find(findings, "G0", "kernels/decode_attention/api.py", bad, f"stage A of {REC}")
    assert not [f for f in findings if f.path in (REC, NCU) and f.gate == "G0"]


def test_self_approved_hot_path_change_fails_g8(repo):
    walk(repo, "A")
    repo.branch("b-with-reviewer")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    bad = repo.commit("feat(kernels): partial kernel", who=ADA, trailers=[RITA.trailer("Co-authored-by")])
    findings = repo.check()
    hit = find(findings, "G8", "kernels/decode_attention/kernel_partial.py", bad, "self-approved hot-path change")
    assert "Rita Okafor" in hit[0].message and bad[:12] in hit[0].message


def test_record_author_approving_own_record_in_the_change_is_self_review(repo):
    repo.branch("a-self")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record(status="approved", reviewers=((ADA, "approved"),), questions_decided=True))
    bad = repo.commit("docs(design): split-KV record, approved", who=ADA)
    findings = repo.check()
    find(findings, "G8", REC, bad, "self-review: Ada Lindqvist")
    find(findings, "G8", REC, bad, "approved without an independent approval")


def test_a_reviewer_committing_into_the_change_no_longer_counts_as_independent(repo):
    repo.branch("a-reviewer-commits")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record())
    repo.commit("docs(design): split-KV record", who=ADA)
    repo.write(REC, split_record(**APPROVED).replace("Text.", "Text, with the reviewer's own rewording."))
    bad = repo.commit("Approve, and reword the design while at it", who=RITA)
    findings = repo.check()
    find(findings, "G8", REC, bad, f"self-review: Rita Okafor <rita@kernels.example> approved in this change but "
                                   f"authored commit {bad[:12]}")


def test_approved_by_trailer_from_a_commit_author_is_self_review(repo):
    repo.branch("a-trailer")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record())
    repo.commit("docs(design): split-KV record", who=ADA)
    repo.write(REC, split_record(**APPROVED))
    bad = repo.commit("Record approval", who=BEN, trailers=[ADA.trailer("Approved-by")])
    find(repo.check(), "G8", REC, bad, "'Approved-by: Ada Lindqvist <ada@kernels.example>'")


def test_removing_a_public_parameter_fails_g5(repo):
    walk(repo, "A")
    repo.branch("b-drop-scale")
    api = repo.read("kernels/decode_attention/api.py").replace(", *, scale=None, out=None", ", *, out=None")
    repo.write("kernels/decode_attention/api.py", api)
    bad = repo.commit("Drop the unused scale parameter", who=ADA)
    hit = find(repo.check(), "G5", "kernels/decode_attention/api.py", bad, "parameter 'scale' removed")
    assert hit[0].line == 6


def test_loosening_the_policy_does_not_free_the_kernel(repo):
    walk(repo, "A")
    repo.branch("loosen")
    repo.write(".design-gates/policy.yaml", repo.read(".design-gates/policy.yaml").replace("level: L4", "level: L1"))
    loosen = repo.commit("Relax the policy for decode attention", who=BEN)
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\nFAST = True\n")
    kernel = repo.commit("Speed up decode attention", who=RITA)
    findings = repo.check()
    find(findings, "G8", ".design-gates/policy.yaml", loosen, "loosens the policy: kernels/decode_attention/** L4 -> L1")
    # The base policy still says L4, so Rita, the record's only approver, cannot change the kernel.
    find(findings, "G8", "kernels/decode_attention/api.py", kernel, "kernels/decode_attention/api.py is L4")
    find(findings, "G8", "kernels/decode_attention/api.py", kernel, "self-approved hot-path change")


def test_loosening_the_policy_without_any_covering_record_fails(repo):
    repo.branch("loosen")
    repo.write(".design-gates/policy.yaml", repo.read(".design-gates/policy.yaml").replace("level: L4", "level: L1"))
    loosen = repo.commit("Relax the policy", who=BEN)
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\nFAST = True\n")
    kernel = repo.commit("Speed up decode attention", who=BEN)
    findings = repo.check()
    find(findings, "G8", ".design-gates/policy.yaml", loosen, "loosens the policy")
    find(findings, "G8", "kernels/decode_attention/api.py", kernel, "is L4")


def test_a_hot_path_edit_of_comments_only_needs_no_record(repo):
    """The file does what it did: a typo fixed in a kernel's comment waits for no design review."""
    api = repo.read("kernels/decode_attention/api.py")
    repo.branch("typo")
    repo.write("kernels/decode_attention/api.py", api + "\n# the split count follows the heuristic record\n\n")
    repo.commit("Explain the split count", who=BEN)
    assert [f for f in repo.check() if f.gate == "G8"] == []


@pytest.mark.parametrize("edit", ["\nFAST = True\n", '\n"""A docstring is a token."""\n'], ids=["code", "string"])
def test_a_hot_path_edit_of_any_token_still_needs_its_record(repo, edit):
    repo.branch("tweak")
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + edit)
    kernel = repo.commit("A kernel edit", who=BEN)
    find(repo.check(), "G8", "kernels/decode_attention/api.py", kernel, "hot-path change without a design record")


def test_a_type_comment_is_read_as_code(repo):
    """TorchScript reads `# type: (int) -> int` as the signature."""
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py")
               + "\n\ndef later(x):\n    return x\n")
    repo.commit("later", who=BEN)
    repo.branch("typed")
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py").replace(
        "def later(x):\n", "def later(x):  # type: (int) -> int\n"))
    kernel = repo.commit("Type later for TorchScript", who=BEN)
    find(repo.check(), "G8", "kernels/decode_attention/api.py", kernel, "hot-path change without a design record")


def test_a_link_whose_target_gains_a_comment_names_another_file(repo):
    """A symbolic link's bytes are the path it names: `api.py#fast` tokenizes as `api.py` with a comment, and
    is another file."""
    import os

    os.symlink("api.py", repo.root / "kernels/decode_attention/fast.py")
    repo.commit("fast is the api", who=BEN)
    repo.branch("retarget")
    (repo.root / "kernels/decode_attention/fast.py").unlink()
    os.symlink("api.py#fast", repo.root / "kernels/decode_attention/fast.py")
    kernel = repo.commit("fast names another file", who=BEN)
    find(repo.check(), "G8", "kernels/decode_attention/fast.py", kernel, "hot-path change without a design record")


SELFTEST = '#!/usr/bin/env python3\nassert 1 + 1 == 3, "self-test failed"\nprint("ok")\n'
TYPED = "def scale(x):\n    # type: (int) -> int\n    return x * 2\n\n\ndef shift(x):\n    return x + 1\n"
ESCAPED = "# coding: unicode_escape\ndef scale(x):\n    # plain note\n    return x * 2\n"


def an_edit_needs_its_record(repo, base: str, head: str, *, executable: str = "", attributes: str = "") -> None:
    """Commit `base` as a hot-path module on main, edit it to `head` on a branch, and find G8's finding."""
    path = "kernels/decode_attention/extra.py"
    if attributes:
        repo.write(".gitattributes", attributes)
    repo.write(path, base)
    if executable == "both":
        (repo.root / path).chmod(0o755)
    repo.commit("extra", who=BEN)
    repo.branch("edit")
    repo.write(path, head)
    if executable:
        (repo.root / path).chmod(0o755)
    kernel = repo.commit("An edit that looks like a comment", who=BEN)
    find(repo.check(), "G8", path, kernel, "hot-path change without a design record")


@pytest.mark.parametrize("base, head, executable", [
    (SELFTEST, SELFTEST.replace("python3\n", "-S python3 -O\n"), "head"),  # -O strips the asserts when run as ./file
    (SELFTEST, SELFTEST, "head"),  # the mode alone
    (TYPED, TYPED.replace("    # type: (int) -> int\n", "").replace("def shift(x):\n",
                                                                       "def shift(x):\n    # type: (int) -> int\n"),
     ""),  # TorchScript's signatures move from scale to shift
    (ESCAPED, ESCAPED.replace("# plain note", "\\x23 type: (int) -> int"), ""),  # the compiler reads `# type:`
    # TorchScript raises on `#type:` anywhere in a line of the function, and a caller may fall back to eager
    ("def step(x):\n    # scale: see the notes\n    return x * 2\n",
     "def step(x):\n    # scale: see the notes #type: fp32\n    return x * 2\n", ""),
    ("# cython: cdivision=False\ndef q(a, b):\n    return a // b\n",
     "# cython: cdivision=True\ndef q(a, b):\n    return a // b\n", ""),
    ("# /// script\n# dependencies = []\n# ///\nimport os\n",
     "# /// script\n# dependencies = ['other']\n# ///\nimport os\n", ""),
    ("# mypy: always-true=FAST\nFAST = False\n", "# mypy: always-false=FAST\nFAST = False\n", ""),
    # run without a shebang, the shell reads an executable file: `import os#;cmd` is no comment there
    ("import os  # the tool\n", "import os#;echo ran\n", "both"),
    # TorchScript searches whole lines, strings included: an ignore comment takes the line's signature out
    ('def f(x):\n    y = "# type: (int) -> int"\n    return x\n',
     'def f(x):\n    y = "# type: (int) -> int"  # type: ignore\n    return x\n', ""),
    # Python 3.9 joins a line of only whitespace and a backslash with the next: `return 2` moves into the `if`
    ("def f(x):\n    if x:\n        return 1\n    return 2\n",
     "def f(x):\n    if x:\n        return 1\n    \\\n    return 2\n", ""),
], ids=["shebang-and-mode", "mode", "type-comment-moved", "type-comment-under-a-codec", "type-spelling-torchscript-refuses",
        "cython-directive", "pep-723", "mypy-inline-configuration", "executable-without-shebang",
        "type-ignore-beside-a-signature-in-a-string", "blank-continuation"])
def test_a_comment_some_tool_reads_as_an_instruction_is_code(repo, base, head, executable):
    """Edits that the comment-blind token stream cannot tell apart, but that change what runs."""
    an_edit_needs_its_record(repo, base, head, executable=executable)


def test_a_file_git_rewrites_at_checkout_is_judged_by_what_runs(repo):
    """With `ident`, git writes the blob's id into `$Id$`: a comment edit changes the checked-out code."""
    code = 'REV = "$Id$"\nFAST_PATH = int(REV[6], 16) % 2 == 1  # build id\n'
    an_edit_needs_its_record(repo, code, code.replace("# build id", "# build id (note 0)"), attributes="*.py ident\n")


def test_attributes_behind_a_link_count_as_rewriting(repo):
    """Git before 2.32 follows a `.gitattributes` that is a symbolic link; what it names is not read here."""
    import os

    (repo.root / "tools").mkdir(exist_ok=True)
    (repo.root / "tools" / "attrs.txt").write_text("*.py ident\n", encoding="utf-8")
    os.symlink("tools/attrs.txt", repo.root / ".gitattributes")
    code = 'REV = "$Id$"\nFAST_PATH = int(REV[6], 16) % 2 == 1  # build id\n'
    an_edit_needs_its_record(repo, code, code.replace("# build id", "# build id (note 0)"))


def test_a_file_git_archive_rewrites_is_judged_by_what_an_archive_holds(repo):
    """With `export-subst`, `git archive` expands `$Format:%n...$`: a newline, and the comment's tail is code."""
    code = "def f(x):\n    return x  # see the notes\n"
    injected = code.replace("# see the notes", "# see $Format:%nprint('from a comment')%n#$")
    an_edit_needs_its_record(repo, code, injected, attributes="kernels/**/*.py export-subst\n")


def test_stacked_record_may_not_overtake_its_base(repo):
    def paged(**kw):
        return record_text("paged", covers=("kernels/decode_attention/paged*",), evidence=[NCU], **kw)

    pr_a(repo, record=paged, path=PAGED, branch="a-paged")
    repo.merge("a-paged")
    sha_a = repo.sha("main")
    repo.branch("a-splitkv")
    repo.write(REC, split_record(stacked_on=["paged"]))
    repo.commit("docs(design): split-KV record stacked on paged", who=ADA)
    repo.write(REC, split_record(stacked_on=["paged"], **APPROVED))
    repo.commit("Record the review", who=MAX)
    assert repo.check() == []
    repo.merge("a-splitkv")
    repo.branch("b-splitkv")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(REC, split_record(stage="B", stacked_on=["paged"], closed={"A": sha_a}, **APPROVED))
    bad = repo.commit("feat(kernels): split-KV partial kernel", who=ADA)
    hit = find(repo.check(), "G2", REC, bad, "stacked record overtakes its base")
    assert "paged is at stage A" in hit[0].message


def test_default_route_change_before_d_fails_g5(repo):
    walk(repo, "C")
    repo.branch("flip-early")
    repo.write("kernels/decode_layer.py", LAYER.replace("SPLITKV_DEFAULT = False", "SPLITKV_DEFAULT = True"))
    bad = repo.commit("Turn split-KV on by default", who=ADA)
    hit = find(repo.check(), "G5", "kernels/decode_layer.py", bad, "default route changed before stage D passed")
    assert "SPLITKV_DEFAULT changed from False to True" in hit[0].message


def test_skipping_a_stage_fails_g0(repo):
    shas = walk(repo, "A")
    repo.branch("a-to-c")
    repo.write("kernels/decode_layer.py", LAYER)
    repo.write(REC, split_record(stage="C", closed={"A": shas["A"]}, **APPROVED))
    bad = repo.commit("Go straight to the routing", who=ADA)
    findings = by_gate(repo.check())
    find(findings["G0"], "G0", REC, bad, "stage skipped: A -> C (skips B)")
    find(findings["G2"], "G2", REC, bad, "record the commit that closed it in series.closed.B")


def test_a_closing_commit_outside_the_base_history_fails(repo):
    walk(repo, "A")
    repo.branch("side")
    side = repo.commit("an unmerged experiment", who=BEN)
    repo.checkout("main")
    repo.branch("b-bad-close")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(REC, split_record(stage="B", closed={"A": side}, **APPROVED))
    bad = repo.commit("feat(kernels): partial kernel", who=ADA)
    find(repo.check(), "G0", REC, bad, "not in the history of base main")


def test_the_root_commit_does_not_close_a_stage(repo):
    shas = walk(repo, "B")
    root = repo.git("rev-list", "--max-parents=0", "main")
    repo.branch("c-rooted")
    repo.write("kernels/decode_layer.py", LAYER)
    repo.write(REC, split_record(stage="C", closed={"A": shas["A"], "B": root}, **APPROVED))
    bad = repo.commit("feat(kernels): route, with stage B closed by the first commit", who=ADA)
    find(repo.check(), "G0", REC, bad, f"series.closed.B names commit {root}, which did not close stage B "
         f"of this record: {REC} is not in it")


def test_an_unrelated_commit_does_not_close_a_stage(repo):
    shas = walk(repo, "A")
    repo.write("README.md", "# kernels\n\nUnrelated.\n")
    unrelated = repo.commit("docs: readme", who=MAX)
    repo.branch("b-unrelated")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(REC, split_record(stage="B", closed={"A": unrelated}, **APPROVED))
    bad = repo.commit("feat(kernels): partial kernel", who=ADA)
    find(repo.check(), "G0", REC, bad, f"it does not change {REC}")
    assert shas["A"] != unrelated


def test_a_commit_that_merged_an_earlier_stage_does_not_close_a_later_one(repo):
    shas = walk(repo, "B")
    repo.branch("c-early")
    repo.write("kernels/decode_layer.py", LAYER)
    repo.write(REC, split_record(stage="C", closed={"A": shas["A"], "B": shas["A"]}, **APPROVED))
    bad = repo.commit("feat(kernels): route, with stage B closed by the stage-A merge", who=ADA)
    find(repo.check(), "G0", REC, bad, f"{REC} is at stage A there")


@pytest.mark.parametrize(
    "before, after, text",
    [
        pytest.param(dict(status="approved", **{k: v for k, v in APPROVED.items() if k != "status"}),
                     dict(status="draft"), "illegal status move: record_status approved -> draft", id="approved-to-draft"),
        pytest.param(dict(status="draft"), dict(status="approved"),
                     "draft -> approved without a reviewer whose decision is approved", id="draft-to-approved-unreviewed"),
        pytest.param(dict(status="withdrawn"), dict(status="in-review"),
                     "from withdrawn it may move to nothing", id="withdrawn-is-final"),
    ],
)
def test_illegal_status_moves_fail_g0(repo, before, after, text):
    repo.branch("a")
    repo.write(REC, split_record(**before))
    repo.commit("record", who=ADA)
    repo.merge("a")
    repo.branch("move")
    repo.write(REC, split_record(**after))
    bad = repo.commit("move the record", who=ADA)
    find(repo.check(), "G0", REC, bad, text)


def test_a_new_record_starting_past_a_fails_g0(repo):
    repo.branch("new-at-b")
    repo.write(REC, split_record(stage="B"))
    bad = repo.commit("record", who=ADA)
    find(repo.check(), "G0", REC, bad, "a new record starts at stage A, this one claims B")


def test_deleting_a_record_fails_g0(repo):
    walk(repo, "A")
    repo.branch("drop")
    repo.delete(REC)
    bad = repo.commit("remove the record", who=BEN)
    find(repo.check(), "G0", REC, bad, "record deleted (it was approved on base)")


def test_a_change_that_edits_no_record_gets_only_policy_and_api_checks(repo):
    repo.branch("docs")
    repo.write("README.md", "# kernels\n\nMore words.\n")
    repo.write("docs/notes.md", "notes\n")
    repo.commit("docs: notes", who=BEN)
    assert repo.check() == []


def test_the_base_policy_s_scopes_admit_the_declared_paths(repo):
    shas = walk(repo, "A")
    repo.write(".design-gates/policy.yaml", POLICY + "scopes:\n  B: ['kernels/**', 'tests/**', 'tools/profile.sh']\n")
    repo.commit("policy: stage B may add the profiling script", who=MAX)
    repo.branch("b-with-tool")
    repo.write("tools/profile.sh", "#!/bin/sh\n")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(REC, split_record(stage="B", closed={"A": shas["A"]}, **APPROVED))
    repo.commit("feat(kernels): partial kernel with its profiling script", who=ADA)
    assert repo.check() == []
    repo.write("validation/check.py", "X = 1\n")  # in the default scope of B, not in this policy's
    bad = repo.commit("another check", who=ADA)
    find(repo.check(), "G0", "validation/check.py", bad, "may touch kernels/**, tests/**, tools/profile.sh")


def test_a_record_s_scope_override_only_narrows(repo):
    shas = walk(repo, "A")
    repo.branch("b-narrow")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write("tests/test_partial.py", "def test_partial():\n    assert True\n")
    repo.write(REC, split_record(stage="B", closed={"A": shas["A"]}, scopes={"B": ["kernels/**"]}, **APPROVED))
    bad = repo.commit("feat(kernels): partial kernel, its test outside the narrowed scope", who=ADA)
    find(repo.check(), "G0", "tests/test_partial.py", bad, "narrowed to kernels/** by the record")


def test_a_record_cannot_widen_stage_b_to_the_ci_workflow(repo):
    shas = walk(repo, "A")
    repo.branch("b-wide")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(".github/workflows/gate-check.yml", "name: nothing to see\n")
    repo.write(REC, split_record(stage="B", closed={"A": shas["A"]}, scopes={"B": ["**"]}, **APPROVED))
    bad = repo.commit("feat(kernels): partial kernel; CI tidy", who=ADA)
    find(repo.check(), "G0", ".github/workflows/gate-check.yml", bad, "outside the scope of the stage")


def test_a_record_approved_on_base_with_a_wide_scope_still_cannot_widen(repo):
    def wide(**kw):
        return split_record(scopes={"B": ["**"]}, **kw)

    pr_a(repo, record=wide)
    sha_a = repo.merge("a-splitkv")
    repo.branch("b-wide")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(".github/workflows/gate-check.yml", "name: nothing to see\n")
    repo.write(REC, wide(stage="B", closed={"A": sha_a}, **APPROVED))
    bad = repo.commit("feat(kernels): partial kernel; CI tidy", who=ADA)
    find(repo.check(), "G0", ".github/workflows/gate-check.yml", bad, "outside the scope of the stage")


def test_a_new_draft_record_that_opens_every_path_opens_nothing(repo):
    repo.branch("a-open")
    repo.write("docs/design/opener.md", record_text("opener", status="draft", scopes={"A": ["**"]}))
    repo.write("scripts/deploy.sh", "#!/bin/sh\n")
    bad = repo.commit("docs(design): a draft, and a script", who=BEN)
    find(repo.check(), "G0", "scripts/deploy.sh", bad, "stage A of docs/design/opener.md may touch only the record")


def test_findings_reach_the_runner_under_the_record_and_a_change_entry(repo):
    runner = pytest.importorskip("gates.checks.runner")
    walk(repo, "A")
    repo.branch("b-drop-scale")
    repo.write("kernels/decode_attention/api.py",
               repo.read("kernels/decode_attention/api.py").replace(", *, scale=None, out=None", ", *, out=None"))
    repo.commit("Drop scale", who=ADA)
    from gates.history.git_repo import load_change_set

    report = runner.check_records(None, repo.root, gates=["G5"], change=load_change_set(repo.root, "main"))
    entries = {r.path: r for r in report.records}
    api = entries["kernels/decode_attention/api.py"]
    assert api.gates["G5"].status.value == "fail"
    assert not report.ok


def test_record_findings_join_the_record_s_own_gate_result(repo):
    runner = pytest.importorskip("gates.checks.runner")
    from gates.history.git_repo import load_change_set

    repo.branch("a-splitkv")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record())
    repo.commit("docs(design): split-KV record", who=ADA)
    repo.merge("a-splitkv")
    repo.branch("b-too-early")
    repo.write(REC, split_record(stage="B"))
    bad = repo.commit("claim stage B", who=ADA)
    report = runner.check_records(None, repo.root, gates=["G2"], change=load_change_set(repo.root, "main"))
    (entry,) = [r for r in report.records if r.path == REC]
    messages = [(f.message, f.commit) for f in entry.gates["G2"].findings if f.commit]
    assert any("needs the record approved on base main" in m and c == bad for m, c in messages)
    assert not entry.gates["G2"].ok


def test_squash_merged_stages_close_with_the_squashed_commit(repo):
    repo.branch("a-splitkv")
    repo.write(NCU, evidence_json("ncu-single-pass"))
    repo.write(REC, split_record(**APPROVED))
    repo.commit("docs(design): split-KV record, approved by Rita", who=ADA)
    repo.checkout("main")
    repo.git("merge", "-q", "--squash", "a-splitkv")
    squashed = repo.commit("docs(design): split-KV record (#12)", who=MAX)
    repo.branch("b-splitkv")
    repo.write("kernels/decode_attention/kernel_partial.py", PARTIAL)
    repo.write(REC, split_record(stage="B", closed={"A": squashed[:12]}, **APPROVED))
    repo.commit("feat(kernels): partial kernel", who=ADA)
    assert repo.check() == []


def test_a_kernel_file_whose_name_holds_a_newline_is_still_a_hot_path(repo):
    repo.branch("sneaky")
    repo.write("kernels/decode_attention/kernel\n.py", "X = 1\n")
    bad = repo.commit("add a helper", who=BEN)
    hit = find(repo.check(), "G8", "kernels/decode_attention/kernel\n.py", bad, "hot-path change without a design record")
    assert "is L4 (a path with control characters" in hit[0].message


def test_a_default_changed_only_in_the_module_that_defines_its_constant_fails_g5(repo):
    repo.write("kernels/decode_attention/tuning.py", "NUM_SPLITS = 1\n")
    repo.write("kernels/decode_attention/api.py", KERNEL_API.replace(
        '__all__ = ["attention_decode"]\n', 'from kernels.decode_attention.tuning import NUM_SPLITS\n\n'
        '__all__ = ["attention_decode"]\n').replace("*, scale=None,", "*, num_splits=NUM_SPLITS, scale=None,"))
    repo.commit("Name the default split count", who=MAX)
    repo.branch("retune")
    repo.write("kernels/decode_attention/tuning.py", "NUM_SPLITS = 4\n")
    bad = repo.commit("Retune the default split count", who=ADA)
    hit = find(repo.check(), "G5", "kernels/decode_attention/tuning.py", bad, "public API break")
    assert "default of 'num_splits' changed from NUM_SPLITS (= 1) to NUM_SPLITS (= 4)" in hit[0].message


def test_a_switch_default_flipped_in_a_function_body_fails_g5(repo):
    reading = LAYER.replace("SPLITKV_DEFAULT = False\n", 'import os\n\nSPLITKV_DEFAULT = "DECODE_SPLITKV"\n') + \
        '\n\ndef switch_from_env() -> bool:\n    return os.environ.get(SPLITKV_DEFAULT, "0") == "1"\n'
    walk(repo, "C")
    repo.write("kernels/decode_layer.py", reading)
    repo.commit("Read the switch from the environment", who=MAX)
    repo.branch("flip-in-body")
    repo.write("kernels/decode_layer.py", reading.replace('SPLITKV_DEFAULT, "0")', 'SPLITKV_DEFAULT, "1")'))
    bad = repo.commit("Tidy the switch", who=ADA)
    hit = find(repo.check(), "G5", "kernels/decode_layer.py", bad, "default route changed before stage D passed")
    assert "the default with which switch_from_env reads switch kernels.decode_layer.SPLITKV_DEFAULT changed " \
           "from '0' to '1'" in hit[0].message


def test_a_record_at_stage_d_since_before_the_ratchet_has_its_evidence_refreshed(tmp_path):
    # The record reached stage D before the history was judged and never recorded its
    # closing commits; refreshing its evidence changes the record within stage D.
    legacy = split_record(stage="D", **APPROVED)
    repo = seeded_repo(tmp_path / "repo", files={REC: legacy, NCU: evidence_json("ncu-single-pass")})
    repo.branch("refresh")
    repo.write(NCU, evidence_json("ncu-single-pass").replace('"results": {}', '"results": {"re-measured": true}'))
    repo.write(REC, legacy.replace("Text.", "Text, re-measured.", 1))
    repo.commit("Evidence: the profile re-measured, the record re-pinned", who=ADA)
    assert repo.check() == []


def test_entering_stage_d_still_needs_stage_c_closed(tmp_path):
    repo = seeded_repo(tmp_path / "repo", files={REC: split_record(stage="C", **APPROVED),
                                                 NCU: evidence_json("ncu-single-pass")})
    repo.branch("to-d")
    repo.write(REC, split_record(stage="D", **APPROVED))
    bad = repo.commit("bench: results", who=ADA)
    find(repo.check(), "G2", REC, bad, "stage D needs stage C closed: record the commit that closed it")


def test_a_recorded_closing_commit_stays_recorded(repo):
    shas = walk(repo, "D")
    repo.branch("drop-closing")
    repo.write(REC, split_record(stage="D", closed={"A": shas["A"], "B": shas["B"]},
                                 evidence=[NCU, "docs/evidence/bench-h200.json"], **APPROVED))
    bad = repo.commit("docs(design): tidy the series", who=ADA)
    find(repo.check(), "G2", REC, bad, f"series.closed.C is {shas['C']} on base and this change removes it")


def remeasured_repo(tmp_path, body_edit):
    """A stage-D record whose change re-pins its evidence, edits its text with `body_edit`
    and touches a file outside stage D's scope."""
    def record(sha):
        pin = [{"id": "ncu-single-pass", "path": NCU, "kind": "profile", "sha256": sha}]
        return split_record(stage="D", extra={"evidence": pin}, **APPROVED)

    repo = seeded_repo(tmp_path / "repo", files={REC: record("a" * 64).replace("Text.", "Text 1.2 us.", 1),
                                                 NCU: evidence_json("ncu-single-pass")})
    repo.branch("refresh")
    repo.write(REC, body_edit(record("b" * 64).replace("Text.", "Text 1.3 us.", 1)))
    repo.write("tools/refresh_helper.py", "RUNS = 2\n")
    return repo, repo.commit("Evidence re-measured and re-pinned, with a helper", who=ADA)


def test_a_change_that_only_re_measures_a_record_claims_no_stage(tmp_path):
    repo, _ = remeasured_repo(tmp_path, lambda text: text)
    assert [f for f in repo.check() if f.path == "tools/refresh_helper.py"] == []


def test_a_change_that_rewrites_a_record_s_words_claims_its_stage(tmp_path):
    repo, bad = remeasured_repo(tmp_path, lambda text: text.replace("Text.", "Other text.", 1))
    find(repo.check(), "G0", "tools/refresh_helper.py", bad, "outside the scope of the stage this change claims")
