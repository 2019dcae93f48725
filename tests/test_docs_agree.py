"""The README and the guides say what the code does, and the site publishes the product only.

A newcomer found `pip install "design-gates[docs]"` (which no index serves), an exit code
the CLI does not return, a layout table without examples/ and scripts/, two copies of
every gate page, and an experiment diary published beside the reviewer pages.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from gates.frontends.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "tests" / "examples"
README = (REPO / "README.md").read_text(encoding="utf-8")


def guides() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "gates/site/pages").glob("*.md"))]


def test_every_install_of_design_gates_in_the_docs_names_where_it_comes_from():
    installs = [(path.name, line) for path in guides() for line in path.read_text(encoding="utf-8").splitlines()
                if re.search(r"pip install\b.*?(?<![\w./-])design-gates(\[[^\]]*\])?(?=[\"'\s]|$)", line)]
    assert installs, "the guides install design-gates somewhere"
    assert [(name, line) for name, line in installs if " @ " not in line and " -e " not in line] == []


def test_the_readme_layout_table_names_every_top_level_folder():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    folders = {line.split("/", 1)[0] for line in tracked.splitlines() if "/" in line and not line.startswith(".")}
    layout = README[README.index("## Layout"):]
    assert sorted(f for f in folders if f"| `{f}/` |" not in layout) == []


@pytest.mark.parametrize("record, code", [
    (EXAMPLES / "G0" / "negative" / "schema-bad-risk.md", 1),  # parses, breaks the schema: a G0 failure
    (None, 2),                                                  # cannot be read at all
])
def test_the_readme_exit_codes_are_what_the_cli_returns(tmp_path, capsys, record, code):
    assert "breaks the record schema is a G0 failure\n(exit 1)" in README
    assert "a record that cannot be read at all" in README
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs" / "design").mkdir(parents=True)
    target = tmp_path / "docs" / "design" / "x.md"
    target.write_text(record.read_text(encoding="utf-8") if record else "---\nid: [unclosed\n---\n", encoding="utf-8")
    assert main(["--repo-root", str(tmp_path), "--gate", "G0"]) == code
    capsys.readouterr()


def test_the_readme_says_which_runs_that_judge_nothing_exit_0_and_how_ci_asks_for_2():
    assert "A run that judges nothing exits 0" in README
    assert "`gate-check --require-records`" in README and "`require_records: true`" in README


def test_the_site_publishes_no_lab_notebook():
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_loader())
    assert config.get("docs_dir", "docs") == "docs"
    assert (REPO / "lab" / "perf-notes.md").is_file() and (REPO / "lab" / "runs").is_dir()
    results = REPO / "docs" / "results"
    assert not (results / "runs").exists() and not (results / "perf-notes.md").exists()
    notes = [p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")
             if p.read_text(encoding="utf-8").startswith("<!-- results-notes:")]
    assert notes == [], "an experiment diary belongs in lab/"


def _loader():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    Loader.add_constructor("!ENV", lambda loader, node: None)
    return Loader
