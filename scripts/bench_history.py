"""Time the history checks over a generated repository with many commits.

    python scripts/bench_history.py                    # 2,000 commits
    python scripts/bench_history.py --commits 500 --repeat 3
    python scripts/bench_history.py --commits 200 --modules 226   # a library-sized package

The repository (built with `git fast-import`, so building takes well under a second)
has the policy, a kernel package and a test on its first commit, then N commits by
alternating authors: each edits a note under docs/, every tenth a test, every
fiftieth a kernel module (a body change, no API break), and every commit carries a
Co-authored-by trailer. With `--modules N` the package also holds N modules that import
from one another (`ops/m7.py` imports `f6` from `ops/m6.py`, and the package `__init__`
re-exports every `f`), and every fifth commit edits one of them (a body change), the way
a kernel library's history mostly touches its modules. Two timings are printed, both of what `gate-check` runs,
from loading the history to the report:

- `--base`: the N commits as one change (root..tip);
- `--history`: the policy's history.enforce_from set to the root commit, so each
  of the N first-parent commits is judged as its own change.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gates.frontends.cli import main  # noqa: E402

POLICY = """\
schema_version: 1
default_level: L1
rules:
  - paths: ["kernels/decode_attention/**"]
    level: L4
  - paths: ["docs/**", "tests/**"]
    level: L0
api:
  packages: [kernels]
"""
API = "def attention_decode(q, k_cache, v_cache, visible_tokens, *, scale=None, out=None):\n    return {n}\n"
PEOPLE = [("Ada Lindqvist", "ada@kernels.example"), ("Ben Sato", "ben@kernels.example")]


def _blob(path: str, text: str) -> str:
    return f"M 100644 inline {path}\ndata {len(text.encode('utf-8'))}\n{text}\n"


def _commit(mark: int, parent: int | None, who: tuple[str, str], message: str, files: dict[str, str]) -> str:
    name, email = who
    when = 1_700_000_000 + mark * 60
    lines = [f"commit refs/heads/main\nmark :{mark}\n",
             f"author {name} <{email}> {when} +0000\ncommitter {name} <{email}> {when} +0000\n",
             f"data {len(message.encode('utf-8'))}\n{message}\n"]
    if parent is not None:
        lines.append(f"from :{parent}\n")
    lines += [_blob(path, text) for path, text in files.items()]
    return "".join(lines) + "\n"


def _module(index: int, body: int) -> str:
    imported = f"from .m{index - 1} import f{index - 1}\n\n\n" if index else ""
    return f"{imported}def f{index}(x, *, scale=None, out=None):\n    return {body}\n"


def build(folder: Path, commits: int, modules: int = 0) -> Path:
    """A repository with a seed commit and `commits` more on main."""
    repo = folder / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    seed = {
        ".design-gates/policy.yaml": POLICY,
        "kernels/__init__.py": "".join(f"from .ops.m{i} import f{i}\n" for i in range(modules)),
        "kernels/decode_attention/__init__.py": "",
        "kernels/decode_attention/api.py": API.format(n=0),
        "tests/test_api.py": "def test_nothing():\n    assert True\n",
    }
    if modules:
        seed["kernels/ops/__init__.py"] = ""
        seed.update({f"kernels/ops/m{i}.py": _module(i, 0) for i in range(modules)})
    stream = [_commit(1, None, PEOPLE[0], "Seed", seed)]
    for n in range(1, commits + 1):
        files = {f"docs/notes/note-{n % 100}.md": f"note {n}\n"}
        if n % 10 == 0:
            files[f"tests/test_{n % 7}.py"] = f"def test_{n}():\n    assert True\n"
        if n % 50 == 0:
            files["kernels/decode_attention/api.py"] = API.format(n=n)
        if modules and n % 5 == 0:
            index = (n * 7) % modules
            files[f"kernels/ops/m{index}.py"] = _module(index, n)
        co = PEOPLE[(n + 1) % 2]
        stream.append(_commit(n + 1, n, PEOPLE[n % 2], f"Change {n}\n\nCo-authored-by: {co[0]} <{co[1]}>",
                              files))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input="".join(stream).encode("utf-8"), check=True)
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=repo, check=True)
    return repo


def timed(repo: Path, *args: str) -> tuple[float, int]:
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([*args, "--repo-root", str(repo)])
    return time.perf_counter() - start, code


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--modules", type=int, default=0, help="modules importing one another in the package")
    parser.add_argument("--skip-history", action="store_true", help="time only --base")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        repo = build(Path(folder), args.commits, args.modules)
        print(f"built {args.commits} commits ({args.modules} extra modules) in {time.perf_counter() - start:.2f} s")
        root = subprocess.run(["git", "rev-list", "--max-parents=0", "main"], cwd=repo, capture_output=True,
                              text=True, check=True).stdout.strip()
        for _ in range(args.repeat):
            seconds, code = timed(repo, "--base", root, "--head", "main")
            print(f"--base over {args.commits} commits: {seconds:.2f} s (exit {code})")
        if args.skip_history:
            return
        (repo / ".design-gates" / "policy.yaml").write_text(POLICY + f"history:\n  enforce_from: {root}\n")
        subprocess.run(["git", "-c", "user.name=Max", "-c", "user.email=max@kernels.example", "commit", "-qam",
                        "policy: the ratchet"], cwd=repo, check=True)
        for _ in range(args.repeat):
            seconds, code = timed(repo, "--history")
            print(f"--history over {args.commits + 1} first-parent commits: {seconds:.2f} s (exit {code})")


if __name__ == "__main__":
    main_bench()
