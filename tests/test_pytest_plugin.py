"""The pytest plugin: a record is a file, each gate an item; pytest selects, reports and writes JUnit."""

from __future__ import annotations

import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import gates.frontends.pytest_plugin  # noqa: F401  imported here so that in-process runs share one PyYAML

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).parent / "examples"


def _plugin_args() -> list[str]:
    """Installed, the plugin loads through its pytest11 entry point; from a bare checkout, name it."""
    installed = any(ep.name == "design_gates" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "gates.frontends.pytest_plugin"]


PLUGIN = _plugin_args()


@pytest.fixture
def repo(pytester):
    root = pytester.path
    for name in ("examplepkg", "evidence", "suites", "fingerprints.json"):
        source = EXAMPLES / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, root / name)
    design = root / "docs" / "design"
    design.mkdir(parents=True)
    shutil.copy(EXAMPLES / "docs" / "design" / "base-record.md", design)
    for folder in ("G0/positive", "G7/negative"):
        (root / folder).mkdir(parents=True)
    shutil.copy(EXAMPLES / "G0" / "positive" / "form-complete-en.md", root / "G0" / "positive")
    shutil.copy(EXAMPLES / "G7" / "negative" / "untraced-result.md", root / "G7" / "negative")
    (root / ".git").mkdir()
    pytester.makeini("[pytest]\n")
    return root


def test_records_under_docs_design_are_collected_one_item_per_gate(pytester, repo):
    result = pytester.runpytest(*PLUGIN, "docs/design", "-v")
    result.assert_outcomes(passed=6, skipped=3)
    result.stdout.fnmatch_lines(["*docs/design/base-record.md::G0 PASSED*", "*base-record.md::G3 SKIPPED*"])


def test_gates_option_collects_docs_design_without_naming_it(pytester, repo):
    pytester.makepyfile(test_other="def test_unrelated():\n    pass\n")
    result = pytester.runpytest(*PLUGIN, "--gates")
    result.assert_outcomes(passed=6, skipped=3)


def test_markdown_outside_docs_design_is_not_collected_without_the_option(pytester, repo):
    result = pytester.runpytest(*PLUGIN, "G7")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_a_failing_gate_fails_its_item_with_the_findings(pytester, repo):
    result = pytester.runpytest(*PLUGIN, "--gates", "G7/negative/untraced-result.md")
    result.assert_outcomes(passed=8, failed=1)
    result.stdout.fnmatch_lines(["*G7 Claims discipline failed:*",
                                 "*untraced-result.md:105:20: G7 error: 9.1 µs is not the value it names*"])


def test_selection_with_k(pytester, repo):
    result = pytester.runpytest(*PLUGIN, "--gates", "docs/design", "G0", "-k", "G7", "-v")
    result.assert_outcomes(passed=2, deselected=16)
    result.stdout.fnmatch_lines(["*form-complete-en.md::G7 PASSED*"])


def test_junit_xml_carries_the_findings(pytester, repo):
    junit = repo / "gates.xml"
    result = pytester.runpytest(*PLUGIN, "--gates", "G7", f"--junitxml={junit}")
    result.assert_outcomes(passed=8, failed=1)
    assert "9.1 µs is not the value it names" in junit.read_text(encoding="utf-8")


def test_stage_option(pytester, repo):
    result = pytester.runpytest(*PLUGIN, "docs/design", "--gates-stage", "B", "-k", "G2")
    result.assert_outcomes(failed=1, deselected=8)


def test_an_unreadable_record_is_one_failing_item(pytester, repo):
    (repo / "docs" / "design" / "broken.md").write_text("---\nid: a\nid: b\n---\n", encoding="utf-8")
    result = pytester.runpytest(*PLUGIN, "docs/design/broken.md")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*unreadable record: docs/design/broken.md:3:1: duplicate key 'id'*"])


def test_the_configured_records_folder_is_collected(pytester, repo):
    (repo / "docs" / "design").rename(repo / "docs" / "rfcs")  # same depth: the record's links still resolve
    (repo / ".design-gates").mkdir()
    (repo / ".design-gates" / "config.yaml").write_text("records: [docs/rfcs]\n", encoding="utf-8")
    result = pytester.runpytest(*PLUGIN, "--gates", "-v")
    result.assert_outcomes(passed=6, skipped=3)
    result.stdout.fnmatch_lines(["*docs/rfcs/base-record.md::G0 PASSED*"])


def test_an_invalid_configuration_stops_the_collection_with_its_location(pytester, repo):
    (repo / ".design-gates").mkdir()
    (repo / ".design-gates" / "config.yaml").write_text("recrods: [rfcs]\n", encoding="utf-8")
    result = pytester.runpytest(*PLUGIN, "--gates")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*.design-gates/config.yaml:1:1: error: *unknown key 'recrods'*did you mean 'records'?*"])


def test_loading_the_plugins_leaves_the_gates_unimported():
    """Every pytest run of a repository that installed design-gates loads both plugins: they import the
    gates (regular expressions, schemas) only when a record is collected or evidence is written."""
    import subprocess
    import sys

    probe = ("import sys, gates.frontends.pytest_plugin, gates.evidence.evidence_plugin; "
             "print(sorted(name for name in sys.modules if name.startswith('gates.checks')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
