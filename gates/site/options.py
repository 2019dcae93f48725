"""The plugin's settings, as written under ``plugins: - design-gates:`` in ``mkdocs.yml``.

Every path is relative to the directory of ``mkdocs.yml``, which is also the
repository root that records' paths (``covers``, evidence) are relative to.
"""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

REPORT_ENV = "DESIGN_GATES_REPORT"
DEFAULT_RECORDS = "docs/design"
DEFAULT_RECORDS_SECTION = "Design records"
DEFAULT_GATE_PAGES_SECTION = "Gates"


class DesignGatesConfig(base.Config):
    """Options of the ``design-gates`` plugin (documented in ``docs/site-plugin.md``)."""

    records = c.ListOfItems(c.Type(str), default=[DEFAULT_RECORDS])
    """Directories (their ``*.md`` files other than ``index.md``) or globs of design records."""

    report = c.Optional(c.Type(str))
    """A ``gate-check --format json`` report to render; ``DESIGN_GATES_REPORT`` overrides it."""

    fail_on_gate_failures = c.Type(bool, default=False)
    """Stop the build when a gate fails on a record, as ``gate-check`` exits 1 (default: show it failing)."""

    gate_pages = c.Type(bool, default=True)
    """Add the G0-G8 pages shipped with the package when the site has none of its own."""

    gate_pages_section = c.Type(str, default=DEFAULT_GATE_PAGES_SECTION)
    """The navigation section the shipped gate pages are added under."""

    nav = c.Type(bool, default=True)
    """Add records that the site's navigation does not list under ``records_section``."""

    records_section = c.Type(str, default=DEFAULT_RECORDS_SECTION)
    """The navigation section records are added under."""
