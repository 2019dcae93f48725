"""`gate-check lint-pr`: a hand-edited description still meets G7 and keeps its sections."""

from __future__ import annotations

import pytest

from gates.cli import main
from test_pr_body import repo, write_record  # noqa: F401 - the fixture and the record writer are shared


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
    return code, [line for line in capsys.readouterr().out.splitlines() if line]


def test_a_generated_description_is_clean(repo, capsys, body):
    assert lint(repo, capsys, body) == (0, [])


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
    assert lint(repo, capsys, edited) == (0, [])


def test_a_number_in_validation_that_no_artifact_measured_is_a_g7_finding(repo, capsys, body):
    edited = body.replace("### What was run\n", "### What was run\n\n- the kernel now takes 12.5 us\n", 1)
    code, lines = lint(repo, capsys, edited)
    assert code == 1
    assert len(lines) == 1 and "G7 error: 12.5us is not in any evidence artifact" in lines[0]


def test_a_number_an_artifact_measured_is_fine(repo, capsys, body):
    edited = body.replace("### What was run\n", "### What was run\n\n- achieved occupancy was 8.33%\n", 1)
    assert lint(repo, capsys, edited) == (0, [])


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


def test_a_description_that_names_no_record_is_a_finding(repo, capsys):
    text = "## Why\n\nx\n\n## Design\n\n## Decisions\n\n## Validation\n\n### What was run\n\n### What was not run\n\n" \
           "## Limitations\n\n## Follow-ups\n\n## Gates\n"
    code, lines = lint(repo, capsys, text)
    assert code == 1
    assert lines == ["pr.md:1:1: G0 error: the description names no design record (docs/design/<id>.md); "
                     "pass --record to choose one"]


def test_a_chinese_description_is_checked_the_same_way(repo, capsys):
    record = write_record(repo, "splitkv", "B")
    assert main(["pr-body", str(record), "--stage", "B", "--lang", "zh", "--repo-root", str(repo)]) == 0
    text = capsys.readouterr().out
    assert lint(repo, capsys, text) == (0, [])
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
    assert lines and all(line.startswith("bad.md:") for line in lines)


def test_the_pull_request_template_has_every_required_section():
    from pathlib import Path

    from gates.lint_pr import NOT_RUN, REQUIRED, RUN, _sections

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
