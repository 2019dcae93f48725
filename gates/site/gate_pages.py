"""The G0-G8 pages the package ships, with the companion pages they link to.

The pages live once, as package data under ``gates/site/pages/``: the gate pages
``G0.md`` ... ``G8.md`` and the guides ``history-checks.md``, ``trust-model.md``,
``configuration.md`` and ``evidence-from-tests.md``.  In a site they all live under
``gates/``, as they do in the package folder, so that the record header's gate links
(``gates/G3.md``) and the links between them resolve as written.  This repository's
own site serves them from there too.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError

from gates.site.record_header import GATE_IDS

PAGES_DIR = Path(__file__).resolve().parent / "pages"
SITE_DIR = "gates"
COMPANION_PAGES = ("history-checks.md", "trust-model.md", "configuration.md", "evidence-from-tests.md")


def gate_page_uri(gate: str) -> str:
    """Where a gate's page is in a site: ``gates/G3.md``."""
    return f"{SITE_DIR}/{gate}.md"


def shipped_page_uris() -> list[str]:
    """The site paths of every shipped page, gates first, in navigation order."""
    return [gate_page_uri(g) for g in GATE_IDS] + [f"{SITE_DIR}/{name}" for name in COMPANION_PAGES]


def shipped_page(uri: str) -> str:
    """The Markdown of the shipped page at site path ``uri``."""
    source = PAGES_DIR / uri.split("/", 1)[1]
    try:
        return source.read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"design-gates: the shipped page {source} cannot be read: {exc}") from exc


def pages_to_add(site_uris: set[str]) -> list[str]:
    """The shipped pages a site needs: all of them when it has no gate page, none when it has all.

    A site with some but not all of ``gates/G0.md``..``gates/G8.md`` is an error: its
    records would link some gates to its own pages and others to the shipped ones.
    """
    own = [g for g in GATE_IDS if gate_page_uri(g) in site_uris]
    if len(own) == len(GATE_IDS):
        return []
    if own:
        missing = ", ".join(gate_page_uri(g) for g in GATE_IDS if g not in own)
        raise PluginError(f"design-gates: the site has its own {', '.join(gate_page_uri(g) for g in own)} "
                          f"but not {missing}; add all nine gate pages, remove them to use the shipped "
                          "ones, or set `gate_pages: false`")
    taken = [uri for uri in shipped_page_uris() if uri in site_uris]
    if taken:
        raise PluginError(f"design-gates: the site already has {', '.join(taken)}, where the shipped gate "
                          "pages go; move it or set `gate_pages: false`")
    return shipped_page_uris()
