"""The design-gates MkDocs plugin without a site build: entry point, options, records, gate pages, navigation."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import BasePlugin  # noqa: E402

from gates.site import gate_pages, site_nav  # noqa: E402
from gates.site.options import DesignGatesConfig  # noqa: E402
from gates.site.record_header import GATE_IDS  # noqa: E402
from gates.site.record_sources import find_records, index_uri  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


# Packaging


def test_the_mkdocs_entry_point_names_the_plugin_class():
    entry_points = PYPROJECT["project"]["entry-points"]["mkdocs.plugins"]
    module, _, attribute = entry_points["design-gates"].partition(":")
    plugin_class = getattr(importlib.import_module(module), attribute)
    assert issubclass(plugin_class, BasePlugin)
    plugin = plugin_class()
    errors, warnings = plugin.load_config({})
    assert (errors, warnings) == ([], [])
    assert isinstance(plugin.config, DesignGatesConfig)
    assert plugin.config.records == ["docs/design"] and plugin.config.report is None
    assert plugin.config.gate_pages is True and plugin.config.nav is True


def test_the_plugin_class_builds_a_site_in_process_from_another_working_directory(tmp_path, monkeypatch):
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs_site import team_site

    from gates.site.plugin import DesignGatesPlugin

    config_file = team_site(tmp_path / "team")
    config_file.write_text(config_file.read_text(encoding="utf-8").replace("[design-gates]", "[]"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = load_config(str(config_file), site_dir=str(tmp_path / "site"), strict=True)
    plugin = DesignGatesPlugin()
    assert plugin.load_config({"records": ["docs/design/*.md"]}, str(config_file)) == ([], [])
    config.plugins["design-gates"] = plugin
    build(config)
    html = (tmp_path / "site" / "design" / "form-complete-en" / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<tr data-gate="(G\d)">', html) == list(GATE_IDS)
    assert "assets/stylesheets/design-gates.css" in html
    assert {"Design records": ["design/index.md", "design/form-complete-en.md"]} in config.nav


def test_an_unknown_option_is_reported():
    from gates.site.plugin import DesignGatesPlugin

    errors, warnings = DesignGatesPlugin().load_config({"record": ["docs/design"]})
    assert any("record" in str(w) for w in errors + warnings)


def test_package_data_holds_the_stylesheet_and_every_shipped_page():
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["gates.site"]
    shipped = {p.relative_to(REPO / "gates" / "site").as_posix()
               for g in globs for p in (REPO / "gates" / "site").glob(g)}
    assert "assets/design-gates.css" in shipped
    assert {f"pages/{uri.split('/', 1)[1]}" for uri in gate_pages.shipped_page_uris()} <= shipped


def test_a_wheel_carries_the_entry_point_the_stylesheet_and_the_shipped_pages_as_files(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for folder in ("gates", "kernels", "validation"):
        shutil.copytree(REPO / folder, source / folder, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                             "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
        for uri in gate_pages.shipped_page_uris():
            name = uri.split("/", 1)[1]
            assert archive.read(f"gates/site/pages/{name}") == (gate_pages.PAGES_DIR / name).read_bytes(), name
    assert "gates/site/assets/design-gates.css" in names
    assert "[mkdocs.plugins]\ndesign-gates = gates.site.plugin:DesignGatesPlugin" in entry_points


def test_every_option_is_documented():
    doc = (REPO / "docs" / "site-plugin.md").read_text(encoding="utf-8")
    for name, _ in DesignGatesConfig._schema:
        assert f"`{name}`" in doc, name
    assert "DESIGN_GATES_REPORT" in doc


# Which files are records


def make_docs(root: Path, *names: str) -> Path:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# page\n", encoding="utf-8")
    return root / "docs"


def test_a_records_directory_gives_its_markdown_files_but_not_its_index_or_subfolders(tmp_path):
    docs = make_docs(tmp_path, "docs/design/b.md", "docs/design/a.md", "docs/design/index.md",
                     "docs/design/drafts/old.md", "docs/design/notes.txt")
    sources = find_records(["docs/design"], tmp_path, docs)
    assert [(s.repo_path, s.src_uri) for s in sources] == [
        ("docs/design/a.md", "design/a.md"), ("docs/design/b.md", "design/b.md")]
    assert index_uri(["docs/design"], tmp_path, docs) == "design/index.md"


def test_a_records_glob_reaches_into_subfolders_and_each_record_counts_once(tmp_path):
    docs = make_docs(tmp_path, "docs/rfcs/2026/fast-decode.md", "docs/rfcs/index.md")
    sources = find_records(["docs/rfcs/**/*.md", "docs/rfcs/2026"], tmp_path, docs)
    assert [s.src_uri for s in sources] == ["rfcs/2026/fast-decode.md"]
    assert index_uri(["docs/rfcs/**/*.md"], tmp_path, docs) == "rfcs/index.md"


@pytest.mark.parametrize("entry, message", [
    ("docs/rfcs/*.md", "records glob 'docs/rfcs/*.md' matches no design record"),
    ("docs/desing", "records directory 'docs/desing' does not exist"),
    ("/abs/design", "use a path relative to the directory of mkdocs.yml"),
    ("../elsewhere", "use a path relative to the directory of mkdocs.yml"),
    ("notes", "is outside the docs directory"),
], ids=["glob-matches-nothing", "missing-directory", "absolute", "parent", "outside-docs"])
def test_a_records_entry_that_names_no_record_in_the_docs_fails(tmp_path, entry, message):
    docs = make_docs(tmp_path, "docs/design/a.md", "docs/rfcs/index.md", "notes/a.md")
    with pytest.raises(PluginError, match=re.escape(message)):
        find_records([entry], tmp_path, docs)


def test_an_empty_records_list_fails(tmp_path):
    with pytest.raises(PluginError, match="`records` is empty"):
        find_records([], tmp_path, make_docs(tmp_path, "docs/index.md"))


def test_an_existing_records_directory_without_records_is_a_site_with_no_records_yet(tmp_path):
    docs = make_docs(tmp_path, "docs/design/index.md")
    assert find_records(["docs/design"], tmp_path, docs) == []


# Shipped gate pages


def test_the_shipped_pages_live_once_as_package_data():
    shipped = sorted(p.name for p in gate_pages.PAGES_DIR.glob("*.md"))
    assert shipped == sorted(uri.split("/", 1)[1] for uri in gate_pages.shipped_page_uris())
    assert sorted(p.stem for p in gate_pages.PAGES_DIR.glob("G*.md")) == sorted(GATE_IDS)
    assert not any(path.is_symlink() for path in gate_pages.PAGES_DIR.iterdir())
    docs = REPO / "docs"
    assert not (docs / "gates").exists()
    assert [name for name in shipped if (docs / name).exists()] == [], "a shipped page has a copy under docs/"


def test_shipped_pages_are_served_as_written_and_link_each_other_within_the_gates_folder():
    g0 = gate_pages.shipped_page("gates/G0.md")
    assert g0 == (gate_pages.PAGES_DIR / "G0.md").read_text(encoding="utf-8")
    assert "](history-checks.md)" in g0 and "](../history-checks.md" not in g0
    g1 = gate_pages.shipped_page("gates/G1.md")
    assert "](../evidence/ncu-single-pass.json)" in g1, "the example record's link must stay as written"
    for uri in gate_pages.shipped_page_uris():
        for target in re.findall(r"\]\(([^)#:]+\.md)", gate_pages.shipped_page(uri)):
            assert (gate_pages.PAGES_DIR / target).is_file(), f"{uri} links {target}"


def test_a_site_without_gate_pages_gets_all_shipped_pages():
    assert gate_pages.pages_to_add({"index.md"}) == gate_pages.shipped_page_uris()


def test_a_site_with_its_own_gate_pages_keeps_them():
    assert gate_pages.pages_to_add({f"gates/{g}.md" for g in GATE_IDS}) == []


def test_a_site_with_some_gate_pages_fails():
    with pytest.raises(PluginError, match="has its own gates/G3.md but not gates/G0.md"):
        gate_pages.pages_to_add({"gates/G3.md"})


def test_a_site_page_where_a_shipped_page_goes_fails():
    with pytest.raises(PluginError, match="already has gates/trust-model.md"):
        gate_pages.pages_to_add({"gates/trust-model.md"})


# Navigation


def test_missing_pages_join_a_section_of_the_same_title():
    nav = [{"Home": "index.md"}, {"Design records": ["design/index.md", "design/a.md"]}]
    assert site_nav.with_sections(nav, [("Design records", ["design/index.md", "design/a.md", "design/b.md"])]) == [
        {"Home": "index.md"}, {"Design records": ["design/index.md", "design/a.md", "design/b.md"]}]
    assert nav[1]["Design records"] == ["design/index.md", "design/a.md"], "the input is not modified"


def test_a_section_is_added_when_the_navigation_has_none_of_that_title():
    nav = ["index.md", {"RFCs": [{"Decode": "design/a.md"}]}]
    assert site_nav.with_sections(nav, [("Design records", ["design/a.md", "design/b.md"]), ("Gates", [])]) == [
        "index.md", {"RFCs": [{"Decode": "design/a.md"}]}, {"Design records": ["design/b.md"]}]


def test_listed_pages_finds_pages_at_any_depth():
    nav = ["index.md", {"A": [{"B": ["./x.md", {"C": "y.md"}]}]}, {"Link": "https://example.org"}]
    assert site_nav.listed_pages(nav) == {"index.md", "x.md", "y.md", "https://example.org"}
