"""A record whose file name is not UTF-8 gets its own error, in the working tree and in a change.

Such a record used to be reported by `--base` as "record deleted (it was unreadable on
base)": git's path could not be read back by name, so the record looked absent at head.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gitrepo_builder import seeded_repo

cli = pytest.importorskip("gates.frontends.cli")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that keeps any bytes in names")

GOOD = (Path(__file__).parent / "examples" / "G0" / "positive" / "form-complete-en.md").read_text(encoding="utf-8")
NOT_UTF8 = os.fsdecode(b"docs/design/r\xff.md")
SHOWN = "docs/design/r\\xff.md"


def run(root: Path, capsys, *args):
    code = cli.main([*args, "--repo-root", str(root)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out + err


def test_a_record_named_in_latin_1_is_unreadable_input_naming_the_bytes(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / NOT_UTF8).parent.mkdir(parents=True)
    (tmp_path / NOT_UTF8).write_text(GOOD, encoding="utf-8")
    code, output = run(tmp_path, capsys)
    assert code == 2
    assert f"{SHOWN}:1:1: error: the file name {SHOWN} is not UTF-8" in output and "rename the file" in output


def test_a_change_adding_such_a_record_says_so_instead_of_calling_it_deleted(tmp_path, capsys):
    repo = seeded_repo(tmp_path / "repo")
    repo.branch("add-record")
    repo.write(NOT_UTF8, GOOD)
    repo.commit("Add a record")
    code, output = run(repo.root, capsys, "--base", "main", "--gate", "G0")
    assert code == 2
    assert f"{SHOWN}:1:1: G0 error: record does not parse at head: the file name {SHOWN} is not UTF-8" in output
    assert "record deleted" not in output


def test_a_utf8_name_outside_ascii_is_an_ordinary_record(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "résumé.md").write_text(GOOD, encoding="utf-8")
    code, output = run(tmp_path, capsys, "--gate", "G0")
    assert "is not UTF-8" not in output
    assert "docs/design/résumé.md:3:1: G0 error: id 'form-complete-en' does not match the file name 'résumé'" in output
