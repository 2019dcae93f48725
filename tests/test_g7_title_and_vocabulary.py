"""G7 reads the record's title, and the configuration's g7.extra_terms, as well as its body."""

from __future__ import annotations


import pytest

from gates.frontends.cli import main

RECORD = "G1/positive/diagnosis-name-forms.md"
TITLE = "title: Split sums for long rows (example, stage D)\n"


@pytest.fixture()
def repo(examples_repo):
    return examples_repo


def g7(repo, capsys):
    code = main([str(repo / RECORD), "--gate", "G7", "--repo-root", str(repo)])
    return code, capsys.readouterr().out


def edit(repo, old, new):
    path = repo / RECORD
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_record_passes_g7_as_written(repo, capsys):
    assert g7(repo, capsys)[0] == 0


def test_an_end_to_end_claim_in_the_title_is_a_claim(repo, capsys):
    edit(repo, TITLE, 'title: "Split sums: TPOT drops 2x"\n')
    code, out = g7(repo, capsys)
    assert code == 1 and ":4:" in out and "end-to-end claim ('TPOT'" in out


def test_a_configured_phrase_is_a_claim_too(repo, capsys):
    edit(repo, TITLE, "title: Split sums cut first paint by half\n")
    assert g7(repo, capsys)[0] == 0
    (repo / "pyproject.toml").write_text('[tool.design-gates.g7]\nextra_terms = ["first paint"]\n', encoding="utf-8")
    code, out = g7(repo, capsys)
    assert code == 1 and "first paint" in out


def test_explain_says_how_each_sentence_of_a_record_was_read(tmp_path, capsys):
    from gates.frontends.cli import main

    (tmp_path / ".git").mkdir()
    record = tmp_path / "docs" / "design" / "x.md"
    record.parent.mkdir(parents=True)
    record.write_text("---\nschema_version: 1\nid: x\ntitle: X\n---\n## §3 Design\n\n"
                      "TTFT and TPOT will be measured in stage D.\n\nTTFT drops 30% on the trace.\n", encoding="utf-8")
    main([str(record), "--gate", "G7", "--explain", "--repo-root", str(tmp_path)])
    out = capsys.readouterr().out
    assert "docs/design/x.md:8:1: note: not a claim: 'TTFT' is a mention: the clause states no result" in out
    assert "docs/design/x.md:10:1: note: claim: 'TTFT' with the result 'drops 30%'" in out
