"""What the static gates read once and reuse: a reused result follows the text it was read from."""

from __future__ import annotations

from gates.checks.suite_completeness import addopts_in
from gates.model.markdown_prose import prose_blocks


def test_pytest_addopts_follow_the_configuration_text():
    first = '[tool.pytest.ini_options]\naddopts = "-p myplugin"\n'
    assert addopts_in(first, "pyproject.toml") == "-p myplugin"
    assert addopts_in(first, "pyproject.toml") == "-p myplugin"
    assert addopts_in(first.replace("myplugin", "other"), "pyproject.toml") == "-p other"
    assert addopts_in("[pytest]\naddopts = -q\n", "pytest.ini") == "-q"
    assert addopts_in("[pytest]\naddopts = -q\n", "setup.cfg") == ""  # setup.cfg reads [tool:pytest]


def test_prose_offsets_point_at_the_source_with_and_without_containers():
    plain = "TTFT drops.\n\nSecond *paragraph* here.\n"
    blocks = prose_blocks(plain, 5)
    assert [block.position(0) for block in blocks] == [(5, 1), (7, 1)]
    assert blocks[1].position(len("Second ")) == (7, 9)  # after the emphasis marker
    wrapped = '!!! note "Note"\n    TTFT drops.\n'
    blocks = prose_blocks(wrapped, 1)
    assert [(block.text, block.position(0)) for block in blocks] == [("Note", (1, 11)), ("TTFT drops.", (2, 5))]
