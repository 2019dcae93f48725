"""Small HTML pieces shared by the record header and the index pages; every value is escaped here."""

from __future__ import annotations

from html import escape
from typing import Callable

Linker = Callable[[str, str], "str | None"]
"""``link(kind, key)`` gives a URL relative to the current page, or None when there is no target.

``kind`` is ``"record"`` (key: record id), ``"gate"`` (key: ``G0``..``G8``), ``"file"``
(key: repository-relative path) or ``"docs"`` (key: path inside the docs directory).
"""


def text(value) -> str:
    """``value`` as escaped HTML text (None is empty)."""
    return escape("" if value is None else str(value), quote=True)


def badge(value, kind: str | None = None) -> str:
    """A status badge; its CSS class is ``dg-badge--<kind>``, or the value itself made CSS-safe."""
    css = kind or "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in str(value).lower())
    return f'<span class="dg-badge dg-badge--{css}">{text(value)}</span>'


def anchor(url: str | None, inner: str) -> str:
    """``inner`` (already HTML) as a link to ``url``, or unlinked when there is no URL."""
    return f'<a href="{text(url)}">{inner}</a>' if url else inner
