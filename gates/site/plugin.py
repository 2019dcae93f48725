"""``design-gates``: the MkDocs plugin that turns design records into reviewer pages.

Enable it in ``mkdocs.yml`` (options in ``docs/site-plugin.md``)::

    plugins:
      - search
      - design-gates

At the top of every record page it renders the record's stage and status, the
records it is stacked on, the G0-G8 table with each gate's status and findings, the
reviewer questions with their recommendations and decisions, the unknowns with the
stage that closes each, and the evidence files with their SHA-256.  It adds a records
index, a results index (when the site has ``results/`` pages), the G0-G8 pages the
package ships (when the site has none), its stylesheet, and puts records that the
navigation does not list under "Design records".

Gate results come from a ``gate-check --format json`` report when ``DESIGN_GATES_REPORT``
or the ``report`` option names one; otherwise the static gates are computed at build
time, without executing any suite.  The build fails (``PluginError``) on an invalid
record, a gate that errors, a report that cannot be read or misses a record, and a
``records`` entry that matches nothing; with ``fail_on_gate_failures``, also on a gate
that fails.  Otherwise a gate that fails is shown failing.  Each record page says which
gates its table ran and that the history checks of a change run in CI only.

Every front-matter value is HTML-escaped.  The record's own status is its
``record_status`` key; Material's page ``status`` key never comes from a record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Callable

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files, InclusionLevel

from gates.site import gate_pages, site_nav
from gates.site.gate_results import load_record_views
from gates.site.indexes import records_index, results_index
from gates.site.markup import Linker
from gates.site.options import REPORT_ENV, DesignGatesConfig
from gates.site.record_header import RecordView, render_record_header
from gates.site.record_sources import find_records, index_uri

STYLESHEET = Path(__file__).resolve().parent / "assets" / "design-gates.css"
STYLESHEET_URI = "assets/stylesheets/design-gates.css"
RESULTS_DIR = "results"
RESULTS_INDEX = "results/index.md"


@dataclass
class _Build:
    """What one build knows about the site's records."""

    repo_root: Path
    docs_dir: Path
    report_path: Path | None
    records: dict[str, RecordView] = field(default_factory=dict)  # src_uri -> view
    record_uris: dict[str, str] = field(default_factory=dict)  # record id -> src_uri


class DesignGatesPlugin(BasePlugin[DesignGatesConfig]):
    """Renders design records (G0-G8) in an MkDocs site; registered as the ``design-gates`` plugin."""

    def __init__(self) -> None:
        self._build: _Build | None = None

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        """Find the repository root and the report to render; add the stylesheet."""
        repo_root = Path(config.config_file_path or ".").resolve().parent
        report = os.environ.get(REPORT_ENV) or self.config.report
        self._build = _Build(
            repo_root=repo_root, docs_dir=Path(config.docs_dir).resolve(),
            report_path=(repo_root / report).resolve() if report else None,
        )
        if STYLESHEET_URI not in [str(css) for css in config.extra_css]:
            config.extra_css.append(STYLESHEET_URI)
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Load and check every record; add the shipped pages, the indexes and the navigation entries."""
        self._load_records(files)
        added_gate_pages = self._add_pages(files, config)
        sections = []
        if self.config.nav:
            index = self._records_index_uri()
            index_page = [index] if index and files.get_file_from_path(index) else []
            records = self._require_build().records
            sections.append((self.config.records_section,
                             index_page + sorted(records, key=lambda uri: records[uri].id)))
        if added_gate_pages:
            sections.append((self.config.gate_pages_section, added_gate_pages))
        if sections:
            config.nav = site_nav.with_sections(self._nav_without(sections, files, config), sections)
        return files

    def _load_records(self, files: Files) -> None:
        """Every record the ``records`` option names, checked, as a ``RecordView`` per page."""
        build = self._require_build()
        sources = find_records(self.config.records, build.repo_root, build.docs_dir)
        for source in sources:
            page = files.get_file_from_path(source.src_uri)
            if page is None or not page.is_documentation_page() or page.inclusion.is_excluded():
                raise PluginError(f"design-gates: the record {source.repo_path} is not a page of the site "
                                  "(excluded by `exclude_docs`?); narrow the plugin's `records` option instead")
        views = load_record_views([s.repo_path for s in sources], build.repo_root, build.report_path,
                                  fail_on_gate_failures=self.config.fail_on_gate_failures)
        for source in sources:
            view = views[source.repo_path]
            build.records[source.src_uri] = view
            build.record_uris.setdefault(view.id, source.src_uri)

    def _add_pages(self, files: Files, config: MkDocsConfig) -> list[str]:
        """Add the stylesheet, the shipped gate pages and the indexes; return the gate pages added."""
        build = self._require_build()
        if files.get_file_from_path(STYLESHEET_URI) is None:
            files.append(File.generated(config, STYLESHEET_URI, abs_src_path=str(STYLESHEET)))
        added_gate_pages = gate_pages.pages_to_add({f.src_uri for f in files}) if self.config.gate_pages else []
        for uri in added_gate_pages:
            files.append(File.generated(config, uri, content=gate_pages.shipped_page(uri),
                                        inclusion=InclusionLevel.INCLUDED))
        index = self._records_index_uri()
        if index:
            self._add_generated(files, config, index,
                                lambda page: records_index(list(build.records.values()), self._linker(page, files)))
        results = [f for f in files.documentation_pages()
                   if f.src_uri.startswith(RESULTS_DIR + "/") and f.src_uri != RESULTS_INDEX]
        if results:
            reports = [(f.src_uri, _first_heading(f) or f.name) for f in results]
            self._add_generated(files, config, RESULTS_INDEX,
                                lambda page: results_index(reports, self._linker(page, files)))
        return added_gate_pages

    def _records_index_uri(self) -> str | None:
        build = self._require_build()
        return index_uri(self.config.records, build.repo_root, build.docs_dir)

    def on_page_markdown(self, markdown: str, page, config: MkDocsConfig, files: Files) -> str:
        """Escape a record's title wherever the theme prints it; drop any page ``status``."""
        view = self._view_for(page)
        if view is not None:
            page.meta.pop("status", None)
            page.meta["title"] = escape(str(view.meta.get("title", view.id)))
        return markdown

    def on_page_content(self, html: str, page, config: MkDocsConfig, files: Files) -> str:
        """Put the record header after the page's first heading (or first, when it has none)."""
        view = self._view_for(page)
        if view is None:
            return html
        report = self._require_build().report_path
        header = render_record_header(view, self._linker(page.file, files), report_name=report and report.name)
        cut = html.find("</h1>")
        if cut < 0:
            title = escape(str(view.meta.get("title", view.id)))
            return f'<h1 id="dg-title">{title}</h1>\n{header}\n{html}'
        cut += len("</h1>")
        return html[:cut] + "\n" + header + "\n" + html[cut:]

    def _nav_without(self, sections, files: Files, config: MkDocsConfig) -> list:
        """The site's navigation; for a site without one, what MkDocs would build, minus the sections' pages."""
        if config.nav is not None:
            return config.nav
        placed = {uri for _, uris in sections for uri in uris}
        pages = [f for f in files.documentation_pages() if f.inclusion.is_in_nav() and f.src_uri not in placed]
        return site_nav.automatic_nav(pages)

    def _linker(self, source: File, files: Files) -> Linker:
        """URLs relative to ``source`` for records, gate pages, docs pages and evidence files."""
        build = self._require_build()
        try:
            docs_prefix = build.docs_dir.relative_to(build.repo_root).as_posix()
        except ValueError:
            docs_prefix = None
        docs_prefix = None if docs_prefix is None else ("" if docs_prefix == "." else docs_prefix + "/")

        def link(kind: str, key: str) -> str | None:
            if kind == "record":
                uri = build.record_uris.get(key)
            elif kind == "gate":
                uri = gate_pages.gate_page_uri(key)
            elif kind == "file":
                uri = key[len(docs_prefix):] if docs_prefix is not None and key.startswith(docs_prefix) else None
            else:
                uri = key
            target = files.get_file_from_path(uri) if uri else None
            return target.url_relative_to(source) if target is not None else None

        return link

    @staticmethod
    def _add_generated(files: Files, config: MkDocsConfig, uri: str, content: Callable[[File], str]) -> None:
        if files.get_file_from_path(uri) is not None:
            return
        page = File.generated(config, uri, content="", inclusion=InclusionLevel.INCLUDED)
        files.append(page)
        page.content_string = content(page)

    def _view_for(self, page) -> RecordView | None:
        return self._build.records.get(page.file.src_uri) if self._build else None

    def _require_build(self) -> _Build:
        if self._build is None:
            raise PluginError("design-gates: on_config did not run")
        return self._build


def _first_heading(page: File) -> str | None:
    try:
        for line in page.content_string.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    except (OSError, UnicodeDecodeError):
        return None
    return None
