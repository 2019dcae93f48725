"""Build real git repositories for the history-check tests.

`GitRepo` wraps the `git` command line on a temporary folder: write files, commit
as a named person with trailers, branch, merge with `--no-ff`. `record_text(...)`
writes a design record's front matter and body the way an engineer would.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from gates.history import check_change
from gates.history.git_repo import load_change_set


@dataclass(frozen=True)
class Who:
    name: str
    email: str

    def as_dict(self) -> dict:
        return {"name": self.name, "email": self.email}

    def trailer(self, key: str) -> str:
        return f"{key}: {self.name} <{self.email}>"


ADA = Who("Ada Lindqvist", "ada@kernels.example")  # implementer, record author
RITA = Who("Rita Okafor", "rita@kernels.example")  # independent reviewer
MAX = Who("Max Brandt", "max@kernels.example")  # maintainer who merges
BEN = Who("Ben Sato", "ben@kernels.example")  # second implementer


class GitRepo:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")
        self._clock = 1_700_000_000

    def git(self, *args: str, who: Who = MAX) -> str:
        self._clock = getattr(self, "_clock", 1_700_000_000) + 60
        env = dict(os.environ)
        date = f"{self._clock} +0000"
        env.update(
            GIT_AUTHOR_NAME=who.name, GIT_AUTHOR_EMAIL=who.email, GIT_AUTHOR_DATE=date,
            GIT_COMMITTER_NAME=MAX.name, GIT_COMMITTER_EMAIL=MAX.email, GIT_COMMITTER_DATE=date,
            GIT_CONFIG_NOSYSTEM="1", HOME=str(self.root.parent),
        )
        done = subprocess.run(["git", *args], cwd=self.root, env=env, capture_output=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
        return done.stdout.decode("utf-8", errors="replace").strip()

    def write(self, path: str, content: str | bytes) -> None:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            file.write_bytes(content)
        else:
            file.write_text(content, encoding="utf-8")

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def delete(self, path: str) -> None:
        self.git("rm", "-q", "--", path)

    def commit(self, message: str, *, who: Who = ADA, trailers=()) -> str:
        self.git("add", "-A")
        text = message + ("\n\n" + "\n".join(trailers) if trailers else "")
        self.git("commit", "-q", "--allow-empty", "-m", text, who=who)
        return self.sha("HEAD")

    def sha(self, ref: str) -> str:
        return self.git("rev-parse", ref)

    def branch(self, name: str, start: str = "main") -> None:
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, ref: str) -> None:
        self.git("checkout", "-q", ref)

    def merge(self, branch: str, *, into: str = "main", who: Who = MAX) -> str:
        """Merge `branch` into `into` with a merge commit, as GitHub's merge button does."""
        self.checkout(into)
        self.git("merge", "-q", "--no-ff", "-m", f"Merge branch '{branch}'", branch, who=who)
        return self.sha("HEAD")

    def check(self, base: str = "main", head: str | None = None):
        """The findings of the history checks for base..head (head: the checked-out HEAD)."""
        change = load_change_set(self.root, base, head)
        try:
            return check_change(change, {}, self.root)
        finally:
            change.close()


def record_text(
    record_id: str,
    *,
    stage: str = "A",
    status: str = "in-review",
    authors=(ADA,),
    reviewers=((RITA, "pending"),),
    questions_decided: bool = False,
    covers=("kernels/decode_attention/**",),
    stacked_on=(),
    closed: dict | None = None,
    evidence=(),
    default_route_unchanged: bool = True,
    scopes: dict | None = None,
    extra: dict | None = None,
) -> str:
    """A design record as docs/design/<record_id>.md, in this project's format."""
    decision = "accepted" if questions_decided else None
    front = {
        "schema_version": 1,
        "id": record_id,
        "title": f"Record {record_id}",
        "risk": "L4",
        "record_status": status,
        "stage": stage,
        "lang": "en",
        "authors": [a.as_dict() for a in authors],
        "reviewers": [dict(r.as_dict(), decision=d) for r, d in reviewers],
        "covers": list(covers),
        "questions": [
            {"id": "Q1", "question": "Combine in a separate kernel?", "recommendation": "yes",
             "decision": decision, "blast_radius": "low"},
            {"id": "Q2", "question": "num_splits as a host parameter?", "recommendation": "yes",
             "decision": decision, "blast_radius": "medium"},
        ],
        "api": {"packages": ["kernels"], "default_route_unchanged": default_route_unchanged},
        "evidence": [{"id": Path(p).stem, "path": p, "kind": "profile"} for p in evidence],
    }
    if stacked_on:
        front["stacked_on"] = list(stacked_on)
    series = {}
    if scopes:
        series["scopes"] = scopes
    if closed:
        series["closed"] = dict(closed)
    if series:
        front["series"] = series
    front.update(extra or {})
    body = "\n".join(f"## §{n} Section {n}\n\nText.\n" for n in range(1, 11))
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n" + body


POLICY = """\
schema_version: 1
default_level: L1
rules:
  - paths: ["kernels/decode_attention/**"]
    level: L4
    reason: shared decode-attention hot path
  - paths: ["kernels/decode_layer.py"]
    level: L3
  - paths: ["docs/**", "tests/**"]
    level: L0
api:
  packages: [kernels]
  switches: ["kernels.decode_layer:SPLITKV_DEFAULT"]
"""

KERNEL_API = '''\
"""Decode attention host wrappers."""

__all__ = ["attention_decode"]


def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, out=None):
    return None
'''


def evidence_json(artifact_id: str) -> str:
    return json.dumps({"schema_version": 1, "id": artifact_id, "kind": "profile", "results": {}}, indent=2) + "\n"


# A design record at stage B that adds one name to the `kernels` package (the G5 tests' record).
PAGED_API_RECORD = """\
---
id: paged
stage: B
api:
  packages: [kernels]
  adds: [attention_decode_paged]
---

# Paged decode attention
"""


def seeded_repo(root: Path, *, package_root: str = "", policy: str = POLICY, files: dict | None = None) -> GitRepo:
    """main with the policy, a kernel package (under `package_root`, e.g. "src/") and a test, plus
    `files`, committed by the maintainer."""
    repo = GitRepo(root)
    repo.write(".design-gates/policy.yaml", policy)
    repo.write(f"{package_root}kernels/__init__.py", "from kernels.decode_attention.api import attention_decode\n")
    repo.write(f"{package_root}kernels/decode_attention/__init__.py", "")
    repo.write(f"{package_root}kernels/decode_attention/api.py", KERNEL_API)
    repo.write("tests/test_api.py", "def test_nothing():\n    assert True\n")
    for path, text in (files or {}).items():
        repo.write(path, text)
    repo.write("README.md", "# kernels\n")
    repo.commit("Seed the repository", who=MAX)
    return repo


def by_gate(findings) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for finding in findings:
        grouped.setdefault(finding.gate, []).append(finding)
    return grouped


def g5_of(findings) -> list[tuple]:
    """(path, severity, message) of each G5 finding."""
    return [(f.path, f.severity, f.message) for f in findings if f.gate == "G5"]


def g5_after_edit(repo: GitRepo, path: str, old: str, new: str, message: str) -> list[tuple]:
    """On a branch of its own, replace `old` by `new` in `path`, commit it as ADA, and return G5's findings."""
    repo.branch("change-" + message.split(":")[0].replace(" ", "-") + f"-{len(message)}")
    text = repo.read(path)
    assert old in text
    repo.write(path, text.replace(old, new))
    repo.commit(message, who=ADA)
    return g5_of(repo.check())
