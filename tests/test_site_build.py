"""`mkdocs build --strict`: the repository's site builds, and a bad site does not."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml

pytest.importorskip("mkdocs")
pytest.importorskip("material")

from mkdocs_site import REPO, build, team_site  # noqa: E402

GATES = [f"G{n}" for n in range(9)]


def record_text(record_id: str, title: str = "A decode-attention change", **extra) -> str:
    front = {
        "schema_version": 1, "id": record_id, "title": title, "risk": "L2",
        "record_status": "draft", "stage": "A", "lang": "en",
        "authors": [{"name": "Ada Author", "email": "ada@example.org"}], "reviewers": [],
        "covers": ["kernels/**"], "questions": [], "unknowns": [], "claim_level": "kernel",
        "evidence": [], "independence": {"defect": False},
        "self_check": {g: "pass" for g in GATES},
    }
    front.update(extra)
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n## §1 Why\n\nBecause.\n"


def report_for(records: dict[str, str], status: str = "pass", findings=()) -> dict:
    return {"ok": status == "pass", "records": [
        {"id": rid, "path": f"docs/design/{rid}.md", "stage": "A", "record_status": "draft",
         "gates": {g: {"status": status if g == "G3" else "pass",
                       "findings": list(findings) if g == "G3" else []} for g in GATES}}
        for rid in records]}


def make_site(root: Path, records: dict[str, str], pages: dict[str, str] | None = None,
              plugin: str = "design-gates") -> Path:
    """A small site with a navigation that uses the design-gates plugin; its repository root is ``root``."""
    docs = root / "docs"
    (docs / "design").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nSee the [records](design/index.md).\n", encoding="utf-8")
    for rid, text in records.items():
        (docs / "design" / f"{rid}.md").write_text(text, encoding="utf-8")
    for name, text in (pages or {}).items():
        (docs / name).write_text(text, encoding="utf-8")
    config = root / "mkdocs.yml"
    config.write_text(textwrap.dedent(f"""\
        site_name: scratch
        theme: {{name: material}}
        plugins: [{plugin}]
        nav: [{{Home: index.md}}, {{Records: [design/index.md]}}]
        """), encoding="utf-8")
    return config


def test_a_broken_link_fails_the_build(tmp_path):
    config = make_site(tmp_path, {}, pages={"notes.md": "# Notes\n\nSee [the plan](missing-plan.md).\n"})
    result = build(config, tmp_path / "site", report=_write(tmp_path, report_for({})))
    assert result.returncode != 0
    assert "missing-plan.md" in result.stderr


@pytest.mark.parametrize("name, old, new, where, what", [
    ("bad-record", "risk: L2", "risk: L9", "5:1", "risk"),
    ("with-status", "record_status: draft", "record_status: draft\nstatus: new", "7:1", "unknown key 'status'"),
], ids=["bad-risk-level", "materials-status-key"])
def test_an_invalid_record_fails_the_build_and_names_the_file_and_line(tmp_path, name, old, new, where, what):
    text = record_text(name).replace(old, new)
    config = make_site(tmp_path, {name: text})
    result = build(config, tmp_path / "site", report=_write(tmp_path, report_for({name: text})))
    assert result.returncode != 0
    assert f"docs/design/{name}.md:{where}" in result.stderr and what in result.stderr


def test_an_unreadable_record_fails_the_build(tmp_path):
    text = record_text("dup").replace("risk: L2", "risk: L2\nrisk: L3")
    config = make_site(tmp_path, {"dup": text})
    result = build(config, tmp_path / "site", report=_write(tmp_path, report_for({"dup": text})))
    assert result.returncode != 0
    assert "docs/design/dup.md" in result.stderr


def test_a_gate_that_errors_fails_the_build(tmp_path):
    records = {"ok-record": record_text("ok-record")}
    report = report_for(records, status="error", findings=[{"line": 1, "col": 1, "message": "KeyError: 'tolerances'"}])
    result = build(make_site(tmp_path, records), tmp_path / "site", report=_write(tmp_path, report))
    assert result.returncode != 0
    assert "G3 errored" in result.stderr and "KeyError" in result.stderr


def test_a_gate_that_fails_is_shown_and_does_not_stop_the_build(tmp_path):
    records = {"ok-record": record_text("ok-record")}
    report = report_for(records, status="fail", findings=[{"line": 7, "col": 1, "message": "no reviewer"}])
    result = build(make_site(tmp_path, records), tmp_path / "site", report=_write(tmp_path, report))
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site" / "design" / "ok-record" / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr data-gate="G3">.*?</tr>', page, re.S).group(0)
    assert "dg-badge--fail" in row and "no reviewer" in row
    assert "Gate results from the report <code>gate-report.json</code>" in page


def test_with_fail_on_gate_failures_a_failing_gate_stops_the_build_naming_the_finding(tmp_path):
    records = {"ok-record": record_text("ok-record")}
    report = report_for(records, status="fail", findings=[{"line": 7, "col": 1, "message": "no reviewer"}])
    config = make_site(tmp_path, records, plugin="{design-gates: {fail_on_gate_failures: true}}")
    result = build(config, tmp_path / "site", report=_write(tmp_path, report))
    assert result.returncode != 0
    assert "docs/design/ok-record.md:7:1: G3 failed: no reviewer" in result.stderr


def test_a_report_that_misses_a_record_fails_the_build(tmp_path):
    records = {"first": record_text("first"), "second": record_text("second")}
    report = report_for({"first": records["first"]})
    result = build(make_site(tmp_path, records), tmp_path / "site", report=_write(tmp_path, report))
    assert result.returncode != 0
    assert "no entry for the record docs/design/second.md" in result.stderr


def test_a_script_in_the_title_shows_as_text(tmp_path):
    records = {"xss": record_text("xss", title="Fast <script>alert('x')</script> decode")}
    result = build(make_site(tmp_path, records), tmp_path / "site", report=_write(tmp_path, report_for(records)))
    assert result.returncode == 0, result.stderr
    site = tmp_path / "site"
    for page in (site / "design" / "xss" / "index.html", site / "design" / "index.html"):
        html = page.read_text(encoding="utf-8")
        assert "<script>alert(" not in html, page
        assert "Fast &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; decode" in html, page


# The repository's own site


@pytest.fixture(scope="module")
def repository_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    result = build(REPO / "mkdocs.yml", site)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-4000:]}"
    return site


def own_records() -> list[Path]:
    return sorted(p for p in (REPO / "docs" / "design").glob("*.md") if p.name != "index.md")


def nav_pages(config: Path) -> list[str]:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    Loader.add_constructor("!ENV", lambda loader, node: None)
    nav = yaml.load(config.read_text(encoding="utf-8"), Loader=Loader)["nav"]
    pages = []

    def walk(item):
        if isinstance(item, str):
            pages.append(item)
        elif isinstance(item, list):
            for child in item:
                walk(child)
        elif isinstance(item, dict):
            for child in item.values():
                walk(child)

    walk(nav)
    return pages


def test_every_record_and_guide_is_in_the_navigation_and_the_gate_pages_come_from_the_plugin(repository_site):
    pages = set(nav_pages(REPO / "mkdocs.yml"))
    wanted = {"design/index.md", "results/index.md"} | {p.name for p in (REPO / "docs").glob("*.md")}
    assert sorted(wanted - pages) == []
    assert not [page for page in pages if page.startswith("gates/")], "the plugin adds its own gate pages"
    # A record is in the navigation whether mkdocs.yml lists it or the plugin adds it (its `nav` option), so
    # that a stage-A change can bring its record alone.
    home = (repository_site / "index.html").read_text(encoding="utf-8")
    assert [p.name for p in own_records() if f'href="design/{p.stem}/"' not in home] == []


def test_the_gate_pages_and_their_guides_are_served_from_the_package(repository_site):
    from gates.site.gate_pages import shipped_page_uris

    for uri in shipped_page_uris():
        html = (repository_site / uri.removesuffix(".md") / "index.html").read_text(encoding="utf-8")
        assert 'class="md-nav__link' in html, uri


def test_every_record_page_shows_the_gate_table(repository_site):
    assert own_records(), "the repository has no design records"
    for path in own_records():
        html = (repository_site / "design" / path.stem / "index.html").read_text(encoding="utf-8")
        gates = re.findall(r'<tr data-gate="(G\d)">', html)
        assert gates == GATES, path.name
        assert 'class="md-status' not in html, f"{path.name}: Material read a page status"


def test_records_index_lists_every_record_with_stage_and_gates(repository_site):
    html = (repository_site / "design" / "index.html").read_text(encoding="utf-8")
    listed = re.findall(r'<tr data-record="([^"]+)">', html)
    assert listed == sorted(p.stem for p in own_records())
    assert html.count('class="dg-badge dg-badge--stage"') == len(listed)


def test_chinese_record_text_is_in_the_search_index(repository_site):
    zh = [p for p in own_records() if "\nlang: zh" in p.read_text(encoding="utf-8")]
    if not zh:
        pytest.skip("no Chinese record in the repository")
    index = json.loads((repository_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "zh" in index["config"]["lang"]
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    for path in zh:
        assert f"design/{path.stem}/" in locations
    try:
        import jieba  # noqa: F401 - Material segments Chinese words at build time when it is installed
    except ImportError:
        return
    zh_text = " ".join(doc["text"] for doc in index["docs"]
                       if any(doc["location"].startswith(f"design/{p.stem}/") for p in zh))
    assert "\u200b" in zh_text, "Chinese text was not segmented into words for the search index"


def _write(root: Path, report: dict) -> Path:
    path = root / "gate-report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_results_reports_render_with_their_plots(repository_site):
    reports = sorted((REPO / "docs" / "results").glob("*.md"))
    if not reports:
        pytest.skip("no results report in the repository yet")
    index = (repository_site / "results" / "index.html").read_text(encoding="utf-8")
    for report in reports:
        page = repository_site / "results" / report.stem / "index.html"
        assert page.exists(), report.name
        assert f'href="{report.stem}/"' in index, f"the results index does not link {report.name}"
        html = page.read_text(encoding="utf-8")
        for src in re.findall(r'<img[^>]* src="([^"]+)"', html):
            assert (page.parent / src).resolve().is_file(), f"{report.name}: image {src} is not in the site"


def test_a_gate_check_json_report_renders_instead_of_the_static_gates(tmp_path):
    from gates.frontends.cli import main

    report = tmp_path / "gate-report.json"
    assert main(["--format", "json", "--output", str(report), "--repo-root", str(REPO)]) in (0, 1)
    data = json.loads(report.read_text(encoding="utf-8"))
    result = build(REPO / "mkdocs.yml", tmp_path / "site", report=report)
    assert result.returncode == 0, result.stderr[-4000:]
    for entry in data["records"]:
        html = (tmp_path / "site" / "design" / Path(entry["path"]).stem / "index.html").read_text(encoding="utf-8")
        assert re.search(r'class="dg-source">[^<]*<code>gate-report.json</code>', html), entry["path"]
        for gate, outcome in entry["gates"].items():
            row = re.search(rf'<tr data-gate="{gate}">.*?</tr>', html, re.S).group(0)
            assert f'dg-badge--{outcome["status"]}' in row, (entry["path"], gate)


# A team's own site: only `plugins: [design-gates]`


def nav_links(page: Path) -> list[str]:
    """The links of the site navigation on ``page`` (Material's primary sidebar or the default theme's bar)."""
    html = page.read_text(encoding="utf-8")
    if "md-nav--primary" in html:
        start = html.find("md-nav--primary")
        nav = html[start:html.find("md-sidebar--secondary", start)]
    else:
        nav = html[html.find('<div id="navbar-collapse"'):html.find('<ul class="nav navbar-nav ms-md-auto">')]
    assert nav, f"{page}: no navigation found"
    return re.findall(r'<a href="([^"]*)"', nav)


def test_a_site_with_only_the_plugin_gets_record_pages_gate_pages_stylesheet_and_navigation(tmp_path):
    result = build(team_site(tmp_path), tmp_path / "site")
    assert result.returncode == 0, result.stderr[-4000:]
    site = tmp_path / "site"
    page = site / "design" / "form-complete-en" / "index.html"
    html = page.read_text(encoding="utf-8")
    assert re.findall(r'<tr data-gate="(G\d)">', html) == GATES
    assert '<a href="../../gates/G7/">G7</a>' in html
    assert "dg-badge--verified" in html
    assert (site / "assets" / "stylesheets" / "design-gates.css").read_text(encoding="utf-8").count(".dg-badge")
    assert 'href="../../assets/stylesheets/design-gates.css"' in html
    for gate in GATES:
        assert (site / "gates" / gate / "index.html").is_file(), gate
    home_nav = nav_links(site / "index.html")
    assert "design/" in home_nav and "design/form-complete-en/" in home_nav
    assert "gates/G0/" in home_nav and "gates/trust-model/" in home_nav
    index = (site / "design" / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<tr data-record="([^"]+)">', index) == ["form-complete-en"]


def test_a_record_the_navigation_does_not_list_is_added_under_design_records(tmp_path):
    records = {"listed": record_text("listed"), "unlisted": record_text("unlisted")}
    config = make_site(tmp_path, records)
    config.write_text(config.read_text(encoding="utf-8").replace(
        "[design/index.md]", "[design/index.md, design/listed.md]"), encoding="utf-8")
    result = build(config, tmp_path / "site", report=_write(tmp_path, report_for(records)))
    assert result.returncode == 0, result.stderr[-4000:]
    links = nav_links(tmp_path / "site" / "index.html")
    assert links.count("design/listed/") == 1
    assert "design/unlisted/" in links
    assert "Design records" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_with_nav_false_an_unlisted_record_stays_out_of_the_navigation(tmp_path):
    records = {"unlisted": record_text("unlisted")}
    config = make_site(tmp_path, records, plugin="{design-gates: {nav: false, gate_pages: false}}")
    result = build(config, tmp_path / "site", report=_write(tmp_path, report_for(records)))
    assert result.returncode == 0, result.stderr[-4000:]
    assert "design/unlisted/" not in nav_links(tmp_path / "site" / "index.html")
    assert "not included in the \"nav\" configuration" in result.stderr and "design/unlisted.md" in result.stderr


def test_a_records_glob_that_matches_nothing_fails_the_build(tmp_path):
    config = team_site(tmp_path)
    config.write_text("site_name: Kernel team\nplugins:\n  - design-gates:\n"
                      "      records: [docs/design, docs/rfcs/*.md]\n", encoding="utf-8")
    result = build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "records glob 'docs/rfcs/*.md' matches no design record" in result.stderr


def test_the_report_option_renders_a_gate_check_report(tmp_path):
    records = {"ok-record": record_text("ok-record")}
    report = report_for(records, status="fail", findings=[{"line": 3, "col": 1, "message": "tolerance missing"}])
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "gates.json").write_text(json.dumps(report), encoding="utf-8")
    config = make_site(tmp_path, records, plugin="{design-gates: {report: reports/gates.json}}")
    result = build(config, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-4000:]
    html = (tmp_path / "site" / "design" / "ok-record" / "index.html").read_text(encoding="utf-8")
    assert "tolerance missing" in html and "<code>gates.json</code>" in html


def test_a_record_excluded_from_the_site_fails_the_build(tmp_path):
    result = build(team_site(tmp_path, "exclude_docs: design/form-complete-en.md\n"), tmp_path / "site")
    assert result.returncode != 0
    assert "the record docs/design/form-complete-en.md is not a page of the site" in result.stderr
