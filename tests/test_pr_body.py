"""`gate-check pr-body`: a deterministic description for each stage of a series."""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from gates.evidence.source_binding import bound_sources
from gates.frontends.cli import main

GATES = [f"G{n}" for n in range(9)]
FIXTURE_SHA = "ab" * 32
ENVIRONMENT = {"backend": "cuda", "device": "NVIDIA H200", "torch": "2.11.0+cu130", "triton": "3.6.0"}
RESULTS = {
    "profile": {"tool": "ncu", "kernel": "decode_partial", "metrics": {
        "sm__warps_active": 8.33, "registers_per_thread": 39, "dram_throughput_pct": 0.44}},
    "numeric": {"passed": True, "per_dtype": {"bf16": {"rel_l2": 2.3e-3, "max_abs": 7.8e-3, "min_cosine": 0.99999,
                                                         "cases": 24}}},
    "bitwise": {"passed": True, "backend": "cuda", "anchors": {"A1-splits1": {"passed": True, "cases": 12}},
                "fingerprints": {"fx1": FIXTURE_SHA}},
    "capture": {"captured": True, "allocations": 0, "host_syncs": 0, "replay_equals_eager": True},
    "benchmark": {"rows": [{"shape": "llama8b-b1-32k", "num_splits": 1, "us": 162.55},
                           {"shape": "llama8b-b1-32k", "num_splits": 16, "us": 17.14}]},
}
KIND_STAGE = {"profile": "A", "numeric": "B", "bitwise": "B", "capture": "C", "benchmark": "D"}
STAGES = "ABCD"


def write_artifact(root: Path, kind: str) -> dict:
    artifact_id = f"{kind}-h200"
    data = {"schema_version": 1, "id": artifact_id, "kind": kind, "created": "2026-11-29T12:00:00Z",
            "command": f"python -m validation.run {kind}", "environment": ENVIRONMENT, "commit": None,
            "sources": bound_sources(root, ["pkg/**"], modules={}), "fixtures": {"fx1": FIXTURE_SHA}, "results": RESULTS[kind]}
    path = root / "docs" / "evidence" / f"{artifact_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return {"id": artifact_id, "path": f"docs/evidence/{artifact_id}.json",
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "kind": kind}


def write_record(root: Path, record_id: str, stage: str, *, stacked_on=(), lang="en", decided=True,
                 claim_e2e_in_body=False) -> Path:
    reached = STAGES[:STAGES.index(stage) + 1]
    evidence = [write_artifact(root, k) for k, s in KIND_STAGE.items() if s in reached]
    by_kind = {e["kind"]: e["id"] for e in evidence}
    front = {
        "schema_version": 1, "id": record_id, "title": "Split-KV decode attention", "risk": "L3",
        "record_status": "approved", "stage": stage, "stacked_on": list(stacked_on), "lang": lang,
        "authors": [{"name": "Ada Author", "email": "ada@example.org"}],
        "reviewers": [{"name": "Rui Reviewer", "email": "rui@example.org", "decision": "approved"}],
        "covers": ["pkg/**"],
        "questions": [
            {"id": "Q1", "question": "Combine in a separate kernel?", "recommendation": "Yes: a separate kernel.",
             "decision": "accepted" if decided else None, "blast_radius": "low"},
            {"id": "Q3", "question": "Accept the fingerprint change for num_splits > 1?",
             "recommendation": "Accept; num_splits = 1 stays bit-identical.",
             "decision": "accepted" if decided else None, "blast_radius": "high"},
        ],
        "unknowns": [{"id": "U1", "question": "Best num_splits on the H200?", "closes_at": "D",
                      "status": "closed" if stage == "D" else "open",
                      **({"evidence": [by_kind["benchmark"]]} if stage == "D" else {})}],
        "numeric_contract": {"oracle": "pkg:oracle", "suite": "pkg/test_numeric.py",
                             "tolerances": [{"metric": "rel_l2", "dtype": "bf16", "max": 1.6e-2}]},
        "bitwise": {"suite": "pkg/test_bitwise.py", "anchors": [{"id": "A1", "check": "splits=1 == single pass"}],
                    "fingerprints": {"path": "pkg/fingerprints.json"}},
        "api": {"packages": ["pkg"], "adds": ["attention_decode_splitkv"], "default_route_unchanged": True},
        "capture": {"required": True, "evidence": by_kind.get("capture")},
        "claim_level": "kernel",
        "evidence": evidence,
        "independence": {"defect": False},
        "self_check": {g: "pass" for g in GATES},
    }
    e2e_sentence = "The change gives a 20% TTFT gain." if claim_e2e_in_body else ""
    results = ("| shape | splits | time `benchmark-h200:rows[num_splits=16].us` |\n|---|---|---|\n"
               "| llama8b-b1-32k | 16 | 17.14 us |\n\n"
               "From the [benchmark](../evidence/benchmark-h200.json).") if stage == "D" else "See the evidence list."
    body = textwrap.dedent(f"""\

        ## §1 Why

        The single-pass kernel leaves the GPU idle ([profile](../evidence/profile-h200.json)):
        `sm__warps_active` = 8.33 and the DRAM throughput is tiny. {e2e_sentence}

        ### §1.1 Reading

        Latency-bound by too little parallelism.

        ## §2 Unknowns

        U1 closes at D.

        ## §3 Design

        Partial kernel over (head, split), then a [combine kernel](../../pkg/__init__.py).

        ## §4 Numeric contract

        rel_l2 within the bf16 tolerance.

        ## §5 Bitwise anchor

        num_splits = 1 is bit-identical to the single pass.

        ## §6 API

        Adds `attention_decode_splitkv`.

        ## §7 Validation and results

        RESULTS

        ## §8 Limitations

        Kernel-level results only.

        ## §9 Follow-ups

        Turn the default on after stage D.

        ## §10 Self-check

        All gates pass.
        """).replace("RESULTS", results)
    path = root / "docs" / "design" / f"{record_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + body,
                    encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('__all__ = ["attention_decode_splitkv"]\n\n\n'
                                     "def attention_decode_splitkv(q, k, v, *, num_splits):\n    return q\n\n\n"
                                     "def oracle(q, k, v):\n    return q\n")
    (pkg / "test_numeric.py").write_text("def test_numeric():\n    pass\n")
    (pkg / "test_bitwise.py").write_text("def test_bitwise():\n    pass\n")
    (pkg / "fingerprints.json").write_text(json.dumps({"cuda": {"fx1": FIXTURE_SHA}}))
    return tmp_path


def pr_body(repo: Path, record: Path, stage: str, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["pr-body", str(record), "--stage", stage, "--repo-root", str(repo), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def section(body: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", body, re.S | re.M)
    assert match, f"no '## {heading}' section in:\n{body}"
    return match.group(1)


@pytest.mark.parametrize("stage", list(STAGES), ids=[f"stage-{s}" for s in STAGES])
def test_each_stage_gives_a_complete_description_with_passing_gates(repo, capsys, stage):
    record = write_record(repo, "splitkv", stage)
    code, body, err = pr_body(repo, record, stage, capsys)
    assert code == 0, err + body
    for heading in ("Why", "Design", "Decisions needed from reviewers", "Validation", "Limitations",
                    "Follow-ups", "Gates"):
        section(body, heading)
    gates = section(body, "Gates")
    for gate in GATES:
        assert re.search(rf"^\| {gate} \| .*? \| (pass|not-applicable) \|", gates, re.M), gates
    validation = section(body, "Validation")
    assert "### What was run" in validation and "### What was not run" in validation
    assert "End-to-end measurement: not run" in validation


def test_the_description_is_deterministic(repo, capsys):
    record = write_record(repo, "splitkv", "D")
    first = pr_body(repo, record, "D", capsys)[1]
    second = pr_body(repo, record, "D", capsys)[1]
    assert first == second
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", first), "a timestamp leaked into the description"
    assert str(repo) not in first, "an absolute path leaked into the description"


def test_why_carries_the_diagnosis_and_the_evidence_it_cites(repo, capsys):
    record = write_record(repo, "splitkv", "A")
    body = pr_body(repo, record, "A", capsys)[1]
    why = section(body, "Why")
    assert "`sm__warps_active` = 8.33" in why
    assert "### §1.1 Reading" in why, "sub-headings of §1 stay below the description's own headings"
    assert "[profile](docs/evidence/profile-h200.json)" in why, "links become repository-relative"
    assert "`profile-h200` (Profile)" in why and "sm__warps_active = 8.33" in why
    assert hashlib.sha256((repo / "docs/evidence/profile-h200.json").read_bytes()).hexdigest() in why
    assert "[combine kernel](pkg/__init__.py)" in section(body, "Design")


def test_stage_a_lists_the_later_stages_as_not_run(repo, capsys):
    record = write_record(repo, "splitkv", "A", decided=False)
    body = pr_body(repo, record, "A", capsys)[1]
    not_run = section(body, "Validation").split("### What was not run", 1)[1]
    assert "it changes documentation only" in not_run
    for what, stage in (("Numeric suite", "B"), ("Bitwise anchors and fingerprints", "B"),
                        ("CUDA-graph capture", "C"), ("Benchmark", "D")):
        assert f"- {what}: belongs to stage {stage}, not run for this pull request." in not_run


def test_undecided_questions_are_asked_with_the_recommendation(repo, capsys):
    record = write_record(repo, "splitkv", "A", decided=False)
    decisions = section(pr_body(repo, record, "A", capsys)[1], "Decisions needed from reviewers")
    assert "- **Q3** (blast radius high): Accept the fingerprint change for num_splits > 1?" in decisions
    assert "  - Recommendation: Accept; num_splits = 1 stays bit-identical." in decisions
    assert decisions.count("Decision: **needed**") == 2


def test_stage_d_reports_each_artifact_and_only_kernel_numbers(repo, capsys):
    record = write_record(repo, "splitkv", "D")
    validation = section(pr_body(repo, record, "D", capsys)[1], "Validation")
    run, not_run = validation.split("### What was not run", 1)
    assert "`benchmark-h200` (Benchmark)" in run and "  - 2 rows over 1 shapes: llama8b-b1-32k" in run
    results = run.split("### Results (§7 of the record)", 1)[1]
    assert "| llama8b-b1-32k | 16 | 17.14 us |" in results
    assert "From the [benchmark](docs/evidence/benchmark-h200.json)." in results
    assert "captured: True, allocations: 0, host_syncs: 0, replay_equals_eager: True" in run
    assert "bf16: rel_l2 0.0023, max_abs 0.0078, min_cosine 0.99999, cases 24" in run
    assert "A1-splits1: passed True, 12 cases" in run
    assert "`python -m validation.run benchmark` (device NVIDIA H200, backend cuda" in run
    assert "belongs to stage" not in not_run
    assert "TTFT" not in validation and "tok/s" not in validation


def test_open_unknowns_become_follow_ups(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    follow_ups = section(pr_body(repo, record, "B", capsys)[1], "Follow-ups")
    assert "Turn the default on after stage D." in follow_ups
    assert "- U1 (closes at stage D): Best num_splits on the H200?" in follow_ups


def test_chinese_description_has_chinese_headings(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    code, body, _ = pr_body(repo, record, "B", capsys, "--lang", "zh")
    assert code == 0
    for heading in ("为什么（诊断）", "设计", "需要评审决议的问题", "验证", "限制", "后续", "门禁"):
        section(body, heading)
    assert "### 已运行" in body and "### 未运行" in body
    assert "以下章节正文摘自英文记录。" in body


def test_a_stage_the_record_has_not_reached_is_refused(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    code, body, err = pr_body(repo, record, "C", capsys)
    assert code == 2 and body == ""
    assert "is at stage B; move it to stage C" in err


def test_a_failing_gate_is_printed_and_exits_1(repo, capsys):
    record = write_record(repo, "splitkv", "A", claim_e2e_in_body=True)
    code, body, err = pr_body(repo, record, "A", capsys)
    assert code == 1
    assert re.search(r"^\| G7 \| Claims discipline \| fail \| .*TTFT", section(body, "Gates"), re.M)
    assert "G7" in err


def test_an_unreadable_record_exits_2_with_file_and_line(repo, capsys):
    bad = repo / "docs" / "design" / "broken.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("---\nid: broken\ntitle: [unclosed\n---\n", encoding="utf-8")
    code, _, err = pr_body(repo, bad, "A", capsys)
    assert code == 2
    assert err.startswith("docs/design/broken.md:")


def test_a_single_pr_record_is_described_as_one_pull_request_not_a_stage_of_a_series(repo, capsys):
    (repo / ".design-gates").mkdir()
    (repo / ".design-gates" / "config.yaml").write_text("profiles:\n  stacked: {}\n  single-pr: {}\n")
    record = write_record(repo, "splitkv", "D")
    record.write_text(record.read_text(encoding="utf-8").replace("stage: D\n", "stage: D\nprocess: single-pr\n", 1),
                      encoding="utf-8")
    body = pr_body(repo, record, "D", capsys)[1]
    assert "A→D" not in body and "stage D" not in body.split("## Why")[0]
    assert "# Split-KV decode attention — design record, change and evidence" in body
    assert "one pull request: record, change and evidence together" in body
    validation = section(body, "Validation")
    assert "Carried from earlier stages" not in validation
    assert "`numeric-h200` (Numeric suite)" in validation.split("### What was not run")[0]
    assert "and the evidence the record cites, together (the single-pr process)." in body


def test_a_single_pr_record_that_cites_no_evidence_does_not_say_it_carries_some(repo, capsys):
    (repo / ".design-gates").mkdir()
    (repo / ".design-gates" / "config.yaml").write_text("profiles:\n  stacked: {}\n  single-pr: {}\n")
    record = write_record(repo, "splitkv", "D")
    text = record.read_text(encoding="utf-8").replace("stage: D\n", "stage: D\nprocess: single-pr\n", 1)
    record.write_text(re.sub(r"^evidence:\n(?:[- ] .*\n)+", "evidence: []\n", text, flags=re.M), encoding="utf-8")
    body = pr_body(repo, record, "D", capsys)[1]
    assert ("This pull request carries the design record and the change with its tests, together (the single-pr "
            "process); the record cites no evidence artifact.") in body
    assert "the evidence the record cites" not in body
