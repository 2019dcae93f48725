"""gate-check: exit codes, output formats, gate and stage selection, and `gate-check new`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gates.frontends import cli
from gates.frontends.cli import main

EXAMPLES = Path(__file__).parent / "examples"
POSITIVE = EXAMPLES / "G0" / "positive" / "form-complete-en.md"
NEGATIVE = EXAMPLES / "G7" / "negative" / "untraced-result.md"


def run(capsys, *args):
    code = main(["--repo-root", str(EXAMPLES), *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_passing_record_exits_0(capsys):
    code, out, _ = run(capsys, POSITIVE)
    assert code == 0
    assert "1 record(s): 9 passed, 0 failed, 0 errored, 0 not applicable" in out


def test_failing_record_exits_1_with_compiler_style_findings(capsys):
    code, out, _ = run(capsys, NEGATIVE)
    assert code == 1
    assert "G7/negative/untraced-result.md:105:20: G7 error: 9.1 µs is not the value it names" in out


def test_default_paths_are_the_records_under_docs_design(capsys):
    code, out, _ = run(capsys)
    assert code == 0
    assert out.startswith("1 record(s)")


def test_json_format(capsys):
    code, out, _ = run(capsys, NEGATIVE, POSITIVE, "--format", "json")
    document = json.loads(out)
    assert code == 1 and document["ok"] is False
    by_id = {record["id"]: record for record in document["records"]}
    g7 = by_id["untraced-result"]["gates"]["G7"]
    assert g7["status"] == "fail"
    assert {"line": 105, "col": 20} == {k: g7["findings"][0][k] for k in ("line", "col")}
    assert by_id["form-complete-en"]["gates"]["G3"] == {"status": "pass", "findings": []}
    assert by_id["form-complete-en"]["stage"] == "D" and by_id["form-complete-en"]["record_status"] == "approved"


def test_junit_format(capsys):
    code, out, _ = run(capsys, NEGATIVE, "--format", "junit")
    root = ElementTree.fromstring(out.split("\n", 1)[1])
    assert code == 1
    assert root.get("tests") == "9" and root.get("failures") == "1"
    failure = root.find(".//testcase[@name='G7 Claims discipline']/failure")
    assert failure is not None and "9.1 µs" in failure.text


def test_github_format_escapes_workflow_commands(capsys):
    code, out, _ = run(capsys, NEGATIVE, "--format", "github")
    assert code == 1
    assert "::error file=G7/negative/untraced-result.md,line=105,col=20,title=G7 Claims discipline::9.1 µs" in out


def test_gate_selection(capsys):
    code, out, _ = run(capsys, NEGATIVE, "--gate", "G0,G1", "--gate", "g8")
    assert code == 0
    assert "3 passed" in out


def test_stage_option_raises_the_stage_rules(capsys):
    record = EXAMPLES / "G2" / "positive" / "decisions-pending-at-a.md"
    assert run(capsys, record, "--gate", "G2")[0] == 0
    code, out, _ = run(capsys, record, "--gate", "G2", "--stage", "B")
    assert code == 1 and "question Q1 has no decision, and the record is at stage B" in out


def test_output_file(capsys, tmp_path):
    target = tmp_path / "report.json"
    code, out, _ = run(capsys, POSITIVE, "--format", "json", "--output", target)
    assert code == 0
    assert json.loads(target.read_text(encoding="utf-8"))["ok"] is True
    assert "1 record(s)" in out and f"report written to {target}" in out


def test_output_file_keeps_the_findings_out_of_standard_output(capsys, tmp_path):
    record = EXAMPLES / "G2" / "positive" / "decisions-pending-at-a.md"
    target = tmp_path / "report.txt"
    code, out, _ = run(capsys, record, "--gate", "G2", "--stage", "B", "--output", target)
    assert code == 1 and "has no decision" in target.read_text(encoding="utf-8")
    assert "has no decision" not in out and out.count("\n") == 1


@pytest.mark.parametrize("args, words", [
    (["--gate", "G9"], "unknown gate 'G9'"),
    (["--format", "yaml"], "invalid choice"),
    (["--head", "HEAD"], "--head needs --base"),
    (["no/such/record.md"], "no such file or folder"),
    (["--max-record-bytes", "0"], "must be positive"),
    (["--jobs", "0"], "--jobs must be at least 1, not 0"),
], ids=["unknown-gate", "unknown-format", "head-without-base", "missing-path", "bad-limit", "no-jobs"])
def test_bad_usage_exits_2(capsys, args, words):
    code, _, err = run(capsys, *args)
    assert code == 2
    assert words in err
    assert "Traceback" not in err


def test_internal_error_exits_3_without_traceback(capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("gates.checks.runner.check_records", broken)
    code, _, err = run(capsys, POSITIVE)
    assert code == 3
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err
    code, _, err = run(capsys, POSITIVE, "--debug")
    assert code == 3 and "Traceback" in err


def test_a_crashing_gate_is_an_error_result_not_a_pass(capsys, monkeypatch):
    from gates.checks import registry

    def crash(record, ctx):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(registry.GATES, "G5", crash)
    code, out, _ = run(capsys, POSITIVE)
    assert code == 1
    assert "G5 error: internal error in G5: ZeroDivisionError: division by zero" in out
    assert "1 errored" in out


def test_subcommands_are_a_literal_table():
    assert cli.SUBCOMMANDS == {
        "new": "gates.frontends.scaffold",
        "pr-body": "gates.frontends.pr_body",
        "lint-pr": "gates.frontends.lint_pr",
        "verify": "gates.frontends.verify_cli",
        "key": "gates.frontends.key_cli",
        "attest": "gates.frontends.attest_cli",
        "pin": "gates.frontends.pin_cli",
        "refresh": "gates.frontends.refresh_cli",
        "doctor": "gates.frontends.doctor_cli",
    }


def test_new_scaffolds_a_record_that_fails_only_until_filled(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    args = ["new", "splitkv-decode", "--title", 'Split-KV "decode"', "--author", "Ada Author <ada@example.com>",
            "--repo-root", str(tmp_path)]
    assert main(args) == 0
    record = tmp_path / "docs" / "design" / "splitkv-decode.md"
    text = record.read_text(encoding="utf-8")
    assert 'title: "Split-KV \\"decode\\""' in text and "# Split-KV \"decode\"" in text
    capsys.readouterr()
    code = main(["--repo-root", str(tmp_path), str(record), "--gate", "G0"])
    out = capsys.readouterr().out
    assert code == 1 and "template placeholder left" in out and "schema" not in out


def test_new_zh_template(tmp_path, capsys):
    assert main(["new", "fenduan", "--title", "分段求和", "--author", "林 <lin@example.com>", "--lang", "zh",
                 "--repo-root", str(tmp_path)]) == 0
    assert "## §1 为什么 / 诊断" in (tmp_path / "docs" / "design" / "fenduan.md").read_text(encoding="utf-8")


def test_new_never_overwrites(tmp_path, capsys):
    record = tmp_path / "docs" / "design" / "taken.md"
    record.parent.mkdir(parents=True)
    record.write_text("mine\n", encoding="utf-8")
    code = main(["new", "taken", "--title", "t", "--author", "A <a@b.c>", "--repo-root", str(tmp_path)])
    assert code == 2
    assert "already exists" in capsys.readouterr().err
    assert record.read_text(encoding="utf-8") == "mine\n"


def test_new_follows_the_configuration_and_the_policy(tmp_path, capsys):
    (tmp_path / ".design-gates").mkdir()
    (tmp_path / ".design-gates" / "config.yaml").write_text(
        "profile: single-pr\nprofiles:\n  single-pr: {}\n  stacked: {}\n", encoding="utf-8")
    (tmp_path / ".design-gates" / "policy.yaml").write_text(
        "schema_version: 1\nrules: []\napi:\n  packages: [normkit]\n  package_roots: [src]\n", encoding="utf-8")
    assert main(["new", "fix", "--title", "t", "--author", "A <a@b.c>", "--repo-root", str(tmp_path)]) == 0
    text = (tmp_path / "docs" / "design" / "fix.md").read_text(encoding="utf-8")
    assert "\nprocess: single-pr\n" in text and "\nstage: D\n" in text and "  packages: [normkit]\n" in text
    assert main(["new", "kernel", "--title", "t", "--author", "A <a@b.c>", "--process", "stacked",
                 "--repo-root", str(tmp_path)]) == 0
    text = (tmp_path / "docs" / "design" / "kernel.md").read_text(encoding="utf-8")
    assert "\nprocess: stacked\n" in text and "\nstage: A\n" in text  # not the configuration's default: named
    assert main(["new", "other", "--title", "t", "--author", "A <a@b.c>", "--process", "hotfix",
                 "--repo-root", str(tmp_path)]) == 2
    assert "--process 'hotfix' is not a process this repository allows" in capsys.readouterr().err


def test_new_takes_the_risk_from_the_policy_and_the_capture_stage_from_the_process(tmp_path):
    (tmp_path / ".design-gates").mkdir()
    (tmp_path / ".design-gates" / "config.yaml").write_text(
        "profile: single-pr\nprofiles:\n  single-pr: {}\n  stacked: {}\n", encoding="utf-8")
    (tmp_path / ".design-gates" / "policy.yaml").write_text(
        "schema_version: 1\nrules:\n  - {paths: [\"src/normkit/**\"], level: L4}\n  - {paths: [\"docs/**\"], "
        "level: L0}\n", encoding="utf-8")
    assert main(["new", "fix", "--title", "t", "--author", "A <a@b.c>", "--repo-root", str(tmp_path)]) == 0
    text = (tmp_path / "docs" / "design" / "fix.md").read_text(encoding="utf-8")
    assert "\nrisk: L4\n" in text and "capture: {required: true, due: D," in text
    assert "e.g. src/normkit/**]]" in text  # the example glob is the hottest rule's, not design-gates' own layout
    assert main(["new", "kernel", "--title", "t", "--author", "A <a@b.c>", "--process", "stacked",
                 "--repo-root", str(tmp_path)]) == 0
    text = (tmp_path / "docs" / "design" / "kernel.md").read_text(encoding="utf-8")
    assert "\nrisk: L4\n" in text and "capture: {required: true, due: C," in text


def test_a_single_pr_record_not_yet_approved_is_told_to_get_its_approval_in_its_pull_request(tmp_path, capsys):
    (tmp_path / ".design-gates").mkdir()
    (tmp_path / ".design-gates" / "config.yaml").write_text(
        "profile: single-pr\nprofiles:\n  single-pr: {}\n  stacked: {}\n", encoding="utf-8")
    assert main(["new", "fix", "--title", "t", "--author", "A <a@b.c>", "--repo-root", str(tmp_path)]) == 0
    assert main(["new", "kernel", "--title", "t", "--author", "A <a@b.c>", "--process", "stacked",
                 "--repo-root", str(tmp_path)]) == 0
    capsys.readouterr()
    main(["--gate", "G2", "--stage", "B", "--repo-root", str(tmp_path)])
    out = capsys.readouterr().out
    assert "fix.md:" in out and "a single-pr change merges with its record approved" in out
    assert "kernel.md:" in out and "code stages start only after the design record is approved" in out
    assert "fix.md:7:1: G2 error: the series is at stage" not in out and "kernel.md:6:1: G2 error: the record is" not in out


@pytest.mark.parametrize("args", [
    ["new", "Bad_ID", "--title", "t", "--author", "A <a@b.c>"],
    ["new", "ok", "--title", "t", "--author", "no email"],
    ["new", "ok", "--title", "t", "--author", "A <a@b.c>", "--dir", "../elsewhere"],
], ids=["bad-id", "bad-author", "dir-outside"])
def test_new_rejects_bad_arguments(tmp_path, capsys, args):
    assert main([*args, "--repo-root", str(tmp_path)]) == 2
    assert not (tmp_path / "docs").exists() and not (tmp_path.parent / "elsewhere").exists()


def test_repo_root_is_the_git_top_level(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert cli.find_repo_root(nested) == tmp_path.resolve()


def test_a_copy_of_the_examples_passes_from_its_own_root(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES, repo, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / ".git").mkdir()
    monkeypatch.chdir(repo / "G0")
    assert main(["positive"]) == 0


def test_base_merges_history_findings_into_the_records(capsys, monkeypatch):
    from gates.model.findings import Finding

    calls = {}

    class NoPolicyChange:
        """A change whose base holds no policy file."""

        base = "b" * 40
        base_ref = "origin/main"

        def read_at(self, sha, path):
            return None

    def load_change_set(repo_root, base, head):
        calls["range"] = (base, head)
        return NoPolicyChange()

    def check_change(change, records_by_id, repo_root):
        calls["records"] = sorted(records_by_id)
        return [
            Finding("G8", "G0/positive/form-complete-en.md", 14, 1, "approval by a commit author"),
            Finding("G0", "kernels/outside_scope.py", 1, 1, "file outside the stage-A scope"),
            Finding("G5", "G0/positive/form-complete-en.md", 3, 1, "a note", severity="warning"),
        ]

    import gates.history
    import gates.history.git_repo

    monkeypatch.setattr(gates.history.git_repo, "load_change_set", load_change_set)
    monkeypatch.setattr(gates.history, "check_change", check_change)
    code, out, _ = run(capsys, POSITIVE, "--base", "origin/main", "--format", "json")
    document = json.loads(out)
    assert code == 1 and calls["range"] == ("origin/main", "HEAD")
    assert "form-complete-en" in calls["records"] and "base-record" in calls["records"]
    by_path = {record["path"]: record for record in document["records"]}
    record = by_path["G0/positive/form-complete-en.md"]
    assert record["gates"]["G8"]["status"] == "fail"
    assert record["gates"]["G8"]["findings"][-1]["message"] == "approval by a commit author"
    assert record["gates"]["G5"]["status"] == "pass"
    synthetic = by_path["kernels/outside_scope.py"]
    assert synthetic["id"] == "(change)" and synthetic["gates"]["G0"]["status"] == "fail"


def test_schema_invalid_record_fails_g0_and_errors_the_rest(capsys):
    code, out, _ = run(capsys, EXAMPLES / "G0" / "negative" / "schema-bad-risk.md", "--format", "json")
    gates = json.loads(out)["records"][0]["gates"]
    assert code == 1
    assert gates["G0"]["status"] == "fail" and gates["G0"]["findings"][0]["line"] == 6
    assert {gates[g]["status"] for g in gates if g != "G0"} == {"error"}


def test_a_record_the_schema_rejects_reports_the_gates_it_stopped_on_one_line(capsys, tmp_path):
    text = (EXAMPLES / "G3" / "positive" / "numeric-within-tolerance.md").read_text(encoding="utf-8")
    record = tmp_path / "docs" / "design" / "broken.md"
    record.parent.mkdir(parents=True)
    record.write_text(text.replace("claim_level: kernel\n", ""), encoding="utf-8")
    code, out, _ = run(capsys, record, "--repo-root", tmp_path)
    assert code == 1
    assert "G0 error: 'claim_level' is required" in out
    assert "G1-G8 error: not checked: the front matter does not match the record schema (see G0)" in out
    assert out.count("not checked") == 1 and "8 errored" in out


def test_format_choices_are_the_renderers():
    from gates.frontends.report_formats import FORMATS

    action = next(a for a in cli.build_parser()._actions if a.dest == "format")
    assert tuple(action.choices) == FORMATS


def test_sarif_format_is_one_run_with_the_gates_as_rules(capsys):
    code, out, _ = run(capsys, NEGATIVE, "--format", "sarif")
    document = json.loads(out)
    assert code == 1
    assert document["version"] == "2.1.0" and document["$schema"].endswith("sarif-2.1.0.json")
    [sarif_run] = document["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "design-gates"
    assert [rule["id"] for rule in driver["rules"]] == [f"G{n}" for n in range(9)]
    assert driver["rules"][1]["name"] == "DiagnosisFromEvidence"
    assert driver["rules"][7]["shortDescription"]["text"] == "G7 Claims discipline"
    assert sarif_run["invocations"][0]["executionSuccessful"] is True
    result = next(r for r in sarif_run["results"] if r["ruleId"] == "G7")
    assert {"ruleId", "level", "message", "locations"} <= result.keys()
    assert result["level"] == "error" and result["message"]["text"].startswith("9.1 µs is not the value it names")
    assert driver["rules"][result["ruleIndex"]]["id"] == "G7"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "G7/negative/untraced-result.md"
    assert location["region"] == {"startLine": 105, "startColumn": 20}


def test_sarif_format_of_a_passing_record_has_no_results_and_warnings_stay_warnings(capsys, monkeypatch):
    code, out, _ = run(capsys, POSITIVE, "--format", "sarif")
    assert code == 0 and json.loads(out)["runs"][0]["results"] == []

    from gates.checks import registry
    from gates.model.findings import Finding, GateResult, Status

    def warns(record, ctx):
        return GateResult("G4", Status.PASS, [Finding("G4", record.rel_path, 3, 2, "anchor A9 is not declared",
                                                      severity="warning")])

    monkeypatch.setitem(registry.GATES, "G4", warns)
    code, out, _ = run(capsys, POSITIVE, "--format", "sarif")
    [result] = json.loads(out)["runs"][0]["results"]
    assert code == 0 and result["level"] == "warning" and result["ruleId"] == "G4"


def test_sarif_format_reports_an_unreadable_record_as_an_unsuccessful_run(capsys, tmp_path):
    broken = tmp_path / "docs" / "design" / "broken.md"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"---\nid: [unclosed\n---\n")
    code, out, _ = run(capsys, broken, "--repo-root", tmp_path, "--format", "sarif")
    invocation = json.loads(out)["runs"][0]["invocations"][0]
    assert code == 2 and invocation["executionSuccessful"] is False
    [notification] = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error" and "invalid YAML" in notification["message"]["text"]
    location = notification["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "docs/design/broken.md" and location["region"]["startLine"] == 3


def test_quiet_prints_nothing_when_every_gate_passes(capsys, tmp_path):
    code, out, _ = run(capsys, POSITIVE, "--quiet")
    assert code == 0 and out == ""
    code, out, _ = run(capsys, POSITIVE, "--quiet", "--format", "json", "--output", tmp_path / "report.json")
    assert code == 0 and out == "" and json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["ok"]


def test_quiet_still_prints_the_findings_and_keeps_the_exit_code(capsys):
    code, out, _ = run(capsys, NEGATIVE, "-q")
    assert code == 1
    assert "G7/negative/untraced-result.md:105:20: G7 error: 9.1 µs is not the value it names" in out
    assert "1 record(s)" in out
    code, out, _ = run(capsys, NEGATIVE, "-q", "--format", "github")
    assert code == 1 and out.startswith("::error file=G7/negative/untraced-result.md,line=105,col=20")


def test_the_summary_counts_records_and_names_other_files_the_history_checks_failed_at(tmp_path, capsys):
    from gitrepo_builder import ADA, seeded_repo

    repo = seeded_repo(tmp_path / "repo")
    repo.branch("unrecorded")
    repo.write("kernels/decode_attention/api.py", repo.read("kernels/decode_attention/api.py") + "\nTUNED = 1\n")
    repo.commit("A hot-path edit without a record", who=ADA)
    code = main(["--repo-root", str(repo.root), "--base", "main"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.splitlines()[-1] == ("0 record(s): 0 passed, 0 failed, 0 errored, 0 not applicable; "
                                    "the history checks failed at 1 other file(s)")


def test_a_commit_whose_objects_are_missing_is_bad_input_not_an_internal_error(tmp_path, capsys):
    from gitrepo_builder import ADA, seeded_repo

    repo = seeded_repo(tmp_path / "repo")
    repo.branch("change")
    repo.write("kernels/extra.py", "def extra():\n    return 1\n")
    repo.commit("A new module", who=ADA)
    blob = repo.git("rev-parse", "HEAD:kernels/extra.py")
    (repo.root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    repo.checkout("main")
    code = main(["--repo-root", str(repo.root), "--base", "main", "--head", "change"])
    _, err = capsys.readouterr()
    assert code == 2
    assert f"git object {blob[:12]} (kernels/extra.py at " in err and "is missing from this clone" in err
