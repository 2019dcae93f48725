"""Evidence goes stale when a new module would be imported in place of a measured one.

The artifact records the run's import path and the name each bound Python file was imported as
(`source_imports`). A package or module of the same top-level name that now sits in a folder earlier on that
path shadows the measured file without changing it: with `pythonpath = src .`, a new `src/tools/metrics.py`
replaces the bound `tools/metrics.py` that the tests call to compare results.
"""

from __future__ import annotations

import hashlib

from gates.evidence.artifacts import EvidenceArtifact, stale_sources

HELPER = b"def rel_l2(out, ref):\n    return abs(out - ref) / abs(ref)\n"


def measured(root, path=("src", ".", "<outside>")) -> EvidenceArtifact:
    (root / "tools").mkdir()
    (root / "tools" / "__init__.py").write_bytes(b"")
    (root / "tools" / "metrics.py").write_bytes(HELPER)
    sources = {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest()
               for rel in ("tools/__init__.py", "tools/metrics.py")}
    imports = {"scheme": "python-import/1", "path": list(path),
               "modules": {"tools/__init__.py": "tools", "tools/metrics.py": "tools.metrics"}}
    return EvidenceArtifact("evidence/x.json", {"sources": sources, "source_imports": imports}, "0" * 64)


def plant(root, folder="src") -> None:
    (root / folder / "tools").mkdir(parents=True)
    (root / folder / "tools" / "__init__.py").write_bytes(b"")
    (root / folder / "tools" / "metrics.py").write_bytes(b"def rel_l2(out, ref):\n    return 0.0\n")


def test_a_package_earlier_on_the_import_path_makes_the_modules_it_shadows_stale(tmp_path):
    artifact = measured(tmp_path)
    assert stale_sources(artifact, tmp_path) == []
    plant(tmp_path)
    assert stale_sources(artifact, tmp_path) == ["tools/__init__.py", "tools/metrics.py"]


def test_a_module_file_of_the_top_level_name_shadows_too(tmp_path):
    artifact = measured(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "tools.py").write_bytes(b"")
    assert stale_sources(artifact, tmp_path) == ["tools/__init__.py", "tools/metrics.py"]


def test_a_package_later_on_the_import_path_shadows_nothing(tmp_path):
    artifact = measured(tmp_path, path=(".", "src"))
    plant(tmp_path)
    assert stale_sources(artifact, tmp_path) == []


def test_a_folder_without_init_is_no_package_that_shadows(tmp_path):
    artifact = measured(tmp_path)
    (tmp_path / "src" / "tools").mkdir(parents=True)
    (tmp_path / "src" / "tools" / "notes.txt").write_bytes(b"")
    assert stale_sources(artifact, tmp_path) == []


def test_entries_after_one_outside_the_checkout_are_not_judged(tmp_path):
    artifact = measured(tmp_path, path=("<outside>", "src", "."))
    plant(tmp_path)
    assert stale_sources(artifact, tmp_path) == []


def namespace_measured(root) -> EvidenceArtifact:
    """tools/ without __init__: a namespace package, which Python merges from every folder of the path in order."""
    (root / "tools").mkdir()
    (root / "tools" / "metrics.py").write_bytes(HELPER)
    sources = {"tools/metrics.py": hashlib.sha256(HELPER).hexdigest()}
    imports = {"scheme": "python-import/1", "path": ["src", ".", "<outside>"], "modules": {"tools/metrics.py": "tools.metrics"}}
    return EvidenceArtifact("evidence/x.json", {"sources": sources, "source_imports": imports}, "0" * 64)


def test_a_module_in_an_earlier_portion_of_a_namespace_package_shadows_the_measured_one(tmp_path):
    artifact = namespace_measured(tmp_path)
    (tmp_path / "src" / "tools").mkdir(parents=True)
    (tmp_path / "src" / "tools" / "other.py").write_bytes(b"")
    assert stale_sources(artifact, tmp_path) == []  # another module of the namespace shadows nothing
    (tmp_path / "src" / "tools" / "metrics.py").write_bytes(b"def rel_l2(out, ref):\n    return 0.0\n")
    assert stale_sources(artifact, tmp_path) == ["tools/metrics.py"]


def test_a_regular_package_earlier_on_the_path_replaces_a_whole_namespace_package(tmp_path):
    artifact = namespace_measured(tmp_path)
    (tmp_path / "src" / "tools").mkdir(parents=True)
    (tmp_path / "src" / "tools" / "__init__.py").write_bytes(b"")
    assert stale_sources(artifact, tmp_path) == ["tools/metrics.py"]


def test_a_new_module_named_as_one_the_run_imported_from_outside_makes_the_evidence_stale(tmp_path):
    # tests/ comes first on the path: a new tests/numpy.py runs in place of numpy
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_bytes(b"")
    imports = {"scheme": "python-import/1", "path": ["tests", ".", "<outside>"], "modules": {},
               "outside": ["numpy", "pytest"], "held": {"tests": ["helpers"], ".": []}}
    artifact = EvidenceArtifact("evidence/x.json", {"sources": {}, "source_imports": imports}, "0" * 64)
    assert stale_sources(artifact, tmp_path) == []
    (tmp_path / "tests" / "other_helpers.py").write_bytes(b"")  # named as nothing the run imported
    assert stale_sources(artifact, tmp_path) == []
    (tmp_path / "tests" / "numpy.py").write_bytes(b"from numpy import *\n")
    assert stale_sources(artifact, tmp_path) == [
        "tests/numpy.py (new since the measurement, imported as numpy in place of the module the run used)"]


def test_a_module_a_folder_already_held_when_measured_is_no_new_shadow(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "numpy.py").write_bytes(b"")
    imports = {"scheme": "python-import/1", "path": ["tests", "<outside>"], "modules": {},
               "outside": ["numpy"], "held": {"tests": ["numpy"]}}
    artifact = EvidenceArtifact("evidence/x.json", {"sources": {}, "source_imports": imports}, "0" * 64)
    assert stale_sources(artifact, tmp_path) == []
