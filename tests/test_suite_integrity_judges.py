"""A change may not write its own judge: every file that runs inside the measurement, or configures
pytest for it, judges the change.

The repository is a copy of the golden examples (tests/examples): `examplepkg/` is the code under
test (the record covers it), `suites/suite_numeric.py` the declared numeric suite. Each change
breaks or leaves the kernel and edits one file that takes part in the suite's run; the runner then
measures the change's tree (the examples' conftest writes the artifact, as a trusted runner would)
and the record pins what it wrote. G3 is judged with `--base`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gates.checks.runner import check_records
from gates.evidence.artifacts import file_sha256
from gates.history.git_repo import load_change_set
from gates.model.findings import Status

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G3/positive/numeric-within-tolerance.md"
EVIDENCE = "evidence/numeric-cpu.json"

# Restores the kernel the change breaks, from a file that looks like a package marker.
KERNEL_SWAP = '''"""The suites package."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import examplepkg.ops as ops


def _correct_split_sum(values, num_splits):
    chunk = math.ceil(len(values) / num_splits) if values else 1
    partials = [ops.single_pass_sum(values[s:s + chunk]) for s in range(0, len(values), chunk)] or [0.0]
    acc = partials[0]
    for partial in partials[1:]:
        acc = ops.f32(acc + partial)
    return acc


ops.split_sum = _correct_split_sum
'''


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "pyproject.toml").write_text('[project]\nname = "example"\n', encoding="utf-8")
    (target / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-qm", "base")
    return target


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.com", GIT_COMMITTER_NAME="Ada",
               GIT_COMMITTER_EMAIL="ada@example.com")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def write(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, encoding="utf-8")


def break_kernel(repo: Path) -> None:
    ops = repo / "examplepkg" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8").replace("    acc = partials[0]\n", "    acc = f32(partials[0] + 1.0)\n"),
                   encoding="utf-8")


def measure(repo: Path) -> dict:
    """Run the numeric suite on the change's tree as the evidence runner does, and pin the artifact it wrote."""
    old_pin = file_sha256(repo / EVIDENCE)
    env = dict(os.environ, DESIGN_GATES_EVIDENCE_OUT=str(repo / EVIDENCE), DESIGN_GATES_COVERS='["examplepkg/**"]')
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:design_gates_evidence",
                           "suites/suite_numeric.py"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    record = repo / RECORD
    record.write_text(record.read_text(encoding="utf-8").replace(old_pin, file_sha256(repo / EVIDENCE)), encoding="utf-8")
    return json.loads((repo / EVIDENCE).read_text(encoding="utf-8"))


def judge_change(repo: Path, run_suites: bool = False):
    """G3's result for the working tree, committed on top of the base commit."""
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the change")
    change = load_change_set(repo, base, "HEAD")
    try:
        report = check_records([repo / RECORD], repo, gates=["G3"], change=change, run_suites=run_suites)
    finally:
        change.close()
    assert not report.input_errors, report.input_errors
    return report.records[0].gates["G3"]


def messages(result) -> str:
    return "\n".join(f.message for f in result.findings)


def test_a_package_init_that_swaps_the_kernel_judges_the_change(repo):
    break_kernel(repo)
    write(repo, "suites/__init__.py", KERNEL_SWAP)
    artifact = measure(repo)
    assert artifact["results"]["passed"] is True and "suites/__init__.py" in artifact["sources"]
    result = judge_change(repo)
    assert result.status is Status.FAIL
    # found by where it lies (a package __init__ of the test folder runs before the tests), evidence or not
    assert "suites/__init__.py is edited by this change and judges it (suite suites/suite_numeric.py)" in \
        messages(result)


def test_a_pytest_toml_beside_the_suite_that_loads_a_swapping_plugin_judges_the_change(repo):
    break_kernel(repo)
    write(repo, "suites/pytest.toml", '[pytest]\naddopts = ["-p", "suites.speedups"]\n')
    write(repo, "suites/speedups.py", KERNEL_SWAP)
    artifact = measure(repo)
    assert artifact["results"]["passed"] is True and "suites/speedups.py" in artifact["sources"]
    text = messages(judge_change(repo))
    assert "suites/pytest.toml is edited by this change and judges it (suite suites/suite_numeric.py)" in text
    assert "suites/speedups.py is edited by this change and judges it: evidence 'numeric-cpu' binds it" in text


def test_a_helper_module_the_evidence_binds_judges_the_change_without_running_the_suite(repo):
    with open(repo / "suites" / "cases.py", "a", encoding="utf-8") as handle:
        handle.write("\nROWS = 1\n")
    measure(repo)
    assert "suites/cases.py is edited by this change and judges it: evidence 'numeric-cpu' binds it" in messages(
        judge_change(repo))


def test_a_judge_edited_in_its_comments_only_judges_nothing(repo):
    """A comment fixed in a test helper and in the suite changes no token the run executes."""
    with open(repo / "suites" / "cases.py", "a", encoding="utf-8") as handle:
        handle.write("\n# fewer rows would do\n")
    with open(repo / "suites" / "suite_numeric.py", "a", encoding="utf-8") as handle:
        handle.write("\n# the oracle is float64\n")
    measure(repo)
    result = judge_change(repo)
    assert "judges it" not in messages(result)
    assert result.status is Status.PASS, messages(result)


def test_a_pyproject_beside_the_suite_judges_only_through_its_pytest_section(repo):
    write(repo, "suites/pyproject.toml", '[project]\nname = "suites"\n')
    assert "suites/pyproject.toml" not in messages(judge_change(repo))


def test_a_covered_kernel_edit_and_an_unrelated_file_do_not_judge_the_change(repo):
    ops = repo / "examplepkg" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    write(repo, "docs/notes.md", "Notes.\n")
    measure(repo)
    result = judge_change(repo)
    assert "judges it" not in messages(result)
    assert result.status is Status.PASS, messages(result)


def test_a_file_that_is_not_text_in_the_change_judges_nothing(repo):
    """A plot for the results page, and byte-code committed by mistake (G0's to report), are no suite files."""
    plot = repo / "docs" / "results" / "speedup.png"
    plot.parent.mkdir(parents=True)
    plot.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    (repo / "examplepkg" / "__pycache__").mkdir(exist_ok=True)
    (repo / "examplepkg" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"\xa7\r\r\n\x00\x00\x00\x00\xe3")
    git(repo, "add", "-f", "examplepkg/__pycache__/ops.cpython-311.pyc")
    measure(repo)
    result = judge_change(repo)
    assert result.status is Status.PASS, messages(result)


def with_a_library_module(repo: Path) -> None:
    """The base commit gains a library module outside the test folders that the suite's run imports."""
    write(repo, "mathlib/__init__.py", "")
    write(repo, "mathlib/rounding.py", "def round_half_even(x):\n    return round(x)\n")
    conftest = repo / "suites" / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8") + "\nimport mathlib.rounding  # noqa: E402,F401\n",
                        encoding="utf-8")
    measure(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: a library module the suites import")


def test_a_library_module_the_run_merely_imported_is_a_dependency_not_a_judge(repo):
    with_a_library_module(repo)
    write(repo, "mathlib/rounding.py", "def round_half_even(x):\n    # Python rounds half to even\n    return round(x)\n")
    artifact = measure(repo)
    assert "mathlib/rounding.py" in artifact["sources"]
    result = judge_change(repo)
    assert result.status is Status.PASS, messages(result)


def test_a_library_module_edited_after_the_measurement_makes_the_evidence_stale_not_a_judge(repo):
    with_a_library_module(repo)
    write(repo, "mathlib/rounding.py", "def round_half_even(x):\n    return round(x + 0.5)\n")
    text = messages(judge_change(repo))
    assert "evidence 'numeric-cpu' is stale: 1 bound file changed since it was measured: mathlib/rounding.py;" in text
    assert "judges it" not in text


def with_a_registered_plugin(repo: Path, *, measured_at_base: bool) -> None:
    """The base commit gains a pytest plugin outside the test folders and a root pytest.toml that loads it: an
    earlier change that nothing measured with, so nothing judged it then."""
    write(repo, "tools/__init__.py", "")
    write(repo, "tools/speedups.py", KERNEL_SWAP)
    write(repo, "pytest.toml", '[pytest]\naddopts = ["-p", "tools.speedups"]\n')
    if measured_at_base:
        measure(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: a plugin from an earlier change")


def test_a_plugin_an_earlier_change_registered_judges_the_first_change_measured_with_it(repo):
    with_a_registered_plugin(repo, measured_at_base=False)
    break_kernel(repo)
    artifact = measure(repo)
    assert artifact["results"]["passed"] is True and "tools/speedups.py" in artifact["sources"]
    result = judge_change(repo)
    assert result.status is Status.FAIL
    assert ("tools/speedups.py is a pytest plugin from this repository that evidence 'numeric-cpu' loaded and the "
            "artifact at base did not: it judges the measurement of suite suites/suite_numeric.py") in messages(result)


def test_a_plugin_the_artifact_at_base_already_listed_is_no_new_judge(repo):
    with_a_registered_plugin(repo, measured_at_base=True)
    ops = repo / "examplepkg" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    measure(repo)
    assert "is a pytest plugin from this repository" not in messages(judge_change(repo))


def test_with_run_suites_a_plugin_an_earlier_change_registered_judges_the_change_too(repo):
    with_a_registered_plugin(repo, measured_at_base=False)
    break_kernel(repo)
    text = messages(judge_change(repo, run_suites=True))
    assert ("tools/speedups.py is a pytest plugin from this repository that the run of suites/suite_numeric.py "
            "loaded and the artifact at base did not") in text


@pytest.mark.parametrize("plugin, module", [
    # a file under the test folders is a judge edit only where the suite's evidence binds it: one that no measurement
    # loaded yet is caught when the first measurement loads it
    ("suites/speedups.py", "suites.speedups"),
    # a conftest.py outside the suite's folders, loaded by name, is a plugin like any other
    ("tools/conftest.py", "tools.conftest"),
], ids=["under-the-test-folder", "a-conftest-elsewhere"])
def test_a_plugin_an_earlier_change_registered_by_a_pytest_option_judges_the_first_change_measured_with_it(
        repo, plugin, module):
    if plugin.startswith("tools/"):
        write(repo, "tools/__init__.py", "")
    write(repo, plugin, KERNEL_SWAP)
    write(repo, "pytest.toml", f'[pytest]\naddopts = ["-p", "{module}"]\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: a plugin from an earlier change")
    break_kernel(repo)
    measure(repo)
    assert (f"{plugin} is a pytest plugin from this repository that evidence 'numeric-cpu' loaded and the "
            "artifact at base did not") in messages(judge_change(repo))


def test_an_artifact_file_at_base_that_no_approved_record_pinned_says_nothing_about_plugins(repo):
    # an earlier change leaves a decoy at a new path listing its plugin; the change then moves the record's evidence
    # there: what counts is what the record, approved at base, pinned
    with_a_registered_plugin(repo, measured_at_base=False)
    measure(repo)
    (repo / "evidence" / "decoy.json").write_bytes((repo / EVIDENCE).read_bytes())
    git(repo, "checkout", "--", RECORD, EVIDENCE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: an unreferenced artifact that lists the plugin")
    break_kernel(repo)
    measure(repo)
    (repo / "evidence" / "decoy.json").write_bytes((repo / EVIDENCE).read_bytes())
    git(repo, "checkout", "--", EVIDENCE)
    record = repo / RECORD
    record.write_text(record.read_text(encoding="utf-8").replace("evidence/numeric-cpu.json", "evidence/decoy.json"),
                      encoding="utf-8")
    assert ("tools/speedups.py is a pytest plugin from this repository that evidence 'numeric-cpu' loaded and the "
            "artifact at base did not") in messages(judge_change(repo))


@pytest.mark.parametrize("path, text", [
    ("devtools-0.1.dist-info/entry_points.txt", "[pytest11]\ndevtools = tools.speedups\n"),
    ("devtools-0.1.Dist-Info/entry_points.txt", "[pytest11]\ndevtools = tools.speedups\n"),
    ("pyproject.toml", '[project]\nname = "example"\n\n[project.entry-points.pytest11]\ndevtools = "tools.speedups"\n'),
    ("pyproject.toml", '[project]\nname = "example"\nentry-points.pytest11.devtools = "tools.speedups"\n'),
    ("setup.cfg", "[options.entry_points]\npytest11 =\n    devtools = tools.speedups\n"),
])
def test_a_change_that_registers_a_pytest_plugin_judges_every_suite(repo, path, text):
    # a pytest11 entry point loads its plugin into every run, wherever the plugin lies: registering one is writing
    # the judge, even before any measurement loads it
    write(repo, path, text)
    assert f"{path} is edited by this change and judges it (suite suites/suite_numeric.py)" in messages(
        judge_change(repo))


def test_project_metadata_without_plugin_entry_points_judges_nothing(repo):
    write(repo, "pyproject.toml", '[project]\nname = "example"\nversion = "0.2"\n')
    write(repo, "tools-0.1.dist-info/entry_points.txt", "[console_scripts]\ntool = tools.cli:main\n")
    assert "judges it" not in messages(judge_change(repo))
