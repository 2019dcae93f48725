"""Plain-text and Markdown tables of a benchmark artifact's summary."""

from __future__ import annotations


def _fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


HEADER = ("shape", "KV MB", "ours us", "best peer", "peer us", "ratio", "of ceiling", "read us", "paged x",
          "vs single", "splits h/best", "pass")


def summary_rows(artifact: dict) -> list[tuple[str, ...]]:
    res = artifact["results"]
    rows = []
    for name, e in res["summary"].items():
        meta = res["shapes"][name]
        hb = f"{e.get('heuristic_splits', meta['heuristic_splits'])}/{e.get('sweep_best_splits', '-')}"
        rows.append((name, f"{meta['kv_bytes'] / 1e6:.1f}", _fmt(e.get("ours_us"), ".2f"),
                     e.get("best_peer", "-"), _fmt(e.get("best_peer_us"), ".2f"),
                     _fmt(e.get("ratio_to_best_peer"), ".3f"), _fmt(e.get("fraction_of_read_ceiling"), ".1%"),
                     _fmt(e.get("read_pass_us"), ".2f"),
                     _fmt(e.get("paged_ratio"), ".3f"), _fmt(e.get("speedup_vs_single_pass"), ".1f"), hb,
                     {True: "yes", False: "NO", None: "-"}[e.get("passed")]))
    return rows


def format_table(artifact: dict) -> str:
    ceil = artifact["results"]["ceilings"]
    rows = [HEADER] + summary_rows(artifact)
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = [f"read ceiling {ceil['read']['TBps']:.3f} TB/s, copy ceiling {ceil['copy']['TBps']:.3f} TB/s, "
             f"ours = {artifact['results']['ours']}"]
    for r in rows:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def markdown_table(artifact: dict) -> str:
    rows = summary_rows(artifact)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
