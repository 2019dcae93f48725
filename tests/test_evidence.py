"""Evidence artifacts: schema, pins, staleness that names the changed file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gates.evidence.artifacts import EvidenceStore, file_sha256, load_artifact, stale_sources, verify_sha256
from gates.model.errors import InputError

EXAMPLES = Path(__file__).parent / "examples"


@pytest.fixture
def repo(tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("G*", "__pycache__"))
    return target


def test_load_an_artifact(repo):
    artifact = load_artifact("evidence/ncu-single-pass.json", repo)
    assert (artifact.id, artifact.kind) == ("ncu-single-pass", "profile")
    assert artifact.results["metrics"]["sm__warps_active"] == 8.33
    assert verify_sha256(artifact, file_sha256(repo / "evidence" / "ncu-single-pass.json"))
    assert not verify_sha256(artifact, "0" * 64)


def test_fresh_until_a_measured_source_changes(repo):
    artifact = load_artifact("evidence/numeric-cpu.json", repo)
    assert stale_sources(artifact, repo) == []
    with open(repo / "examplepkg" / "ops.py", "a", encoding="utf-8") as handle:
        handle.write("\n# tweak\n")
    assert stale_sources(artifact, repo) == ["examplepkg/ops.py"]


def test_a_missing_source_is_stale(repo):
    (repo / "examplepkg" / "ops.py").unlink()
    assert stale_sources(load_artifact("evidence/numeric-cpu.json", repo), repo) == ["examplepkg/ops.py"]


def _rewrite(repo: Path, name: str, change) -> None:
    path = repo / "evidence" / name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("sources"), "'sources' is required"),
    (lambda d: d.update(kind="vibes"), "kind"),
    (lambda d: d["results"].pop("metrics"), "'metrics' is required"),
    (lambda d: d["results"]["metrics"].update(grid_blocks="fourteen"), "is not of type 'number'"),
    (lambda d: d["sources"].update({"../../etc/passwd": "0" * 64}), "'..'"),
    (lambda d: d.update(extra=1), "unknown key 'extra'"),
], ids=["no-sources", "bad-kind", "no-metrics", "string-metric", "source-outside", "unknown-key"])
def test_schema_violations_are_input_errors_with_a_line(repo, change, words):
    _rewrite(repo, "ncu-single-pass.json", change)
    with pytest.raises(InputError) as caught:
        load_artifact("evidence/ncu-single-pass.json", repo)
    assert words in caught.value.message
    assert caught.value.path == "evidence/ncu-single-pass.json"


def test_invalid_json_names_its_line(repo):
    (repo / "evidence" / "bad.json").write_text('{\n  "id": "x",\n  "kind": \n}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_artifact("evidence/bad.json", repo)
    assert caught.value.line == 4


@pytest.mark.parametrize("rel", ["../outside.json", "/etc/passwd", "evidence/none.json"])
def test_paths_are_confined_and_must_exist(repo, rel):
    with pytest.raises(InputError):
        load_artifact(rel, repo)


def test_store_hashes_each_source_once_and_repeats_errors(repo, monkeypatch):
    store = EvidenceStore(repo)
    calls = []
    import gates.evidence.artifacts as evidence

    real = evidence._hash_in_repo
    monkeypatch.setattr(evidence, "_hash_in_repo", lambda root, rel: calls.append(rel) or real(root, rel))
    bound = set()
    for name in ("numeric-cpu", "bitwise-cpu", "capture-h200"):
        artifact = store.get(f"evidence/{name}.json")
        bound |= set(artifact.sources)
        assert store.stale_sources(artifact) == []
    assert "examplepkg/ops.py" in bound
    assert sorted(calls) == sorted(bound)
    for _ in range(2):
        with pytest.raises(InputError):
            store.get("evidence/none.json")
