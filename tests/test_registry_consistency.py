"""The registry, the schema's self_check keys, the gate modules and the gate pages are one set."""

from __future__ import annotations

import re
from pathlib import Path

from gates.checks.registry import GATES, TITLES
from gates.model.record import prose_lines
from gates.model.schemas import load_schema

ROOT = Path(__file__).resolve().parents[1]
HEADINGS = ["What it checks", "Why it matters", "Passing example", "Failing example", "How to fix"]


def test_registry_schema_and_pages_name_the_same_gates():
    registry = set(GATES)
    schema = load_schema("record")["properties"]["self_check"]
    pages = {path.stem for path in (ROOT / "gates" / "site" / "pages").glob("G*.md")}
    assert registry == set(schema["properties"]) == set(schema["required"]) == pages == set(TITLES)
    assert list(GATES) == [f"G{i}" for i in range(9)]


def test_each_gate_module_is_named_after_its_gate():
    for gate, check in GATES.items():
        module = check.__module__
        assert re.fullmatch(rf"gates\.checks\.g{gate[1:]}_[a-z]+", module), module
        assert check.__name__ == "check"
        assert (check.__globals__.get("GATE") == gate), f"{module}.GATE must be {gate!r}"


def test_each_gate_page_has_the_fixed_headings_in_order():
    for gate, title in TITLES.items():
        text = (ROOT / "gates" / "site" / "pages" / f"{gate}.md").read_text(encoding="utf-8")
        assert text.startswith(f"# {gate} {title}\n"), f"{gate}.md must start with '# {gate} {title}'"
        found = [line[3:] for _, line in prose_lines(text, 1) if line.startswith("## ")]
        assert found == HEADINGS, f"{gate}.md headings are {found}"
