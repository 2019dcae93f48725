"""An evidence artifact records what pytest collected, deselected and ran (`results.collection`).

G3 and G4 accept only evidence of the whole declared suite, so the artifact must say what a
session left out: cases deselected with `-k` (on the command line or through `addopts` in the
pytest configuration), node ids naming only the passing cases, a run stopped early. Each test
runs pytest in a throwaway repository (plain Python, no torch) with the evidence plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gates

DESIGN_GATES_ROOT = Path(gates.__file__).resolve().parents[1]
PLUGIN_ARGS = ["-p", "no:design_gates_evidence", "-p", "gates.evidence.evidence_plugin"]

TESTS = '''\
import pytest

CASES = [1, 2, 3, 4]


@pytest.mark.design_gates(kind="numeric")
@pytest.mark.parametrize("n", CASES)
def test_halving_is_exact(n, record_metric):
    record_metric("max_abs", abs(n / 2 * 2 - n), dtype="fp64")
'''


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"tests/test_halving.py": TESTS, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def collection(tmp_path: Path, *args: str, files=None) -> dict:
    """Run pytest with the evidence plugin in a fresh repository; the artifact's `results.collection`."""
    return measured_artifact(tmp_path, *args, files=files)["results"]["collection"]


def measured_artifact(tmp_path: Path, *args: str, files=None) -> dict:
    """Run pytest with the evidence plugin in a fresh repository; the artifact it wrote."""
    repo = make_repo(tmp_path / "repo", files or {})
    out = tmp_path / "evidence.json"
    environ = {key: value for key, value in os.environ.items()
               if not key.startswith("DESIGN_GATES_") and key != "PYTEST_ADDOPTS"}
    environ.update(PYTHONPATH=str(DESIGN_GATES_ROOT), DESIGN_GATES_EVIDENCE_OUT=str(out), DESIGN_GATES_COVERS="[]")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGIN_ARGS, *args],
                          cwd=repo, env=environ, capture_output=True, text=True, timeout=60)
    assert out.exists(), done.stdout + done.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_whole_run_shows_every_collected_test_ran(tmp_path):
    assert collection(tmp_path, "tests/test_halving.py") == {
        "scheme": "pytest-collection/1", "args": ["tests/test_halving.py"], "keyword": "", "markexpr": "",
        "deselect": [], "ignore": [], "collected": 4, "deselected": 0, "deselected_ids": [], "dropped": 0,
        "collection_errors": 0, "not_run": 0, "outcomes": {"passed": 4}, "plugins": []}


def test_a_keyword_selection_is_recorded_as_deselected_cases(tmp_path):
    record = collection(tmp_path, "tests", "-k", "1 or 2")
    assert (record["keyword"], record["collected"], record["deselected"]) == ("1 or 2", 4, 2)
    assert record["deselected_ids"] == ["tests/test_halving.py::test_halving_is_exact[3]",
                                        "tests/test_halving.py::test_halving_is_exact[4]"]


def test_a_selection_in_the_pytest_configuration_is_recorded_too(tmp_path):
    record = collection(tmp_path, "tests", files={"pytest.ini": "[pytest]\naddopts = -k 'not 4'\n"})
    assert (record["keyword"], record["deselected"], record["outcomes"]) == ("not 4", 1, {"passed": 3})


def test_node_ids_of_some_cases_are_recorded_as_the_args(tmp_path):
    record = collection(tmp_path, "tests/test_halving.py::test_halving_is_exact[1]")
    assert record["args"] == ["tests/test_halving.py::test_halving_is_exact[1]"]
    assert (record["collected"], record["deselected"]) == (1, 0)


def test_the_plugins_of_the_repository_the_run_loaded_are_recorded(tmp_path):
    files = {"tests/conftest.py": "", "tests/speedups.py": "", "pytest.ini": "[pytest]\naddopts = -p tests.speedups\n",
             "tests/__init__.py": ""}
    record = collection(tmp_path, "tests", files=files)
    assert record["plugins"] == ["tests/conftest.py", "tests/speedups.py"]


def test_a_run_stopped_at_the_first_failure_records_the_tests_it_never_ran(tmp_path):
    failing = TESTS.replace("n / 2 * 2 - n", "n / 2 * 2 - n + (n == 2)").replace(
        'record_metric("max_abs"', 'assert n != 2\n    record_metric("max_abs"')
    record = collection(tmp_path, "-x", "tests", files={"tests/test_halving.py": failing})
    assert (record["collected"], record["not_run"], record["outcomes"]) == (4, 2, {"failed": 1, "passed": 1})


def test_a_data_file_the_run_reads_is_bound_to_the_evidence(tmp_path):
    tests = TESTS.replace("CASES = [1, 2, 3, 4]", "import json\nimport pathlib\n\nROOT = pathlib.Path(__file__).parent.parent\n"
                          "CASES = json.loads((ROOT / 'tables' / 'cases.json').read_text())\n"
                          "LOCAL = (ROOT / 'build' / 'local.json').read_text()")
    repo = make_repo(tmp_path / "repo", {"tests/test_halving.py": tests, "tables/cases.json": "[1, 2]",
                                         "README.md": "not read\n", ".gitignore": "build/\n", "build/local.json": "{}"})
    out = tmp_path / "evidence.json"
    environ = {key: value for key, value in os.environ.items()
               if not key.startswith("DESIGN_GATES_") and key != "PYTEST_ADDOPTS"}
    environ.update(PYTHONPATH=str(DESIGN_GATES_ROOT), DESIGN_GATES_EVIDENCE_OUT=str(out), DESIGN_GATES_COVERS="[]")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGIN_ARGS, "tests"],
                   cwd=repo, env=environ, capture_output=True, text=True, timeout=60)
    written = json.loads(out.read_text(encoding="utf-8"))
    sources = written["sources"]
    assert "tables/cases.json" in sources and "tests/test_halving.py" in sources
    assert "README.md" not in sources and "build/local.json" not in sources  # not read; ignored by git
    assert written["source_tokens"]["scheme"] == "python-tokens/2"
    assert list(written["source_tokens"]["sha256"]) == ["tests/test_halving.py"]


def test_a_plugin_installed_in_an_environment_inside_the_checkout_is_not_a_repository_file(tmp_path):
    conftest = ("import pathlib\nimport sys\n\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / '.venv' / 'lib' / "
                "'python3' / 'site-packages'))\npytest_plugins = ['extra_plugin']\n")
    files = {"tests/conftest.py": conftest, ".venv/lib/python3/site-packages/extra_plugin.py": "",
             ".gitignore": ".venv/\n"}
    assert collection(tmp_path, "tests", files=files)["plugins"] == ["tests/conftest.py"]


def test_a_committed_folder_named_site_packages_is_the_repository_s(tmp_path):
    conftest = ("import pathlib\nimport sys\n\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / 'vendor' / "
                "'site-packages'))\npytest_plugins = ['extra_plugin']\n")
    files = {"tests/conftest.py": conftest, "vendor/site-packages/extra_plugin.py": ""}
    assert collection(tmp_path, "tests", files=files)["plugins"] == ["tests/conftest.py",
                                                                     "vendor/site-packages/extra_plugin.py"]


def test_tests_a_scheduling_plugin_deselects_after_collection_are_deselected_not_unrun(tmp_path):
    conftest = ('import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtestloop(session):\n'
                '    first, rest = session.items[:1], session.items[1:]\n'
                '    first[0].config.hook.pytest_runtest_protocol(item=first[0], nextitem=None)\n'
                '    session.config.hook.pytest_deselected(items=rest)\n'
                '    session.items[:] = first\n    return True\n')
    record = collection(tmp_path, "tests", files={"tests/conftest.py": conftest})
    assert (record["collected"], record["deselected"], record["not_run"], record["outcomes"]) == (4, 3, 0, {"passed": 1})


def test_a_plugin_object_is_recorded_as_the_file_of_the_module_that_defines_it(tmp_path):
    # an entry point may name `module:object`: an object has no __file__, the module of its class has
    devtools = "class Devtools:\n    def pytest_runtest_setup(self, item):\n        pass\n"
    conftest = "from tools.devtools import Devtools\n\n\ndef pytest_configure(config):\n" \
               "    config.pluginmanager.register(Devtools(), 'devtools')\n"
    files = {"tests/conftest.py": conftest, "tools/__init__.py": "", "tools/devtools.py": devtools,
             "pytest.ini": "[pytest]\npythonpath = .\n"}
    assert collection(tmp_path, "tests", files=files)["plugins"] == ["tests/conftest.py", "tools/devtools.py"]


def test_a_plugin_module_that_drops_its_file_and_spec_is_recorded_as_unresolved(tmp_path):
    vanish = "globals().pop('__file__', None)\nglobals().pop('__spec__', None)\n"
    files = {"tools/__init__.py": "", "tools/vanish.py": vanish, "pytest.ini": "[pytest]\npythonpath = .\n"}
    plugins = collection(tmp_path, "tests", "-p", "tools.vanish", files=files)["plugins"]
    assert plugins == ["<a plugin whose file is unknown: tools.vanish>"]


def test_the_artifact_records_the_import_path_and_the_name_each_bound_module_was_imported_as(tmp_path):
    tests = TESTS.replace("import pytest\n", "import pytest\n\nfrom tools.metrics import halve\n", 1)
    files = {"tests/test_halving.py": tests, "tools/__init__.py": "", "tools/metrics.py": "def halve(x):\n    return x / 2\n",
             "pytest.ini": "[pytest]\npythonpath = src .\n"}
    imports = measured_artifact(tmp_path, "tests", files=files)["source_imports"]
    assert imports["scheme"] == "python-import/1"
    assert imports["modules"]["tools/metrics.py"] == "tools.metrics"
    assert imports["path"].index("src") < imports["path"].index(".")


def test_a_plugin_object_whose_class_claims_another_module_is_recorded_by_its_hooks_file(tmp_path):
    devtools = ("class Devtools:\n    def pytest_runtest_setup(self, item):\n        pass\n\n\n"
                "Devtools.__module__ = 'json'\n")
    conftest = "from tools.devtools import Devtools\n\n\ndef pytest_configure(config):\n" \
               "    config.pluginmanager.register(Devtools(), 'devtools')\n"
    files = {"tests/conftest.py": conftest, "tools/__init__.py": "", "tools/devtools.py": devtools,
             "pytest.ini": "[pytest]\npythonpath = .\n"}
    assert collection(tmp_path, "tests", files=files)["plugins"] == ["tests/conftest.py", "tools/devtools.py"]
