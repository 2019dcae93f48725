"""The configuration (`gates.model.config`): where it is read from, what it defaults to, how it fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.model.config import (
    CONFIG_FILE,
    GATE_NAMES,
    Settings,
    load_settings,
    parse_config_yaml,
    parse_pyproject,
)
from gates.checks.context import GateContext
from gates.checks.registry import GATES
from gates.checks.runner import check_record, record_files
from gates.model.errors import InputError
from gates.model.findings import Status
from gates.model.record import parse_record
from gitrepo_builder import record_text

REPO = Path(__file__).resolve().parents[1]

# The stage scopes before the configuration existed (gates/history/scope.py), which the
# defaults must reproduce, with the evidence folder added at B and C (already in D).
SCOPES_BEFORE = {
    "A": [],
    "B": ["kernels/**", "validation/**", "tests/**"],
    "C": ["kernels/decode_layer.py", "kernels/split_heuristic.py", "kernels/decode_attention/workspace.py",
          "kernels/__init__.py", "kernels/**/routing*", "tests/**"],
    "D": ["docs/results/**", "docs/evidence/**", "validation/bench/**"],
}


def write(root: Path, path: str, text: str) -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")


def test_the_defaults_are_the_layout_and_process_of_before():
    settings = Settings()
    assert settings.records == ("docs/design",)
    assert settings.policy == ".design-gates/policy.yaml"
    assert settings.evidence == ("docs/evidence",)
    assert list(settings.profiles) == ["stacked"]
    stacked = settings.profiles["stacked"]
    assert stacked.stages == ("A", "B", "C", "D")
    for stage, before in SCOPES_BEFORE.items():
        expected = set(before) | ({"docs/evidence/**"} if stage in "BCD" else set())
        assert set(stacked.scope(stage)) == expected, stage
        assert stacked.gates_at(stage) == tuple(GATES)
    assert settings.g7_extra_terms == ()


def test_the_gate_names_are_the_registry_s():
    assert GATE_NAMES == tuple(GATES)


def test_this_repository_states_the_defaults_in_its_pyproject():
    settings = load_settings(REPO)
    assert settings.source == "pyproject.toml"
    assert (settings.records, settings.policy, settings.evidence, settings.profile, settings.profiles) == (
        Settings().records, Settings().policy, Settings().evidence, Settings().profile, Settings().profiles)


def test_a_folder_without_configuration_gets_the_defaults(tmp_path):
    write(tmp_path, "pyproject.toml", "[project]\nname = 'kernels'\n")
    assert load_settings(tmp_path) == Settings()


def test_the_pyproject_table_is_read(tmp_path):
    write(tmp_path, "pyproject.toml", """\
[project]
name = "fastattn"

[tool.design-gates]
records = ["design"]
evidence = ["benchmarks/evidence"]
policy = "ci/design-policy.yaml"
profile = "single-pr"

[tool.design-gates.profiles.single-pr.scopes]
D = ["src/fastattn/**", "tests/**"]

[tool.design-gates.g7]
extra_terms = ["request latency"]
""")
    settings = load_settings(tmp_path)
    assert settings.source == "pyproject.toml"
    assert settings.records == ("design",)
    assert settings.policy == "ci/design-policy.yaml"
    assert settings.rules_files == ("ci/design-policy.yaml", "pyproject.toml")
    assert list(settings.profiles) == ["single-pr"] and settings.profile == "single-pr"
    assert settings.profiles["single-pr"].scope("D") == ("src/fastattn/**", "tests/**")
    assert settings.g7_extra_terms == ("request latency",)


def test_the_pyproject_table_must_name_an_allowed_default_profile(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.design-gates.profiles.single-pr]\n")
    with pytest.raises(InputError) as error:
        load_settings(tmp_path)
    assert error.value.path == "pyproject.toml" and error.value.line == 1
    assert "profile: 'stacked' is not among the allowed profiles (single-pr)" in error.value.message


def test_the_yaml_file_wins_over_the_pyproject_table(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.design-gates]\nrecords = ['from-pyproject']\n")
    write(tmp_path, CONFIG_FILE, "records: [rfcs]\nprofile: single-pr\nprofiles:\n  single-pr: {}\n")
    settings = load_settings(tmp_path)
    assert settings.source == CONFIG_FILE
    assert settings.records == ("rfcs",)
    assert settings.profile_for(None).name == "single-pr"
    assert settings.profile_for("stacked") is None  # not listed: not allowed


def test_an_evidence_folder_joins_the_default_scopes_but_not_a_configured_one():
    settings = parse_config_yaml("evidence: [artifacts]\nprofiles:\n  stacked:\n    scopes:\n      B: ['src/**']\n")
    stacked = settings.profiles["stacked"]
    assert stacked.scope("B") == ("src/**",)
    assert "artifacts/**" in stacked.scope("C") and "artifacts/**" in stacked.scope("D")
    assert "docs/evidence/**" not in stacked.scope("D")
    assert stacked.scope("A") == ()


def test_an_unknown_key_names_the_file_the_line_and_the_likely_key():
    with pytest.raises(InputError) as error:
        parse_config_yaml("policy: .design-gates/policy.yaml\nrecord_dirs: [docs/design]\n")
    assert (error.value.path, error.value.line) == (CONFIG_FILE, 2)
    assert ("unknown key 'record_dirs' (did you mean 'records'?; "
            "allowed: evidence, g7, lint_pr, policy, profile, profiles, records, refresh, require_records)") in error.value.message


def test_an_unknown_key_in_the_pyproject_table_is_found_on_its_line():
    text = "[project]\nname = 'x'\n\n[tool.design-gates.profiles.stacked]\nscope = {B = ['src/**']}\n"
    with pytest.raises(InputError) as error:
        parse_pyproject(text)
    assert (error.value.path, error.value.line) == ("pyproject.toml", 5)
    assert "profiles.stacked: unknown key 'scope' (did you mean 'scopes'?; allowed: gates, scopes)" in error.value.message


@pytest.mark.parametrize("text, expected", [
    pytest.param("profile: single_pr\n", "allowed: stacked, single-pr (did you mean 'single-pr'?)", id="profile-typo"),
    pytest.param("profiles:\n  single_pr: {}\n", "profiles: unknown key 'single_pr' (did you mean 'single-pr'?;",
                 id="process-name-typo"),
    pytest.param("profiles:\n  stacked:\n    gates:\n      B: [G1]\n", "G0 (form) applies at every stage",
                 id="g0-switched-off"),
    pytest.param("profile: single-pr\nprofiles:\n  single-pr:\n    scopes:\n      B: ['src/**']\n",
                 "the single-pr process has no stage B",
                 id="stage-of-another-process"),
    pytest.param("records: [../elsewhere]\n", "is not a repository path", id="records-outside"),
    pytest.param("- records\n", "must be a mapping", id="not-a-mapping"),
])
def test_invalid_configurations_say_what_is_wrong(text, expected):
    with pytest.raises(InputError) as error:
        parse_config_yaml(text)
    assert expected in error.value.message


def test_the_records_folder_is_configurable(tmp_path):
    write(tmp_path, CONFIG_FILE, "records: [rfcs]\n")
    write(tmp_path, "rfcs/fast-path.md", "---\nid: fast-path\n---\n")
    write(tmp_path, "docs/design/old.md", "---\nid: old\n---\n")
    assert [p.relative_to(tmp_path).as_posix() for p in record_files([], tmp_path)] == ["rfcs/fast-path.md"]


def test_a_configured_records_folder_must_exist(tmp_path):
    write(tmp_path, CONFIG_FILE, "policy: rules.yaml\nrecords: [rfcs]\n")
    with pytest.raises(InputError) as error:
        record_files([], tmp_path)
    assert (error.value.path, error.value.line) == (CONFIG_FILE, 2)
    assert "the folder rfcs does not exist" in error.value.message


def test_the_default_records_folder_may_be_absent(tmp_path):
    assert record_files([], tmp_path) == []


def _record(tmp_path, **extra):
    extra = {"unknowns": [], "claim_level": "kernel", "independence": {"defect": False, "note": "none"},
             "self_check": {gate: "fail" for gate in GATE_NAMES}, **extra}
    text = record_text("fast-path", extra=extra)
    return parse_record(text, "docs/design/fast-path.md", tmp_path)


def test_a_process_the_configuration_does_not_allow_fails_g0(tmp_path):
    record = _record(tmp_path, process="single-pr", stage="D")
    result = check_record(record, GateContext(tmp_path, records_by_id={record.id: record}), ["G0"])
    messages = [f.message for f in result.gates["G0"].findings]
    assert any("process 'single-pr' is not allowed by the configuration (the defaults: stacked)" in m
               for m in messages), messages


def test_a_stage_outside_the_record_s_process_fails_g0(tmp_path):
    write(tmp_path, CONFIG_FILE, "profiles:\n  stacked: {}\n  single-pr: {}\n")
    record = _record(tmp_path, process="single-pr", stage="A")
    result = check_record(record, GateContext(tmp_path, records_by_id={record.id: record}), ["G0"])
    messages = [f.message for f in result.gates["G0"].findings]
    assert any("stage A is not a stage of the single-pr process (its stages: D)" in m for m in messages), messages


def test_gates_a_stage_does_not_apply_are_not_applicable(tmp_path):
    write(tmp_path, CONFIG_FILE, "profiles:\n  stacked:\n    gates:\n      A: [G0, G2]\n")
    record = _record(tmp_path)
    result = check_record(record, GateContext(tmp_path, records_by_id={record.id: record}), ["G0", "G1", "G7"])
    assert result.gates["G1"].status == Status.NOT_APPLICABLE
    assert result.gates["G7"].status == Status.NOT_APPLICABLE
    assert result.gates["G0"].status != Status.NOT_APPLICABLE


def test_every_gate_applies_by_default(tmp_path):
    record = _record(tmp_path)
    result = check_record(record, GateContext(tmp_path, records_by_id={record.id: record}), ["G1"])
    assert result.gates["G1"].status != Status.NOT_APPLICABLE  # §1 cites nothing: G1 fails


def test_the_documented_examples_are_valid_and_say_the_same():
    import re

    text = (REPO / "gates/site/pages/configuration.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(toml|yaml)\n(.*?)```", text, re.S)
    tables = [parse_pyproject(block) for kind, block in blocks if kind == "toml"]
    assert all(table is not None for table in tables)
    producers, this_repository, library = tables
    assert list(producers.refresh.producers) == ["numeric-h100", "bench-h100"]
    assert producers.refresh.producers["bench-h100"].exclusive and not producers.refresh.producers["numeric-h100"].exclusive
    assert this_repository == load_settings(REPO)
    as_yaml = parse_config_yaml([block for kind, block in blocks if kind == "yaml"][-1])
    fields = ("records", "policy", "evidence", "profile", "profiles", "g7_extra_terms", "g7_kernel_terms",
              "lint_pr_sections")
    assert [getattr(library, f) for f in fields] == [getattr(as_yaml, f) for f in fields]


def test_new_records_go_to_the_first_configured_records_folder(tmp_path, capsys):
    from gates.frontends.cli import main

    write(tmp_path, CONFIG_FILE, "records: [rfcs, docs/design]\n")
    assert main(["new", "fused-merge", "--title", "Fused merge", "--author", "A <a@b.c>",
                 "--repo-root", str(tmp_path)]) == 0
    assert (tmp_path / "rfcs" / "fused-merge.md").is_file()
    assert "created rfcs/fused-merge.md" in capsys.readouterr().out


def test_the_claims_settings_are_read_and_checked():
    settings = parse_config_yaml("g7:\n  kernel_terms: [fused_moe]\nlint_pr:\n  sections: always\n")
    assert (settings.g7_kernel_terms, settings.lint_pr_sections) == (("fused_moe",), "always")
    assert parse_config_yaml("records: [docs/design]\n").lint_pr_sections == "generated"
    with pytest.raises(InputError) as error:
        parse_config_yaml("lint_pr:\n  sections: sometimes\n")
    assert error.value.line == 2 and "sometimes" in error.value.message
