"""Reading design records: front matter, lines of keys, § sections, links and declared paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.model.errors import InputError
from gates.model.record import load_record, parse_record

RECORD = """---
schema_version: 1
id: demo
questions:
  - id: Q1
    decision: accepted
  - id: Q2
    decision: null
covers: ["kernels/**"]
---

# Demo

## §1 Why / diagnosis

See [the profile](../evidence/p.json).

```text
## §9 not a heading inside code
```

### §1.1 Detail

More.

## §2 未知项

U1.
"""


def test_front_matter_and_lines_of_keys():
    record = parse_record(RECORD, "docs/design/demo.md", Path("/repo"))
    assert record.id == "demo"
    assert record.front_matter["questions"][1]["decision"] is None
    assert record.line_of("id") == 3
    assert record.line_of("questions", 1, "decision") == 8
    assert record.line_of("questions", 1, "missing", "deeper") == 7
    assert record.line_of("nothing") == 1
    assert record.body_start_line == 11


def test_sections_are_numbered_top_level_headings_outside_code():
    record = parse_record(RECORD, "docs/design/demo.md", Path("/repo"))
    assert [(s.number, s.title, s.start_line) for s in record.sections] == [(1, "Why / diagnosis", 14), (2, "未知项", 26)]
    assert "§1.1 Detail" in record.section(1).text
    assert record.section(9) is None


def test_links_resolve_relative_to_the_record(tmp_path):
    record = parse_record(RECORD, "docs/design/demo.md", tmp_path)
    (link,) = record.links
    assert (link.target, link.line) == ("../evidence/p.json", 16)
    assert record.link_target_rel(link.target) == "docs/evidence/p.json"
    assert record.link_target_rel("https://example.com/x") is None
    assert record.link_target_rel("../../../outside.md") is None


@pytest.mark.parametrize("field, value", [
    ("covers", '["../secrets/**"]'),
    ("covers", '["/etc/passwd"]'),
    ("evidence", '[{id: e, path: "docs/../../x.json", sha256: abc, kind: profile}]'),
    ("numeric_contract", '{suite: "C:\\\\x.py"}'),
], ids=["parent-glob", "absolute-glob", "parent-evidence", "windows-drive"])
def test_paths_outside_the_repository_are_refused_at_their_line(field, value):
    text = f"---\nid: demo\n{field}: {value}\n---\n"
    with pytest.raises(InputError) as caught:
        parse_record(text, "docs/design/demo.md", Path("/repo"))
    assert caught.value.line == 3


def test_load_record_reads_a_file_with_a_bom(tmp_path):
    path = tmp_path / "docs" / "design" / "demo.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + RECORD.encode("utf-8"))
    record = load_record(path, tmp_path)
    assert record.rel_path == "docs/design/demo.md"
    assert record.line_of("covers") == 9


def test_crlf_line_endings_keep_line_numbers(tmp_path):
    record = parse_record(RECORD.replace("\n", "\r\n"), "docs/design/demo.md", tmp_path)
    assert record.line_of("questions", 1, "decision") == 8
    assert record.section(2).start_line == 26


@pytest.mark.parametrize("text, line, words", [
    ("no front matter\n", 1, "starts with a '---' line"),
    ("---\nid: demo\n", 1, "not closed"),
    ("---\n- a list\n---\n", 2, "mapping"),
    ("---\nid: [unclosed\n---\n", 3, "invalid YAML"),
], ids=["no-front-matter", "unclosed", "not-a-mapping", "bad-yaml"])
def test_malformed_records_name_their_line(text, line, words):
    with pytest.raises(InputError) as caught:
        parse_record(text, "docs/design/demo.md", Path("/repo"))
    assert caught.value.line == line
    assert words in caught.value.message
