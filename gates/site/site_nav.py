"""Records and shipped gate pages in the site's navigation, instead of orphan pages.

Works on the ``nav`` structure of ``mkdocs.yml`` (lists of paths, ``{title: path}``
and ``{title: [...]}``) before MkDocs builds its navigation from it.
"""

from __future__ import annotations

from mkdocs.structure.files import File, file_sort_key
from mkdocs.utils import nest_paths


def listed_pages(nav_config) -> set[str]:
    """Every page path the navigation lists, at any depth."""
    pages: set[str] = set()

    def walk(item):
        if isinstance(item, str):
            pages.add(item[2:] if item.startswith("./") else item)
        elif isinstance(item, list):
            for child in item:
                walk(child)
        elif isinstance(item, dict):
            for child in item.values():
                walk(child)

    walk(nav_config)
    return pages


def automatic_nav(pages: list[File]) -> list:
    """The navigation MkDocs builds when ``mkdocs.yml`` has none, for these pages."""
    return nest_paths(f.src_uri for f in sorted(pages, key=file_sort_key))


def with_sections(nav_config: list, sections: list[tuple[str, list[str]]]) -> list:
    """``nav_config`` with each section's pages that it does not list yet, under that section.

    A top-level section of the same title gets the pages appended; otherwise the
    section is added at the end.  The input is not modified.
    """
    nav = list(nav_config)
    for title, uris in sections:
        listed = listed_pages(nav)
        missing = [uri for uri in uris if uri not in listed]
        if not missing:
            continue
        for i, item in enumerate(nav):
            if isinstance(item, dict) and len(item) == 1 and isinstance(item.get(title), list):
                nav[i] = {title: [*item[title], *missing]}
                break
        else:
            nav.append({title: missing})
    return nav

