"""`gate-check refresh`: stale evidence is listed, its producer re-run, the artifact signed, placed
and re-pinned, and the numbers a record quotes from it re-checked (and, with --fix, rewritten).

The repository is a copy of the golden examples with one record (G1's table-and-inline
example, which quotes the ncu profile) and a producer for that profile: a script that
measures "again" and writes the profile with `grid_blocks` and `sm__warps_active` changed.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gates.checks.runner import check_records
from gates.evidence.artifacts import file_sha256
from gates.evidence.attestation import TrustedKeys, private_key_text, public_key_text, verification_problem
from gates.frontends.cli import main

EXAMPLES = Path(__file__).parent / "examples"
RECORD = "G1/positive/diagnosis-table-and-inline.md"
KEY = Ed25519PrivateKey.generate()
PRODUCER = '''\
"""Write the ncu profile again, bound to the package as it is now, with new numbers."""
import hashlib, json, pathlib, sys
out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
data = json.loads(pathlib.Path("evidence/ncu-single-pass.json").read_text())
data["results"]["metrics"]["grid_blocks"] = 28
data["results"]["metrics"]["sm__warps_active"] = 12.5
data["sources"] = {p: hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest() for p in data["sources"]}
if "--fail" in sys.argv:
    print("the profiler crashed"); sys.exit(3)
if "--wrong-id" in sys.argv:
    data["id"] = "someone-else"
out.write_text(json.dumps(data))
'''


def config(extra: str = "") -> str:
    return f"""records: [G1/positive]
evidence: [evidence]
refresh:
  producers:
    ncu-single-pass:
      command: "python make_profile.py --out {{out}} {extra}"
      runner: gpu
    numeric-cpu:
      command: "python -c 'raise SystemExit(0)' {{out}}"
      runner: cpu
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    target = tmp_path / "repo"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / ".design-gates").mkdir(exist_ok=True)
    (target / ".design-gates" / "config.yaml").write_text(config(), encoding="utf-8")
    (target / "make_profile.py").write_text(PRODUCER, encoding="utf-8")
    for name in ("DESIGN_GATES_SIGNING_KEY", "DESIGN_GATES_SIGNING_KEY_FILE", "DESIGN_GATES_SIGNING_KEY_ID"):
        monkeypatch.delenv(name, raising=False)
    return target


def refresh(repo: Path, *args: str) -> int:
    return main(["refresh", "--repo-root", str(repo), *args])


def edit_kernel(repo: Path) -> None:
    ops = repo / "examplepkg" / "ops.py"
    ops.write_text(ops.read_text(encoding="utf-8") + "\n# tuned\n", encoding="utf-8")


def test_list_names_each_stale_artifact_once_with_its_changed_files(repo, capsys):
    edit_kernel(repo)
    assert refresh(repo, "--list") == 0
    out = capsys.readouterr().out
    assert "ncu-single-pass  stale      runner gpu: 1 bound file changed since it was measured" in out
    assert "    examplepkg/ops.py" in out
    assert "numeric-cpu" in out and "stale" in out.split("numeric-cpu", 1)[1].splitlines()[0]
    assert refresh(repo, "--check", "--runner", "gpu") == 1


def test_a_fresh_tree_needs_no_refresh(repo, capsys):
    assert refresh(repo, "--check", "--runner", "gpu") == 0
    assert "0 of 2 artifact(s) need a refresh" in capsys.readouterr().out


def test_refresh_signs_places_and_repins_the_artifact_and_reports_the_quotes_it_changed(repo, capsys, monkeypatch):
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY", private_key_text(KEY))
    monkeypatch.setenv("DESIGN_GATES_SIGNING_KEY_ID", "gpu-runner")
    edit_kernel(repo)
    assert refresh(repo, "--runner", "gpu") == 1  # the artifact is fresh, but §1 now misquotes it
    out = capsys.readouterr().out
    artifact = json.loads((repo / "evidence" / "ncu-single-pass.json").read_text(encoding="utf-8"))
    assert artifact["results"]["metrics"]["grid_blocks"] == 28
    assert verification_problem(artifact, TrustedKeys({"gpu-runner": public_key_text(KEY.public_key())}, {})) is None
    assert file_sha256(repo / "evidence" / "ncu-single-pass.json") in (repo / RECORD).read_text(encoding="utf-8")
    assert "| ncu-single-pass | gpu | stale | ok |" in out and "| gpu-runner | 3 |" in out  # 3 records cite it
    assert f"{RECORD}:59:17: G1: quotes 14, the artifact now says 28" in out
    assert f"{RECORD}:60:43: G1: quotes 8.33, the artifact now says 12.50" in out
    assert "7 quoted number(s) out of date; `gate-check refresh --fix` rewrites them" in out


def test_fix_rewrites_each_quoted_number_at_its_precision_and_the_record_passes_again(repo, capsys):
    edit_kernel(repo)
    assert refresh(repo, "--runner", "gpu", "--fix") == 0
    text = (repo / RECORD).read_text(encoding="utf-8")
    assert "| grid_blocks | 28 | one program per row |" in text
    assert "| sm__warps_active (achieved occupancy) | 12.50% | most SMs idle |" in text
    report = check_records([repo / RECORD], repo, gates=["G1"])
    assert report.records[0].gates["G1"].ok, report.records[0].gates["G1"].findings


def test_a_failing_producer_leaves_the_artifact_and_shows_its_output(repo, capsys):
    (repo / ".design-gates" / "config.yaml").write_text(config("--fail"), encoding="utf-8")
    before = (repo / "evidence" / "ncu-single-pass.json").read_bytes()
    edit_kernel(repo)
    assert refresh(repo, "ncu-single-pass") == 1
    captured = capsys.readouterr()
    assert (repo / "evidence" / "ncu-single-pass.json").read_bytes() == before
    assert "ncu-single-pass failed: exit 3" in captured.err and "the profiler crashed" in captured.err
    assert not list((repo / "evidence").glob(".*.tmp"))


def test_an_artifact_of_another_id_is_refused(repo, capsys):
    (repo / ".design-gates" / "config.yaml").write_text(config("--wrong-id"), encoding="utf-8")
    assert refresh(repo, "ncu-single-pass") == 1
    assert "it wrote an artifact with id 'someone-else', not 'ncu-single-pass'" in capsys.readouterr().out


def test_an_unknown_producer_is_a_usage_error_with_a_suggestion(repo, capsys):
    assert refresh(repo, "ncu-single-pas") == 2
    assert "no producer for artifact 'ncu-single-pas' (did you mean 'ncu-single-pass'?)" in capsys.readouterr().err


def test_a_repository_without_producers_is_told_how_to_add_them(tmp_path, capsys):
    assert refresh(tmp_path, "--list") == 2
    assert "no evidence producers are configured: add refresh.producers" in capsys.readouterr().err


def test_a_command_without_its_out_placeholder_is_refused_by_the_schema(repo, capsys):
    (repo / ".design-gates" / "config.yaml").write_text(
        "refresh:\n  producers:\n    x:\n      command: python bench.py\n", encoding="utf-8")
    assert refresh(repo, "--list") == 2
    assert "refresh.producers.x.command" in capsys.readouterr().err


def test_the_python_of_a_command_is_the_interpreter_running_gate_check():
    from gates.evidence.refresh_run import command_words

    assert command_words("python -m x --out {out}", {"out": "a b.json", "python": sys.executable}) == \
        [sys.executable, "-m", "x", "--out", "a b.json"]


STAMPING = '''\
"""Write a minimal valid artifact after noting when it started and ended (for the order of steps)."""
import json, pathlib, sys, time
name = sys.argv[1]
log = pathlib.Path("steps.log")
with log.open("a") as f: f.write(f"{name} start {time.monotonic()}\\n")
time.sleep(0.4)
with log.open("a") as f: f.write(f"{name} end {time.monotonic()}\\n")
if len(sys.argv) > 2:
    pathlib.Path(sys.argv[2]).write_text(json.dumps({
        "schema_version": 1, "id": name, "kind": "profile", "created": "2026-12-02T00:00:00Z", "command": "x",
        "environment": {"backend": "cpu", "device": "cpu", "python": "3", "torch": "2", "triton": "3"}, "commit": None, "sources": {}, "fixtures": {}, "results": {"tool": "ncu", "kernel": "k", "metrics": {}, "units": {}}}))
'''


def steps(repo: Path) -> dict[str, tuple[float, float]]:
    seen: dict[str, list[float]] = {}
    for line in (repo / "steps.log").read_text().splitlines():
        name, _, at = line.split()
        seen.setdefault(name, []).append(float(at))
    return {name: (times[0], times[1]) for name, times in seen.items()}


@pytest.mark.parametrize("jobs", [1, 2])
def test_timing_producers_run_alone_after_the_others_and_the_prepare_steps(tmp_path, jobs):
    (tmp_path / "stamp.py").write_text(STAMPING, encoding="utf-8")
    (tmp_path / ".design-gates").mkdir()
    (tmp_path / ".design-gates" / "config.yaml").write_text("""evidence: [ev]
refresh:
  prepare: [{command: "python stamp.py warm"}]
  producers:
    suite-a: {command: "python stamp.py suite-a {out}", exclusive: false}
    suite-b: {command: "python stamp.py suite-b {out}", exclusive: false}
    bench: {command: "python stamp.py bench {out}"}
""", encoding="utf-8")
    (tmp_path / "ev").mkdir()
    assert refresh(tmp_path, "--jobs", str(jobs)) == 0
    seen = steps(tmp_path)
    a, b, bench, warm = seen["suite-a"], seen["suite-b"], seen["bench"], seen["warm"]
    assert bench[0] >= max(a[1], b[1], warm[1])  # the timing producer shares the machine with nothing
    overlapped = a[0] < b[1] and b[0] < a[1]
    assert overlapped == (jobs == 2)  # --jobs bounds the producers that run side by side
    assert warm[0] < min(a[1], b[1])  # preparing runs beside the producers that time nothing
    assert sorted(p.name for p in (tmp_path / "ev").iterdir()) == ["bench.json", "suite-a.json", "suite-b.json"]
