"""`gate-check lint-pr`: a hand-edited description still meets G7 and keeps its sections."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gates.evidence.attestation import public_key_text, sign
from gates.frontends.cli import main
from test_pr_body import repo, write_record  # noqa: F401 - the fixture and the record writer are shared


PASSED = "gate-check lint-pr: pr.md passes"


@pytest.fixture
def body(repo, capsys):  # noqa: F811
    """A generated stage-B description of a record at stage B."""
    record = write_record(repo, "splitkv", "B")
    assert main(["pr-body", str(record), "--stage", "B", "--repo-root", str(repo)]) == 0
    return capsys.readouterr().out


def lint(repo, capsys, text: str, *extra: str) -> tuple[int, list[str]]:
    path = repo / "pr.md"
    path.write_text(text, encoding="utf-8")
    code = main(["lint-pr", "--body-file", str(path), "--repo-root", str(repo), *extra])
    return code, [PASSED if line.startswith(PASSED + ":") else line
                  for line in capsys.readouterr().out.splitlines() if line]


def test_a_generated_description_is_clean(repo, capsys, body):
    assert lint(repo, capsys, body) == (0, [PASSED])


@pytest.mark.parametrize("sentence,term", [
    ("It cuts TTFT by 30%.", "TTFT"),
    ("Serving runs at 48.2 tok/s now.", "tok/s"),
    ("端到端提速明显。", "端到端"),
], ids=["ttft", "tokens-per-second", "chinese-e2e"])
def test_an_end_to_end_claim_without_e2e_evidence_is_a_g7_finding(repo, capsys, body, sentence, term):
    edited = body.replace("## Design\n", f"## Design\n\n{sentence}\n", 1)
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    assert any(f" G7 error: end-to-end claim ({term!r})" in line for line in lines), lines
    assert all(line.startswith("pr.md:") for line in lines)


def test_a_negated_claim_is_not_a_claim(repo, capsys, body):
    edited = body.replace("## Limitations\n", "## Limitations\n\nNo TTFT or TPOT claim is made.\n", 1)
    assert lint(repo, capsys, edited) == (0, [PASSED])


def test_a_number_in_validation_that_no_artifact_measured_is_a_g7_finding(repo, capsys, body):
    edited = body.replace("### What was run\n", "### What was run\n\n- the kernel now takes 12.5 us\n", 1)
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    assert len(lines) == 1 and "G7 error: 12.5 us is not tied to an artifact value" in lines[0]


def test_a_number_that_only_occurs_somewhere_in_the_artifacts_is_not_traced(repo, capsys, body):
    edited = body.replace("### What was run\n", "### What was run\n\n- achieved occupancy was 8.33%\n", 1)
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    assert len(lines) == 1 and "G7 error: 8.33% is not tied to an artifact value" in lines[0]


def test_a_number_that_names_its_value_is_traced(repo, capsys, body):
    good = body.replace("### What was run\n", "### What was run\n\n- `sm__warps_active` = 8.33 in the profile\n", 1)
    assert lint(repo, capsys, good) == (0, [PASSED])
    code, lines = lint(repo, capsys, good.replace("= 8.33 in", "= 8.34 in"))
    assert code == 1
    assert len(lines) == 1 and "8.34 is not the value it names, profile-h200:metrics.sm__warps_active" in lines[0]


def test_a_linked_artifact_the_record_does_not_declare_is_a_g7_finding(repo, capsys, body):
    copy = repo / "docs" / "evidence" / "profile-copy.json"
    copy.write_bytes((repo / "docs" / "evidence" / "profile-h200.json").read_bytes())
    edited = body.replace("## Design\n", "## Design\n\nSee the [profile](docs/evidence/profile-copy.json).\n", 1)
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    assert len(lines) == 1 and "links docs/evidence/profile-copy.json, which the design record does not declare" \
        in lines[0]


@pytest.mark.parametrize("link", [
    "[profile]: docs/evidence/profile-copy.json",
    'the <a href="docs/evidence/profile-copy.json">profile</a>',
    "[profile](../evidence/profile-copy.json)",
    "[profile](https://example.org/profile.json)",
], ids=["reference-definition", "html-link", "climbing-path", "external-url"])
def test_evidence_linked_any_other_way_is_checked_too(repo, capsys, body, link):
    copy = repo / "docs" / "evidence" / "profile-copy.json"
    copy.write_bytes((repo / "docs" / "evidence" / "profile-h200.json").read_bytes())
    code, lines = lint(repo, capsys, body.replace("## Design\n", f"## Design\n\n{link}\n", 1))
    assert code == 1
    assert len(lines) == 1 and "G7 error: links" in lines[0], lines


def test_a_linked_artifact_whose_pin_does_not_verify_is_a_g7_finding(repo, capsys, body):
    path = repo / "docs" / "evidence" / "profile-h200.json"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, lines = lint(repo, capsys, body)
    assert code == 1
    assert any("links docs/evidence/profile-h200.json, whose SHA-256 is" in line for line in lines), lines


def test_a_description_that_shows_another_pin_is_a_g7_finding(repo, capsys, body):
    pin = re.search(r"profile-h200\.json\), sha256 `([0-9a-f]{64})`", body).group(1)
    code, lines = lint(repo, capsys, body.replace(pin, "0" * 64))
    assert code == 1
    assert any(f"shows sha256 {'0' * 64} for docs/evidence/profile-h200.json; the record pins {pin}" in line
               for line in lines), lines


def test_a_summary_under_an_evidence_line_names_that_artifacts_metrics(repo, capsys):
    record = write_record(repo, "splitkv", "D")
    data = json.loads((repo / "docs" / "evidence" / "profile-h200.json").read_text(encoding="utf-8"))
    data["id"] = "profile-split"
    data["results"]["metrics"] = {name: value * 2 for name, value in data["results"]["metrics"].items()}
    path = repo / "docs" / "evidence" / "profile-split.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    head, front, rest = record.read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    meta["evidence"].append({"id": "profile-split", "path": "docs/evidence/profile-split.json",
                             "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "kind": "profile"})
    record.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + rest, encoding="utf-8")
    main(["pr-body", str(record), "--stage", "D", "--repo-root", str(repo)])
    text = capsys.readouterr().out
    assert "sm__warps_active = 16.66" in text and "sm__warps_active = 8.33" in text
    assert lint(repo, capsys, text) == (0, [PASSED])
    code, lines = lint(repo, capsys, text.replace("sm__warps_active = 16.66", "sm__warps_active = 8.33"))
    assert code == 1 and "8.33 is not the value it names, profile-split:metrics.sm__warps_active" in lines[0], lines


E2E = {"schema_version": 1, "id": "e2e-decode", "kind": "e2e", "created": "2026-12-01T12:00:00Z",
       "command": "python -m gates.ab ...", "environment": {"backend": "cuda", "device": "NVIDIA H200"},
       "commit": None, "sources": {}, "fixtures": {"prompt": "a" * 64},
       "results": {"metric": "tokens_per_s", "unit": "tok/s", "variable": {"kind": "env", "name": "SPLITKV"}, "arms": {
           "baseline": {"value": "0", "samples": [34.7, 34.71, 34.69], "median": 34.7, "fresh_process": True,
                        "pids": [11, 13, 15], "warmup_discarded": 1},
           "split-kv": {"value": "1", "samples": [137.1, 137.2, 137.13], "median": 137.13, "fresh_process": True,
                        "pids": [12, 14, 16], "warmup_discarded": 1}}}}
RUNNER = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
POLICY = f"""schema_version: 1
default_level: L1
rules: []
attestation:
  keys:
    - {{id: h200-runner, public_key: "{public_key_text(RUNNER.public_key())}"}}
"""


def with_e2e_evidence(repo, record, **edits):
    """The record at claim_level e2e, citing (linking) an e2e artifact measured by the A/B harness on the
    record's code and signed by a runner key the policy trusts."""
    (repo / ".design-gates").mkdir(exist_ok=True)
    (repo / ".design-gates" / "policy.yaml").write_text(POLICY, encoding="utf-8")
    data = json.loads(json.dumps(E2E))
    data["sources"] = {path.relative_to(repo).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
                       for path in sorted((repo / "pkg").rglob("*")) if path.is_file()}
    unsigned = edits.pop("attestation", True) is None
    data.update(edits)
    data = data if unsigned else sign(data, "h200-runner", RUNNER)
    path = repo / "docs" / "evidence" / "e2e-decode.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    head, front, body = record.read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    meta["claim_level"] = "e2e"
    meta["evidence"].append({"id": "e2e-decode", "path": "docs/evidence/e2e-decode.json",
                             "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "kind": "e2e"})
    body = body.replace("Kernel-level results only.", "Serving was measured with fresh processes "
                        "([e2e-decode](../evidence/e2e-decode.json)).")
    record.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body, encoding="utf-8")


CLAIM = "End to end, split-kv decodes at 137.1 tok/s against 34.7 tok/s for the baseline."


def test_an_end_to_end_claim_quoting_the_records_e2e_artifact_passes(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    with_e2e_evidence(repo, record)
    assert main(["pr-body", str(record), "--stage", "B", "--repo-root", str(repo)]) == 0
    text = capsys.readouterr().out.replace("## Design\n", f"## Design\n\n{CLAIM}\n", 1)
    assert lint(repo, capsys, text) == (0, [PASSED])


@pytest.mark.parametrize("claim, edits, expected", [
    (CLAIM.replace("137.1", "150"), {}, "150 tok/s matches no arm"),
    (CLAIM, {"fixtures": {}}, "no fixture identities"),
    (CLAIM, {"results": dict(E2E["results"], arms=dict(
        E2E["results"]["arms"], baseline=dict(E2E["results"]["arms"]["baseline"], pids=[11, 12, 15])))},
     "warm process"),
    (CLAIM, {"attestation": None}, "is not attested"),
], ids=["misquoted", "no-fixtures", "warm-process", "unsigned"])
def test_an_end_to_end_claim_obeys_the_rule_it_obeys_in_the_record(repo, capsys, claim, edits, expected):
    record = write_record(repo, "splitkv", "B")
    with_e2e_evidence(repo, record, **edits)
    main(["pr-body", str(record), "--stage", "B", "--repo-root", str(repo)])
    text = capsys.readouterr().out.replace("## Design\n", f"## Design\n\n{claim}\n", 1)
    code, lines = lint(repo, capsys, text)
    assert code == 1
    assert any("G7 error: end-to-end claim" in line and expected in line for line in lines), lines


@pytest.mark.parametrize("heading", ["## Why", "## Limitations", "## Gates", "## Decisions needed from reviewers"],
                         ids=["why", "limitations", "gates", "decisions"])
def test_a_missing_section_is_a_finding(repo, capsys, body, heading):
    edited = body.replace(heading + "\n", "## Notes\n", 1)
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    name = heading[3:].split()[0]
    assert any(f"G0 error: the description has no {name} section" in line for line in lines), lines


def test_validation_must_say_what_was_not_run(repo, capsys, body):
    before, after = body.split("### What was not run", 1)
    edited = before + "### Skipped" + after.replace("not run", "skipped")
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    assert any("does not say what was not run" in line for line in lines), lines


def test_a_description_that_names_no_record_is_a_finding_where_sections_are_checked(repo, capsys):
    (repo / ".design-gates").mkdir()
    (repo / ".design-gates" / "config.yaml").write_text("lint_pr:\n  sections: always\n", encoding="utf-8")
    text = "## Why\n\nx\n\n## Design\n\n## Decisions\n\n## Validation\n\n### What was run\n\n### What was not run\n\n" \
           "## Limitations\n\n## Follow-ups\n\n## Gates\n"
    code, lines = lint(repo, capsys, text)
    assert code == 1
    assert lines == ["pr.md:1:1: G0 error: the description names no design record (docs/design/<id>.md); "
                     "pass --record to choose one"]


def test_a_teams_own_template_that_makes_no_claim_passes(repo, capsys):
    text = ("## Summary\n\nMove the scheduler's queue to a heap.\n\n## Details\n\nTTFT and TPOT will be measured "
            "in stage D, not in this PR.\n\n## Testing Done\n\nUnit tests; no serving benchmark was run.\n")
    assert lint(repo, capsys, text) == (0, [PASSED])


def test_a_teams_own_template_that_makes_a_claim_is_a_g7_finding(repo, capsys):
    text = "## Summary\n\nMove the scheduler's queue to a heap.\n\n## Testing Done\n\nTTFT drops 30% on our trace.\n"
    code, lines = lint(repo, capsys, text)
    assert code == 1
    assert lines == [line for line in lines if line.startswith("pr.md:7:1: G7 error: end-to-end claim ('TTFT')")]
    assert "the description names no design record" in lines[0] and "'drops 30%'" in lines[0]


def test_a_configured_results_heading_is_read_as_validation_is(repo, capsys):
    text = ("## Summary\n\nFix constant_pad_nd's parameter name.\n\n## Performance\n\n"
            "The padding kernel is 1.3x faster than torch on A100.\n")
    assert lint(repo, capsys, text) == (0, [PASSED])  # by default only Validation is read for measured numbers
    (repo / ".design-gates").mkdir(exist_ok=True)
    (repo / ".design-gates" / "config.yaml").write_text("lint_pr:\n  results_headings: [performance]\n",
                                                        encoding="utf-8")
    code, lines = lint(repo, capsys, text)
    assert code == 1 and len(lines) == 1, lines
    expected = "1.3x is not tied to an artifact value (every measured number in a results section ('Performance')"
    assert lines[0].startswith("pr.md:7:") and expected in lines[0], lines


def test_the_record_is_found_in_the_configured_records_folder(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    (repo / "rfcs").mkdir()
    moved = repo / "rfcs" / "splitkv.md"
    moved.write_text(record.read_text(encoding="utf-8"), encoding="utf-8")
    (repo / ".design-gates").mkdir()
    (repo / ".design-gates" / "config.yaml").write_text("records: [rfcs]\n", encoding="utf-8")
    text = "## Summary\n\nImplements rfcs/splitkv.md. TTFT drops 30% on our trace.\n"
    code, lines = lint(repo, capsys, text)
    assert code == 1 and lines and "the description names no design record" not in lines[0], lines
    assert "claim_level is" in lines[0] or "no e2e artifact is cited" in lines[0], lines


def test_a_chinese_description_is_checked_the_same_way(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    assert main(["pr-body", str(record), "--stage", "B", "--lang", "zh", "--repo-root", str(repo)]) == 0
    text = capsys.readouterr().out
    assert lint(repo, capsys, text) == (0, [PASSED])
    code, lines = lint(repo, capsys, text.replace("## 设计\n", "## 设计\n\n首字延迟降低一半。\n", 1))
    assert code == 1 and any("首字延迟" in line for line in lines)


def test_an_unreadable_body_exits_2(repo, capsys):
    path = repo / "pr.md"
    path.write_bytes(b"## Why\n\xff\xfe\n")
    assert main(["lint-pr", "--body-file", str(path), "--repo-root", str(repo)]) == 2
    assert "pr.md:2:1" in capsys.readouterr().err


def test_several_body_files_are_checked_one_by_one(repo, capsys, body):
    good, bad = repo / "good.md", repo / "bad.md"
    good.write_text(body, encoding="utf-8")
    bad.write_text(body.replace("## Design\n", "## Design\n\nIt halves TPOT.\n", 1), encoding="utf-8")
    code = main(["lint-pr", "--body-file", str(good), str(bad), "--repo-root", str(repo)])
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert code == 1
    assert lines[0].startswith(PASSED.replace("pr.md", "good.md") + ":")
    assert lines[1:] and all(line.startswith("bad.md:") for line in lines[1:])


def test_the_pull_request_template_has_every_required_section():
    from pathlib import Path

    from gates.frontends.lint_pr import NOT_RUN, REQUIRED, RUN, _sections

    template = (Path(__file__).resolve().parents[1] / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text(encoding="utf-8")
    titles = [title.lower() for title, _, _ in _sections(template)]
    for name, words in REQUIRED.items():
        assert any(any(w in t for w in words) for t in titles), name
    assert any(w in t for t in titles for w in RUN) and any(w in t for t in titles for w in NOT_RUN)


def test_pre_commit_hooks_run_real_gate_check_commands(capsys):
    import shlex
    from pathlib import Path

    import yaml

    hooks = yaml.safe_load((Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {hook["id"] for hook in hooks} == {"gate-check", "gate-check-lint-pr"}
    for hook in hooks:
        command = shlex.split(hook["entry"])
        assert command[0] == "gate-check"
        args = command[1:] + (["x.md"] if hook["pass_filenames"] else [])
        assert main([*args[:1], "--help"] if args else ["--help"]) == 0, hook["id"]
        capsys.readouterr()


def run_lint(repo, capsys, text: str, *extra: str) -> tuple[int, str, str]:
    path = repo / "pr.md"
    path.write_text(text, encoding="utf-8")
    code = main(["lint-pr", "--body-file", str(path), "--repo-root", str(repo), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


CLAIMING = "## Summary\n\nFaster scheduling.\n\n## Testing Done\n\nTTFT drops 30% on our trace.\n"


def test_json_format_lists_findings_and_verdicts(repo, capsys):
    code, out, _ = run_lint(repo, capsys, CLAIMING, "--format", "json")
    document = json.loads(out)
    assert code == 1 and document["ok"] is False
    [description] = document["descriptions"]
    assert description["findings"][0]["gate"] == "G7" and description["findings"][0]["line"] == 7
    assert {"line": 7, "col": 1, "claim": True, "words": "TTFT", "result": "drops 30%", "reason": ""} \
        in description["verdicts"]


def test_github_format_writes_workflow_commands(repo, capsys):
    code, out, _ = run_lint(repo, capsys, CLAIMING, "--format", "github")
    assert code == 1 and out.startswith("::error file=pr.md,line=7,col=1,title=G7")


def test_sarif_format_is_one_run_with_a_result_per_finding(repo, capsys):
    code, out, _ = run_lint(repo, capsys, CLAIMING, "--format", "sarif")
    document = json.loads(out)
    [result] = document["runs"][0]["results"]
    assert code == 1 and result["ruleId"] == "G7"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 7, "startColumn": 1}


def test_explain_says_why_a_sentence_is_not_a_claim(repo, capsys):
    text = ("## Summary\n\nhow do we get to 250 tok/s on 8 GPUs?\n\n"
            "The kernel is end-to-end (forward + backward) 1.8x faster than the reference.\n")
    code, out, _ = run_lint(repo, capsys, text, "--explain")
    assert code == 0
    assert "pr.md:3:22: note: not a claim: 'tok/s' is a question ('?')" in out
    assert "pr.md:5:15: note: not a claim: 'end-to-end' is kernel-level: end to end of a kernel or pass" in out
    assert "passes: 0 end-to-end claim(s), each backed by evidence; 2 sentence(s)" in out
