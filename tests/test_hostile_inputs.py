"""Records and artifacts come from pull requests: hostile input ends in exit 2 (or 1), with file and line.

Never a traceback, never a rewritten file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gates.frontends.cli import main

EXAMPLES = Path(__file__).parent / "examples"
GOOD = (EXAMPLES / "G0" / "positive" / "form-complete-en.md").read_text(encoding="utf-8")

ALIAS_BOMB = "\n".join(
    [f"a0: &a0 [{', '.join(['lol'] * 9)}]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs" / "design").mkdir(parents=True)
    return tmp_path


def run(repo: Path, capsys, *args):
    code = main(["--repo-root", str(repo), *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out + err


def write(repo: Path, name: str, data) -> Path:
    path = repo / "docs" / "design" / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


HOSTILE = [
    ("alias-bomb", f"---\n{ALIAS_BOMB}\n---\n", 2, "alias"),
    ("python-object-tag", "---\nid: x\nrun: !!python/object/apply:os.system ['echo pwned']\n---\n", 3, "not allowed"),
    ("custom-tag", "---\nid: !include /etc/passwd\n---\n", 2, "not allowed"),
    ("duplicate-key", "---\nid: x\ntitle: a\ntitle: b\n---\n", 4, "duplicate key 'title'"),
    ("merge-key", "---\nbase: &b {risk: L0}\nother:\n  <<: *b\n---\n", 4, "merge keys"),
    ("recursive-alias", "---\nid: &x [*x]\n---\n", 2, "recursive"),
    ("parent-path", "---\nid: x\ncovers: ['../../etc/**']\n---\n", 3, "'..'"),
    ("absolute-path", "---\nid: x\nevidence:\n  - {id: e, path: /etc/passwd, sha256: x, kind: profile}\n---\n", 4, "absolute"),
    ("huge-integer", "---\nid: " + "9" * 5000 + "\n---\n", 2, "bad int"),
    ("deep-nesting", "---\nid: " + "[" * 200 + "]" * 200 + "\n---\n", 2, "deeper"),
    ("not-a-mapping", "---\njust a string\n---\n", 2, "mapping"),
    ("no-front-matter", "# Title only\n", 1, "'---'"),
    ("unclosed-front-matter", "---\nid: x\n", 1, "not closed"),
]


@pytest.mark.parametrize("name, text, line, words", HOSTILE, ids=[case[0] for case in HOSTILE])
def test_hostile_record_exits_2_naming_file_and_line(repo, capsys, name, text, line, words):
    path = write(repo, f"{name}.md", text)
    before = path.read_bytes()
    code, output = run(repo, capsys, path)
    assert code == 2
    assert f"docs/design/{name}.md:{line}:" in output
    assert words in output
    assert path.read_bytes() == before


def test_invalid_utf8_names_the_line_of_the_bad_byte(repo, capsys):
    write(repo, "latin1.md", "---\nid: x\ntitle: caf".encode() + b"\xe9\n---\n")
    code, output = run(repo, capsys)
    assert code == 2
    assert "docs/design/latin1.md:3:" in output and "not valid UTF-8" in output


def test_fifty_megabyte_record_is_refused_before_it_is_read(repo, capsys):
    path = repo / "docs" / "design" / "huge.md"
    with open(path, "wb") as handle:
        handle.write(b"---\nid: huge\n---\n")
        handle.truncate(50 * 1024 * 1024)
    code, output = run(repo, capsys)
    assert code == 2
    assert "docs/design/huge.md:1:" in output and "limit" in output


def test_size_limit_is_configurable(repo, capsys):
    write(repo, "good.md", "---\nid: good\n---\n" + "x" * 5000)
    code, output = run(repo, capsys, "--max-record-bytes", "1000")
    assert code == 2 and "1000-byte limit" in output


def test_symlink_out_of_the_repository_is_refused(repo, capsys, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.md"
    outside.write_text(GOOD, encoding="utf-8")
    (repo / "docs" / "design" / "link.md").symlink_to(outside)
    code, output = run(repo, capsys)
    assert code == 2
    assert "docs/design/link.md:1:" in output and "outside the repository" in output


def test_a_bom_is_accepted(capsys, tmp_path):
    repo = tmp_path / "examples"
    shutil.copytree(EXAMPLES, repo, ignore=shutil.ignore_patterns("G*", "__pycache__"))
    record = repo / "docs" / "design" / "base-record.md"
    record.write_bytes(b"\xef\xbb\xbf" + record.read_bytes())
    code, output = run(repo, capsys, record)
    assert code == 0, output


def test_a_record_that_lies_in_its_self_check_fails_at_the_self_check_line(capsys):
    path = EXAMPLES / "G8" / "negative" / "lying-self-check.md"
    line = next(n for n, text in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if text.startswith("self_check:"))
    code, output = run(EXAMPLES, capsys, path)
    assert code == 1
    assert f"lying-self-check.md:{line}:1: G8 error: self-check claims pass for G8, but G8 is fail" in output


def test_one_bad_record_does_not_hide_the_others(repo, capsys):
    write(repo, "bad.md", "---\nid: x\nid: y\n---\n")
    write(repo, "also-bad.md", "no front matter\n")
    code, output = run(repo, capsys, "--format", "json")
    assert code == 2
    assert "bad.md" in output and "also-bad.md" in output


@pytest.mark.parametrize("content, words", [
    (b'{"id": "x",\n "id": "y"}', "duplicate JSON key"),
    (b'{"schema_version": 1,\n "id": NaN}', "invalid JSON"),
    (b'{\n  "id": "x",\n  oops\n}', "invalid JSON"),
    (b"\xff\xfe", "not valid UTF-8"),
], ids=["duplicate-key", "nan", "syntax", "binary"])
def test_hostile_evidence_is_a_gate_finding_naming_the_artifact(tmp_path, capsys, content, words):
    repo = tmp_path / "examples"
    shutil.copytree(EXAMPLES, repo, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "evidence" / "ncu-single-pass.json").write_bytes(content)
    code, output = run(repo, capsys, repo / "G1" / "positive" / "diagnosis-table-and-inline.md", "--gate", "G1")
    assert code == 1
    assert "evidence/ncu-single-pass.json:" in output and words in output


PATHOLOGICAL_BODIES = {
    "open-brackets": "[" * 200_000,
    "unclosed-links": "[a](" * 50_000,
    "digit-run-then-letter": "1" * 200_000 + "a1",
    "comma-run": "1," * 100_000 + "1 ms",
    "unclosed-placeholders": "[[fill" * 30_000,
    "heading-of-hashes": "## §1 " + " #" * 100_000 + "x",
    "link-targets-without-close": "](" + "a" * 200_000,
}


@pytest.mark.parametrize("body", PATHOLOGICAL_BODIES.values(), ids=PATHOLOGICAL_BODIES.keys())
def test_pathological_lines_are_read_in_linear_time(repo, capsys, body):
    front_matter = GOOD[: GOOD.index("\n---\n", 4) + 5].replace("id: form-complete-en", "id: slow")
    write(repo, "slow.md", front_matter + "\n## §1 Why\n" + body + "\n")
    code, output = run(repo, capsys)
    assert code == 1 and "docs/design/slow.md:" in output


@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink-loop"])
def test_evidence_that_is_no_regular_file_exits_2_without_waiting(tmp_path, capsys, kind):
    repo = tmp_path / "examples"
    shutil.copytree(EXAMPLES, repo, ignore=shutil.ignore_patterns("__pycache__"))
    path = repo / "evidence" / "numeric-cpu.json"
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        os.symlink(path.name, path)
    code, output = run(repo, capsys, repo / "G3" / "positive" / "numeric-within-tolerance.md", "--gate", "G3")
    assert code == 2, output
    assert "evidence/numeric-cpu.json:1:1: error: artifact path is" in output and "not a regular file" in output
def test_a_symlink_loop_named_on_the_command_line_exits_2_naming_it(repo, capsys):
    loop = repo / "docs" / "design" / "loop.md"
    loop.symlink_to(loop)
    code, output = run(repo, capsys, loop)
    assert code == 2
    assert "docs/design/loop.md:1:" in output and "symbolic links" in output


def test_a_symlink_loop_found_in_docs_design_exits_2_and_the_other_records_are_checked(repo, capsys):
    (repo / "docs" / "design" / "loop.md").symlink_to(repo / "docs" / "design" / "loop.md")
    write(repo, "other.md", GOOD.replace("id: form-complete-en", "id: other"))
    code, output = run(repo, capsys)
    assert code == 2
    assert "docs/design/loop.md:1:" in output and "1 unreadable input" in output


@pytest.mark.parametrize("record_id", ["evil\n", "evil\r", "ev\til", "evil\x1b[2J"], ids=["lf", "cr", "tab", "esc"])
def test_new_refuses_an_id_with_control_characters_and_creates_nothing(tmp_path, capsys, record_id):
    code = main(["new", record_id, "--title", "t", "--author", "A <a@b.c>", "--repo-root", str(tmp_path)])
    assert code == 2 and "must match" in capsys.readouterr().err
    assert not (tmp_path / "docs").exists()


@pytest.mark.parametrize("option, value", [("--title", "two\nlines"), ("--title", "bell\a"),
                                           ("--author", "A\nB <a@b.c>")], ids=["title-lf", "title-bell", "author-lf"])
def test_new_refuses_control_characters_in_title_and_author(tmp_path, capsys, option, value):
    args = {"--title": "t", "--author": "A <a@b.c>", option: value}
    code = main(["new", "ok", *[x for pair in args.items() for x in pair], "--repo-root", str(tmp_path)])
    assert code == 2
    assert not (tmp_path / "docs").exists()


def test_new_refuses_a_dir_that_is_a_symlink_out_of_the_repository(tmp_path_factory, capsys):
    repo = tmp_path_factory.mktemp("repo")
    outside = tmp_path_factory.mktemp("outside")
    (repo / ".git").mkdir()
    (repo / "docs").mkdir()
    (repo / "docs" / "escape").symlink_to(outside, target_is_directory=True)
    code = main(["new", "ok", "--title", "t", "--author", "A <a@b.c>", "--dir", "docs/escape/sub",
                 "--repo-root", str(repo)])
    assert code == 2 and "outside the repository" in capsys.readouterr().err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("path", ["kernels/decode_attention/x\n.py", "kernels/\tapi.py", "docs/\x1b[1mnote.md",
                                  "README.md\r", "tests/\x85.py"], ids=["lf", "tab", "esc", "cr", "c1"])
def test_a_path_with_control_characters_gets_the_highest_level(path):
    from gates.model.policy import parse_policy

    policy = parse_policy("schema_version: 1\ndefault_level: L1\nrules:\n"
                          "  - paths: ['docs/**', 'tests/**', 'README.md', 'kernels/*']\n    level: L0\n")
    level, rule = policy.level_of(path)
    assert level == "L4" and "control characters" in rule.reason
    assert policy.level_of("docs/note.md")[0] == "L0"
