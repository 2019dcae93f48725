"""A team adopts design-gates by following docs/adopting.md, block by block.

The test builds a foreign repository from nothing (`normkit`: a `src/` layout, a NumPy
RMSNorm kernel, an ordinary pytest suite, a minimal MkDocs site), then walks the guide:
every block titled with a path is written to that path, every `sh` block runs in bash
from the repository's root, and the front-matter updates the guide shows are applied to
the records. Commits, branches and merges are made with `GitRepo`, by the people the
guide names: Ada writes, Rita reviews (on the forge: a review export like GitHub's), Max
merges. Then it checks what the guide promises: (a) a single-pr change that fails until
it is approved, where G5 catches a removed parameter under `src/` and G3 stale evidence,
and (b) an A -> B -> C -> D series through `gate-check --base`; and the site builds with
`mkdocs build --strict`.

Stand-ins, so that the walk runs offline against this checkout: `gate-check`, `pytest`
and `mkdocs` run this checkout's code (the MkDocs plugin's entry point is declared as in
`tests/mkdocs_site.py`), and `pip` accepts only the design-gates requirement the guide
installs, without downloading it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from gitrepo_builder import MAX, GitRepo, Who
from mkdocs_site import REPO, entry_point_distribution

GUIDE = REPO / "docs" / "adopting.md"
ACTION = REPO / ".github" / "actions" / "gate-check" / "action.yml"
ADA = Who("Ada Lindqvist", "ada@normkit.example")  # writes the changes and the records
RITA_LOGIN = "rita-o"  # reviews them on the forge; Max (gitrepo_builder) merges
SINGLE = "docs/design/rms-norm-fp32-accumulation.md"
GATED = "docs/design/gated-rms-norm.md"
KERNEL = "src/normkit/rmsnorm.py"

# The team's repository before it adopts design-gates.
BEFORE = {
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\naddopts = "-p no:cacheprovider"\n',
    ".gitignore": "__pycache__/\nsite/\n",
    "README.md": "# normkit\n\nNormalisation kernels.\n",
    "mkdocs.yml": "site_name: normkit\nnav:\n  - Home: index.md\n",
    "docs/index.md": "# normkit\n\nNormalisation kernels for our models.\n",
    "src/normkit/__init__.py": '"""normkit: normalisation kernels. The operations live in their modules."""\n',
    "src/normkit/rmsnorm.py": '''"""RMSNorm over the last axis."""

import numpy as np


def rms_norm(x, weight, *, eps=1e-6):
    """x / sqrt(mean(x**2) + eps) * weight over the last axis, in x's dtype."""
    mean_square = np.mean(x * x, axis=-1, keepdims=True)
    return (x / np.sqrt(mean_square + eps) * weight).astype(x.dtype)
''',
    "src/normkit/reference.py": '''"""Float64 references of the kernels."""

import numpy as np


def rms_norm_fp64(x, weight, eps=1e-6):
    x, weight = x.astype(np.float64), weight.astype(np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight
''',
    "tests/test_rmsnorm.py": '''import numpy as np
import pytest

from normkit.reference import rms_norm_fp64
from normkit.rmsnorm import rms_norm


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_rms_norm_matches_float64(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 512)).astype(dtype)
    weight = rng.standard_normal(512).astype(dtype)
    np.testing.assert_allclose(rms_norm(x, weight).astype(np.float64), rms_norm_fp64(x, weight), rtol=1e-2, atol=1e-2)
''',
}


@dataclass(frozen=True)
class Block:
    lang: str
    title: str
    text: str
    line: int


def guide_blocks() -> dict[str, Block]:
    """The guide's titled fenced blocks by title (a fence info string `lang title="..."`)."""
    blocks: dict[str, Block] = {}
    for token in MarkdownIt("commonmark").parse(GUIDE.read_text(encoding="utf-8")):
        if token.type != "fence":
            continue
        match = re.fullmatch(r'(\w+)\s+title="([^"]+)"', token.info.strip())
        if match:
            title = match.group(2)
            assert title not in blocks, f"docs/adopting.md:{token.map[0] + 1}: a second block titled {title!r}"
            blocks[title] = Block(match.group(1), title, token.content, token.map[0] + 1)
    return blocks


PIP_STAND_IN = """\
import sys
from packaging.requirements import Requirement

args = sys.argv[1:]
if args[:1] != ["install"] or len(args) != 2:
    sys.exit(f"pip stand-in: expected install REQUIREMENT, got {args}")
requirement = Requirement(args[1])
if requirement.name != "design-gates" or not (requirement.url or "").startswith("git+https://"):
    sys.exit(f"pip stand-in: not a design-gates git requirement: {args[1]}")
print("design-gates from CHECKOUT stands in for", requirement.url)
"""


def tool_env(scratch: Path) -> dict[str, str]:
    """PATH with `gate-check`, `pytest`, `mkdocs` running this checkout and a `pip` that installs nothing."""
    bin_dir = scratch / "bin"
    bin_dir.mkdir(parents=True)
    python = shlex.quote(sys.executable)
    shims = {"gate-check": f'exec {python} -m gates.frontends.cli "$@"', "pytest": f'exec {python} -m pytest "$@"',
             "mkdocs": f'exec {python} -m mkdocs "$@"',
             "pip": f'exec {python} {shlex.quote(str(bin_dir / "pip.py"))} "$@"'}
    for name, line in shims.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{line}\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    (bin_dir / "pip.py").write_text(PIP_STAND_IN.replace("CHECKOUT", str(REPO)), encoding="utf-8")
    path = [str(REPO), str(entry_point_distribution(scratch / "entry-points"))]
    if not any(ep.name == "design_gates_evidence" for ep in entry_points(group="pytest11")):
        dist = scratch / "entry-points" / "design_gates_checkout-0.0.0.dist-info" / "entry_points.txt"
        declared = dist.read_text(encoding="utf-8")
        dist.write_text(declared + "[pytest11]\ndesign_gates_evidence = gates.evidence.evidence_plugin\n", encoding="utf-8")
    home, runner_temp = scratch / "home", scratch / "runner"
    home.mkdir()
    runner_temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESIGN_GATES_", "GIT_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=os.pathsep.join(path),
               HOME=str(home), RUNNER_TEMP=str(runner_temp), NO_MKDOCS_2_WARNING="1", GIT_CONFIG_NOSYSTEM="1")
    return env


class Team:
    """The foreign repository and the guide it follows."""

    def __init__(self, tmp: Path):
        self.blocks = guide_blocks()
        self.used: set[str] = set()
        self.env = tool_env(tmp / "tools")
        self.repo = GitRepo(tmp / "normkit")
        self.subs: dict[str, str] = {}
        for path, text in BEFORE.items():
            self.repo.write(path, text)
        self.repo.commit("normkit: rms_norm, its reference and tests, the docs site", who=MAX)

    def block(self, title: str) -> Block:
        assert title in self.blocks, f"docs/adopting.md has no block titled {title!r}"
        self.used.add(title)
        return self.blocks[title]

    def substituted(self, text: str) -> str:
        for placeholder, value in self.subs.items():
            text = text.replace(placeholder, value)
        assert not re.search(r"<the [^>]+>", text), f"a placeholder is left: {text}"
        return text

    def write(self, title: str) -> None:
        """Write the block titled `path` or `path (when)` to that path."""
        self.repo.write(title.split(" (")[0], self.substituted(self.block(title).text))

    def sh(self, title: str, **env) -> subprocess.CompletedProcess:
        block = self.block(title)
        assert block.lang == "sh", f"docs/adopting.md:{block.line}: {title!r} is not an sh block"
        return subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=self.repo.root,
                              env={**self.env, **env}, capture_output=True, text=True, timeout=300)

    def ok(self, title: str, **env) -> str:
        done = self.sh(title, **env)
        assert done.returncode == 0, f"{title}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def update(self, path: str, front: dict) -> None:
        """Set top-level keys of a record's front matter, as the guide's `path (...)` blocks show."""
        text = self.repo.read(path)
        _, head, body = text.split("---\n", 2)
        merged = {**yaml.safe_load(head), **front}
        self.repo.write(path, "---\n" + yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, width=200)
                        + "---\n" + body)

    def apply(self, title: str) -> None:
        path = title.split(" (")[0]
        self.update(path, yaml.safe_load(self.substituted(self.block(title).text)))

    def decide(self, path: str) -> None:
        """Record Rita's answers in the record before she approves: every question accepted."""
        front = yaml.safe_load(self.repo.read(path).split("---\n", 2)[1])
        self.update(path, {"questions": [dict(q, decision="accepted") for q in front["questions"]]})

    def approve(self, path: str) -> None:
        """Record Rita's forge approval in the record: status approved, her decision."""
        front = yaml.safe_load(self.repo.read(path).split("---\n", 2)[1])
        self.update(path, {"record_status": "approved",
                           "reviewers": [dict(r, decision="approved") for r in front["reviewers"]]})

    def forge_review(self, head: str) -> str:
        """Rita's approving review of the pull request at `head`, as GitHub's reviews API exports it."""
        reviews = Path(self.env["RUNNER_TEMP"]) / "reviews.json"
        reviews.write_text(json.dumps([{"user": {"login": RITA_LOGIN}, "state": "APPROVED", "commit_id": head,
                                        "submitted_at": "2026-12-01T12:00:00Z"}]), encoding="utf-8")
        return str(reviews)

    def ci(self, base: str = "main", head: str = "HEAD") -> subprocess.CompletedProcess:
        """The guide's `what CI runs`, for the checked-out pull request."""
        return self.sh("what CI runs", BASE=self.repo.sha(base), HEAD=self.repo.sha(head))


def findings(output: str, gate: str, path: str) -> list[str]:
    """The error lines of `gate` at `path`, in the text or the github format."""
    return [line for line in output.splitlines() if f"::error file={path}," in line and f"title={gate} " in line
            or line.startswith(f"{path}:") and f" {gate} error: " in line]


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    """The whole guide, walked once; each step's results are kept for the tests below."""
    team = Team(tmp_path_factory.mktemp("adoption"))
    repo, seen = team.repo, {}

    # 1-7: the set-up, landed by the maintainer.
    seen["install"] = team.ok("install")
    team.write(".design-gates/config.yaml")
    key = team.ok("a key for the evidence runner")
    team.subs["<the public key gate-check key new printed>"] = re.search(r'public_key: "([^"]+)"', key).group(1)
    team.write(".design-gates/policy.yaml")
    team.write(".design-gates/requirements.txt")
    team.write("tests/test_rmsnorm.py")
    team.write("mkdocs.yml")
    team.write("docs/design/index.md")
    team.write(".github/workflows/design-gates.yml")
    team.write(".pre-commit-config.yaml")
    seen["suite after adoption"] = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/test_rmsnorm.py"],
                                                  cwd=repo.root, env=team.env, capture_output=True, text=True)
    repo.commit("Adopt design-gates: configuration, policy, evidence from the tests, site plugin, CI", who=MAX)

    # 8: a single-pr change.
    repo.branch("rms-norm-fp32-accumulation")
    seen["new"] = team.ok("start the record")
    seen["scaffold"] = repo.read(SINGLE)
    team.write(SINGLE)
    team.write(KERNEL)
    seen["single evidence"] = team.ok("evidence for the record")
    repo.commit("rms_norm: accumulate the mean of squares in float32", who=ADA)
    team.apply(f"{SINGLE} (decided)")
    repo.commit("Record Rita's answer to Q1", who=ADA)
    seen["single before review"] = team.sh("check the change")
    reviewed = repo.sha("HEAD")
    team.apply(f"{SINGLE} (approved)")
    repo.commit("Record Rita's review: approved", who=ADA)
    seen["single claimed, no review"] = team.sh("check the change")
    team.forge_review(reviewed)
    seen["single CI"] = team.ci()

    # One more commit on top, after the evidence and the review: the kernel loses its eps
    # parameter. G5 reports the API break and G3/G4 the evidence that no longer describes
    # the kernel (a throw-away branch; the pull request merges without it).
    repo.branch("drop-eps", "rms-norm-fp32-accumulation")
    repo.write(KERNEL, repo.read(KERNEL).replace("def rms_norm(x, weight, *, eps=1e-6):", "def rms_norm(x, weight):")
               .replace("mean_square + eps", "mean_square + 1e-6"))
    repo.commit("rms_norm: eps is always 1e-6", who=ADA)
    seen["single, kernel edited"] = team.sh("check the change")
    repo.merge("rms-norm-fp32-accumulation")

    # 9: the stacked series A -> B -> C -> D.
    closed = {}
    for stage in "ABCD":
        repo.branch(f"gated-{stage.lower()}")
        if stage == "A":
            team.ok("start the gated record")
            team.write(GATED)
        elif stage == "B":
            team.write("src/normkit/gated.py")
            team.write("src/normkit/layer.py")
            team.write("tests/test_gated.py")
            team.apply(f"{GATED} (stage B)")
            seen["gated evidence B"] = team.ok("evidence for the gated record")
        elif stage == "C":
            team.write("src/normkit/layer.py (stage C)")
            team.apply(f"{GATED} (stage C)")
            team.ok("evidence for the gated record")
        else:
            team.write("docs/results/gated-rms-norm.md")
            team.apply(f"{GATED} (stage D)")
            # The guide says in prose which sentence of §7 becomes the link to the page.
            link = re.search(r'in place of "(.+?)", a link to the page:\n`(.+?)`', GUIDE.read_text(encoding="utf-8"))
            assert link.group(1) in repo.read(GATED)
            repo.write(GATED, repo.read(GATED).replace(link.group(1), link.group(2)))
        repo.commit(f"gated_rms_norm: stage {stage}", who=ADA)
        if stage == "A":
            team.decide(GATED)
            repo.commit("Record Rita's answer to Q1", who=ADA)
        review_at = repo.sha("HEAD")
        if stage == "A":
            team.approve(GATED)
            repo.commit("Record Rita's review: approved", who=ADA)
        team.forge_review(review_at)
        seen[f"gated CI {stage}"] = team.ci()
        closed[stage] = repo.merge(f"gated-{stage.lower()}")
        team.subs[f"<the merge commit of stage {stage}>"] = closed[stage]

    # The guide builds the site in step 8 already; the walk builds it once, with both records.
    seen["site"] = team.ok("build the site")
    seen["quiet"] = subprocess.run(["gate-check", "--quiet"], cwd=repo.root, env=team.env, capture_output=True,
                                   text=True)
    seen["team"] = team
    return seen


def test_the_guide_installs_the_release_its_ci_pins(walk):
    team = walk["team"]
    install = shlex.split(team.blocks["install"].text)
    assert install[:2] == ["pip", "install"]
    assert install[2] == team.blocks[".design-gates/requirements.txt"].text.strip()
    assert "stands in for git+https://github.com/<org>/design-gates@v0.1.0" in walk["install"]


def test_gate_check_new_scaffolds_the_record_the_guide_fills_in(walk):
    scaffold, filled = walk["scaffold"], walk["team"].blocks[SINGLE].text
    assert "[[fill:" in scaffold
    for line in ("id: rms-norm-fp32-accumulation", 'title: "rms_norm: accumulate the mean of squares in float32"'):
        assert line in scaffold and line in filled


def test_the_adopted_suite_still_passes_without_an_output_path(walk):
    assert walk["suite after adoption"].returncode == 0, walk["suite after adoption"].stdout
    assert "design-gates evidence" not in walk["suite after adoption"].stdout


def test_the_evidence_is_signed_bound_and_pinned(walk):
    repo = walk["team"].repo
    assert "2 pin(s) re-pinned" in walk["single evidence"]
    artifact = json.loads(repo.read("docs/evidence/rms-norm-fp32-accumulation-numeric.json"))
    assert artifact["id"] == "rms-norm-fp32-accumulation-numeric" and artifact["results"]["passed"] is True
    assert {"src/normkit/rmsnorm.py", "src/normkit/__init__.py", "tests/test_rmsnorm.py"} <= set(artifact["sources"])
    assert artifact["attestation"]["key_id"] == "normkit-ci"
    assert "0" * 64 not in repo.read(SINGLE)


def test_a_single_pr_change_fails_until_it_is_approved_on_the_forge(walk):
    before = walk["single before review"]
    assert before.returncode == 1
    assert findings(before.stdout, "G2", SINGLE) and "record_status is in-review" in before.stdout
    assert any("hot-path change" in line for line in findings(before.stdout, "G8", KERNEL)), before.stdout
    claimed = walk["single claimed, no review"]
    assert claimed.returncode == 1 and findings(claimed.stdout, "G8", SINGLE) + findings(claimed.stdout, "G8", KERNEL)
    assert walk["single CI"].returncode == 0, walk["single CI"].stdout


def test_g5_catches_a_parameter_removed_under_src(walk):
    done = walk["single, kernel edited"]
    assert done.returncode == 1
    hits = findings(done.stdout, "G5", KERNEL)
    assert any("normkit.rmsnorm.rms_norm" in line and "'eps' removed" in line for line in hits), done.stdout


def test_evidence_goes_stale_when_the_kernel_changes(walk):
    done = walk["single, kernel edited"]
    assert done.returncode == 1
    stale = [line for line in findings(done.stdout, "G3", SINGLE) + findings(done.stdout, "G4", SINGLE)
             if "stale" in line and KERNEL in line]
    assert stale, done.stdout


SHOWN_OUTPUTS = [("output: check the change", "single before review"),
                 ("output: check the change, eps removed", "single, kernel edited")]


@pytest.mark.parametrize("title, run", SHOWN_OUTPUTS)
def test_the_outputs_the_guide_shows_are_what_gate_check_prints(walk, title, run):
    """Each line shown is part of a printed line; `…` stands for what varies (a line number)."""
    printed = walk[run].stdout.splitlines()
    for line in walk["team"].block(title).text.splitlines():
        pattern = ".*".join(re.escape(part) for part in line.split("…"))
        assert any(re.search(pattern, out) for out in printed), \
            f"docs/adopting.md shows {line!r}; gate-check printed:\n" + "\n".join(printed)


def test_the_stacked_series_passes_each_stage_through_gate_check_base(walk):
    for stage in "ABCD":
        done = walk[f"gated CI {stage}"]
        assert done.returncode == 0, f"stage {stage}:\n{done.stdout}\n{done.stderr}"
    assert "2 pin(s) re-pinned" in walk["gated evidence B"]


def test_the_site_builds_strict_with_the_plugin(walk):
    site = walk["team"].repo.root / "site"
    for page in ("design/rms-norm-fp32-accumulation/index.html", "design/gated-rms-norm/index.html",
                 "gates/G5/index.html"):
        assert (site / page).is_file(), page


def test_a_quiet_run_on_the_merged_branch_passes(walk):
    assert walk["quiet"].returncode == 0, walk["quiet"].stdout + walk["quiet"].stderr


def test_every_titled_block_of_the_guide_is_followed(walk):
    team = walk["team"]
    compared = {title for title, _ in SHOWN_OUTPUTS}  # test_the_outputs_the_guide_shows_are_what_gate_check_prints
    assert set(team.blocks) - team.used - compared == set()


def test_the_guide_s_workflow_uses_this_repository_s_action_with_its_inputs(walk):
    workflow = yaml.safe_load(walk["team"].blocks[".github/workflows/design-gates.yml"].text)
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["gate-check"]["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    uses = next(step for step in steps if "gate-check@" in step.get("uses", ""))
    assert uses["uses"].split("/", 2)[2].split("@")[0] == ".github/actions/gate-check"
    assert set(uses["with"]) <= set(action["inputs"])
    if uses["with"].get("upload-sarif") == "true":
        assert workflow["permissions"]["security-events"] == "write"



def test_the_guide_s_pre_commit_hook_is_one_this_repository_ships(walk):
    config = yaml.safe_load(walk["team"].blocks[".pre-commit-config.yaml"].text)
    shipped = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    [entry] = config["repos"]
    assert entry["repo"].endswith("/design-gates") and {hook["id"] for hook in entry["hooks"]} <= shipped
