"""The quick start (docs/quickstart.md), followed block by block in a fresh library.

Every block titled with a path is written to that path and every `sh` block runs in bash
from the repository's root, with `gate-check` running this checkout and a `pip` that
installs nothing (the stand-ins of `tests/test_adoption.py`). The page promises a record
that `gate-check` passes; the test holds it to that, and to the output the page shows.
"""

from __future__ import annotations

import re
import subprocess

from markdown_it import MarkdownIt

from gitrepo_builder import MAX, GitRepo
from mkdocs_site import REPO
from test_adoption import tool_env

PAGE = REPO / "docs" / "quickstart.md"

LIBRARY = {
    "src/mylib/__init__.py": "from .rmsnorm import rms_norm\n",
    "src/mylib/rmsnorm.py": "def rms_norm(x, weight, *, eps=1e-6):\n    return x\n",
    "src/mylib/reference.py": "def rms_norm_fp64(x, weight, eps=1e-6):\n    return x\n",
    "tests/test_rmsnorm.py": "def test_rms_norm():\n    assert True\n",
}


def blocks() -> list[tuple[str, str, str]]:
    """(language, title, text) of the page's titled blocks, in order."""
    found = []
    for token in MarkdownIt("commonmark").parse(PAGE.read_text(encoding="utf-8")):
        match = re.fullmatch(r'(\w+)\s+title="([^"]+)"', token.info.strip()) if token.type == "fence" else None
        if match:
            found.append((match.group(1), match.group(2), token.content))
    return found


def test_the_quick_start_ends_with_a_record_gate_check_passes(tmp_path):
    env = tool_env(tmp_path / "tools")
    repo = GitRepo(tmp_path / "mylib")
    for path, text in LIBRARY.items():
        repo.write(path, text)
    repo.commit("mylib", who=MAX)
    printed = None
    for lang, title, text in blocks():
        if lang == "sh":
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=repo.root, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, f"{title}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
            printed = done.stdout
        elif title == "gate-check prints":
            assert printed is not None and printed.splitlines()[-1] == text.strip()
        elif "/" in title or title.startswith("."):
            repo.write(title, text)
    assert printed is not None


def test_the_quick_start_is_one_page_in_front_of_the_guide():
    words = len(PAGE.read_text(encoding="utf-8").split())
    assert words < 1500, words
    guide = (REPO / "docs" / "adopting.md").read_text(encoding="utf-8")
    assert "(quickstart.md)" in guide.split("\n## ", 1)[0]
