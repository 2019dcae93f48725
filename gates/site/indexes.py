"""The index pages the plugin adds when the site has none: all records, and all results reports."""

from __future__ import annotations

from gates.site.markup import Linker, anchor, badge, text
from gates.site.record_header import GATE_IDS, RecordView

SHORT_STATUS = {"not-applicable": "n/a"}


def records_index(views: list[RecordView], link: Linker) -> str:
    """Markdown for the records index: id, title, stage, record status, risk and each gate's status."""
    rows = []
    for view in sorted(views, key=lambda v: v.id):
        meta = view.meta
        gates = " ".join(
            anchor(link("gate", g), badge(f"{g} {SHORT_STATUS.get(view.gate_status(g), view.gate_status(g))}",
                                          view.gate_status(g)))
            for g in GATE_IDS
        )
        rows.append(
            f'<tr data-record="{text(view.id)}"><td>{anchor(link("record", view.id), f"<code>{text(view.id)}</code>")}</td>'
            f'<td>{text(meta.get("title", ""))}</td><td>{badge(meta.get("stage", "?"), "stage")}</td>'
            f'<td>{badge(meta.get("record_status", "?"))}</td><td>{text(meta.get("risk", ""))}</td>'
            f'<td class="dg-index-gates">{gates}</td></tr>'
        )
    body = "".join(rows) or '<tr><td colspan="6">No design records yet.</td></tr>'
    return (
        "---\ntitle: Design records\n---\n\n# Design records\n\n"
        "Every design record of this site, with the stage its series has reached, the "
        "record's own status and its gates.\n\n"
        '<table class="dg-index"><thead><tr><th>ID</th><th>Title</th><th>Stage</th>'
        f'<th>Record status</th><th>Risk</th><th>Gates</th></tr></thead><tbody>{body}</tbody></table>\n'
    )


def results_index(reports: list[tuple[str, str]], link: Linker) -> str:
    """Markdown for the results index; ``reports`` are ``(docs path, title)`` pairs."""
    items = "".join(f'<li>{anchor(link("docs", uri), text(title))}</li>' for uri, title in sorted(reports))
    body = f"<ul>{items}</ul>" if items else "<p>No results reports yet.</p>"
    return ("---\ntitle: Results\n---\n\n# Results\n\nBenchmark and validation reports, each "
            f"written from its evidence artifacts.\n\n{body}\n")
