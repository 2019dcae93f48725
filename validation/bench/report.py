"""Markdown results report (and plots) from a benchmark evidence artifact.

    python -m validation.bench.report docs/evidence/bench-splitkv-h200.json --out docs/results/splitkv-h200.md

The report refuses an artifact whose correctness checks failed or whose run did not
finish. Every number in it is read from the artifact, which the report names. Plots
need matplotlib; without it the report is written without them and says so.

The page is machine-checkable (`gates.checks.results_pages`): its first line declares the
artifact (id, path, SHA-256) and a comment before each table maps the table's columns
to the artifact keys their cells were read from.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from .summary import BAR_LARGE_FRACTION, BAR_MEDIUM_RATIO, BAR_SMALL_RATIO
from .table import markdown_table


class ReportError(ValueError):
    """The artifact cannot back a report."""


def load(path: Path) -> dict:
    try:
        artifact = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not a readable JSON artifact ({exc})") from exc
    if artifact.get("kind") != "benchmark":
        raise ReportError(f"{path}: kind must be 'benchmark', got {artifact.get('kind')!r}")
    res = artifact.get("results", {})
    if not res.get("complete", False):
        raise ReportError(f"{path}: the run did not finish (results.complete is not true)")
    if not res.get("correctness_passed", False):
        raise ReportError(f"{path}: correctness failed, nothing is reported: {res.get('correctness_failures')}")
    return artifact


def _bar_text(entry: dict) -> str:
    return BAR_TEXT.get(entry["size_class"], BAR_TEXT["small"])


BAR_TEXT = {
    "large": f">= {BAR_LARGE_FRACTION:.0%} of read ceiling and faster than best peer",
    "medium": f"<= {BAR_MEDIUM_RATIO} x best peer",
    "small": f"<= {BAR_SMALL_RATIO} x best peer (graph replay)",
}
YES_NO = {"true": "yes", "false": "NO", "null": "-"}
MATRIX_ROW = "rows[shape={shape},impl={impl},role=matrix]"


def page_declaration(artifact: dict, artifact_path: str, sha256: str) -> str:
    """The first line of the page: which artifact (id, path, SHA-256 of the file) every number comes from."""
    return "<!-- results-page " + json.dumps({"artifact": artifact["id"], "path": artifact_path, "sha256": sha256}) + " -->"


def columns(mapping: dict, row: str = "shape", rows_of: str | None = None) -> str:
    """The comment before a table that maps each column to the artifact key its cells are read from
    (`rows_of`: the artifact object whose every key is one row of the table)."""
    declared = {"row": row, **({"rows_of": rows_of} if rows_of else {}), "columns": mapping}
    return "<!-- columns " + json.dumps(declared, ensure_ascii=False) + " -->"


def summary_columns(res: dict) -> dict:
    """Columns of `validation.bench.table.markdown_table`."""
    first = next(iter(res["summary"].values()), {})
    heuristic = "summary.{row}.heuristic_splits" if "heuristic_splits" in first else "shapes.{row}.heuristic_splits"
    return {
        "KV MB": {"key": "shapes.{row}.kv_bytes", "unit": "MB"},
        "ours us": "summary.{row}.ours_us",
        "best peer": None,
        "peer us": "summary.{row}.best_peer_us",
        "ratio": "summary.{row}.ratio_to_best_peer",
        "of ceiling": "summary.{row}.fraction_of_read_ceiling",
        "read us": "summary.{row}.read_pass_us",
        "paged x": "summary.{row}.paged_ratio",
        "vs single": "summary.{row}.speedup_vs_single_pass",
        "splits h/best": {"keys": [heuristic, "summary.{row}.sweep_best_splits"]},
        "pass": {"key": "summary.{row}.passed", "choices": YES_NO},
    }


def plots(artifact: dict, out_dir: Path, stem: str) -> list[str]:
    """time vs context and fraction of the read ceiling vs context, per implementation."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    res = artifact["results"]
    ours = res["ours"]
    read = res["ceilings"]["read"]["TBps"]
    family = [name for name, m in res["shapes"].items()
              if (m["shape"]["B"], m["shape"]["Hq"], m["shape"]["Hkv"], m["shape"]["D"], m["shape"]["R"]) ==
              (1, 32, 8, 128, 1)]
    impls = [ours] + sorted({r["impl"] for r in res["rows"] if r["kind"] == "peer"})
    files = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for impl in impls:
        pts = sorted((res["shapes"][s]["shape"]["S"], r["median_us"], r["fraction_of_read_ceiling"])
                     for s in family for r in res["rows"]
                     if r["shape"] == s and r["impl"] == impl and r["role"] == "matrix" and "median_us" in r)
        if not pts:
            continue
        label = f"{impl} (ours)" if impl == ours else impl
        axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=label)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("context length (tokens), B=1, Hq=32, Hkv=8, D=128")
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("time per call (us)")
    axes[1].set_ylabel(f"fraction of read ceiling ({read:.2f} TB/s)")
    axes[1].axhline(BAR_LARGE_FRACTION, color="gray", linestyle="--", linewidth=1)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    name = f"{stem}-context.png"
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    files.append(name)

    fig, ax = plt.subplots(figsize=(11, 4))
    names = list(res["summary"])
    width = 0.8 / len(impls)
    for i, impl in enumerate(impls):
        vals = []
        for s in names:
            hit = [r["fraction_of_read_ceiling"] for r in res["rows"]
                   if r["shape"] == s and r["impl"] == impl and r["role"] == "matrix" and "median_us" in r]
            vals.append(hit[0] if hit else 0.0)
        ax.bar([j + i * width for j in range(len(names))], vals, width, label=impl)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(names))], names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("fraction of read ceiling")
    ax.axhline(BAR_LARGE_FRACTION, color="gray", linestyle="--", linewidth=1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = f"{stem}-shapes.png"
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    files.append(name)
    return files


def eager_section(res: dict) -> list[str]:
    """Every timed matrix row as graph replay and as eager calls (host path included)."""
    lines = ["## Graph replay and eager calls (microseconds per call)", "",
             "Graph: CUDA-graph replay, the device time alone. Eager: back-to-back calls without a graph "
             "between two CUDA events, so a host path longer than the kernel shows.", "",
             columns({"impl": None, "splits": MATRIX_ROW + ".num_splits", "graph us": MATRIX_ROW + ".median_us",
                      "eager us": MATRIX_ROW + ".eager_median_us",
                      "eager / graph": {"divide": [MATRIX_ROW + ".eager_median_us", MATRIX_ROW + ".median_us"]}}),
             "| shape | impl | splits | graph us | eager us | eager / graph |", "|---|---|---|---|---|---|"]
    rows = [r for r in res["rows"] if r.get("role") == "matrix" and "median_us" in r]
    for r in rows:
        eager = r.get("eager_median_us")
        lines.append(f"| {r['shape']} | {r['impl']} | {'-' if r['num_splits'] is None else r['num_splits']} | "
                     f"{r['median_us']:.2f} | "
                     f"{'-' if eager is None else format(eager, '.2f')} | "
                     f"{'-' if eager is None else format(eager / r['median_us'], '.2f')} |")
    if not rows:
        lines.append("| - | - | - | - | - | - |")
    return lines


def host_overhead_section(res: dict) -> list[str]:
    """Host time per call of each entry point next to torch SDPA's (`validation.bench.host_overhead`)."""
    host = res.get("host_overhead")
    lines = ["## Host time per call (microseconds, no synchronization)", ""]
    if not host:
        return lines + ["(Not measured in this artifact.)"]
    lines += [f"Shape {host['shape']}, {host['device']}, real launches; medians over rounds of back-to-back "
              f"calls. Plans launched directly (recorded launcher call): {host.get('direct_launch_plans', '-')} "
              f"of {host.get('plans', '-')}.", "",
              columns({"median us": "host_overhead.entries.{row}.median_us",
                       "min us": "host_overhead.entries.{row}.min_us"}, row="entry point",
                      rows_of="host_overhead.entries"),
              "| entry point | median us | min us |", "|---|---|---|"]
    lines += [f"| {name} | {t['median_us']:.2f} | {t['min_us']:.2f} |" for name, t in host["entries"].items()]
    return lines


def render(artifact: dict, artifact_path: str, images: list[str], sha256: str) -> str:
    """The page; `sha256` is the SHA-256 of the artifact file (the page declares it on its first line)."""
    res = artifact["results"]
    env = artifact["environment"]
    ceil = res["ceilings"]
    lines = [
        page_declaration(artifact, artifact_path, sha256),
        "",
        "# Split-KV decode attention on an NVIDIA H200: kernel-level results",
        "",
        f"Evidence: `{artifact_path}` (id `{artifact['id']}`, created {artifact['created']}, "
        f"commit `{artifact.get('commit')}`). Command: `{artifact['command']}`.",
        "",
        f"Device {env.get('device')} ({env.get('sm_count')} SMs), driver {env.get('driver')}, "
        f"torch {env.get('torch')}, triton {env.get('triton')}, CUDA {env.get('cuda')}, Python {env.get('python')}.",
        "",
        "All numbers are kernel-level: device time per call of one decode-attention call (bf16, "
        "every context token visible), medians over the samples in the artifact.",
        "",
        "## Method",
        "",
        "- Correctness first: every implementation's output is compared with the fp64 oracle "
        "(`validation.oracle:decode_attention_fp64`) on the same inputs before it is timed; ours must pass "
        "(rel L2 and min cosine bounds in the artifact), and the bitwise anchors split(1) == single pass and "
        "paged == contiguous are checked on each shape.",
        f"- Ceilings in the same run: read {ceil['read']['TBps']:.3f} TB/s (a read-only Triton kernel over "
        f"{ceil['read']['bytes'] >> 30} GiB), copy {ceil['copy']['TBps']:.3f} TB/s (read + write bytes).",
        "- Timing: each call is captured many times into one CUDA graph and replayed; elapsed time over calls "
        "is a sample. Shapes under 64 MB of KV replay back to back (warm L2); larger shapes start every call "
        "after a 256 MB read-only pass (cold L2, no dirty lines), whose own time is measured the same way and "
        "subtracted. Peers are timed the same way in the same process.",
        "- Ours is what `DecodeAttention` runs with the switch on: the project's `attention_decode_splitkv` at "
        "the split count of `kernels.decode_layer.layer_num_splits` (the layer's heuristic), or "
        "`attention_decode` where that count is 1; paged is the same route over a block-16 cache with a "
        "shuffled block table.",
        "",
        "## Results",
        "",
        columns(summary_columns(res), rows_of="summary"),
        markdown_table(artifact),
        "",
        "Columns: ours and best peer in microseconds; ratio = ours / best peer; of ceiling = KV bytes / time "
        "over the read ceiling; read us = the read kernel over exactly the shape's KV bytes, timed the same "
        "way (what streaming the cache alone costs under this method); paged x = paged / contiguous; vs single = single-pass time / ours; "
        "splits h/best = the heuristic's split count / the fastest count of the sweep over 1, 2, 4, ..., 128, "
        "each timed as the layer runs it (one split: the single pass).",
        "",
        columns({"bar": {"key": "summary.{row}.size_class", "choices": BAR_TEXT},
                 "checks": {"checks": "summary.{row}.checks"}}, rows_of="summary"),
        "| shape | bar | checks |",
        "|---|---|---|",
    ]
    for name, e in res["summary"].items():
        checks = ", ".join(f"{k}: {'pass' if v else 'FAIL'}" for k, v in e["checks"].items()) or "-"
        lines.append(f"| {name} | {_bar_text(e)} | {checks} |")
    lines += ["", *eager_section(res), "", *host_overhead_section(res)]
    lines += ["", "## Split sweep (ours, microseconds)", "",
              "The split route at each count; at 1 that is the split kernel with one split (the bitwise "
              "anchor). The layer runs the single pass when its heuristic chooses 1, so the heuristic check "
              "takes the single pass's time for that count.", "",
              columns({str(s): f"summary.{{row}}.sweep_us.{s}" for s in (1, 2, 4, 8, 16, 32, 64, 128)},
                      rows_of="summary"),
              "| shape | " + " | ".join(str(s) for s in (1, 2, 4, 8, 16, 32, 64, 128)) + " |",
              "|---|" + "---|" * 8]
    for name, e in res["summary"].items():
        sweep = {int(k): v for k, v in e.get("sweep_us", {}).items()}
        lines.append(f"| {name} | " + " | ".join(f"{sweep[s]:.2f}" if s in sweep else "-"
                                                  for s in (1, 2, 4, 8, 16, 32, 64, 128)) + " |")
    skipped: dict[str, dict[str, list[str]]] = {}
    for shape_name, m in res["shapes"].items():
        for peer, why in m.get("peers_skipped", {}).items():
            skipped.setdefault(peer, {}).setdefault(why, []).append(shape_name)
    if skipped:
        lines += ["", "Peers not run:"]
        lines += [f"- {peer}: {why} ({', '.join(shapes)})" for peer, reasons in sorted(skipped.items())
                  for why, shapes in reasons.items()]
    lines += ["", "## Bitwise anchors on the benchmark inputs", "",
              columns({"anchor": None, "equal": {"key": "shapes.{shape}.anchors.{anchor}", "choices": YES_NO}}),
              "| shape | anchor | equal |", "|---|---|---|"]
    for shape_name, m in res["shapes"].items():
        lines += [f"| {shape_name} | {a} | {'yes' if ok else 'NO'} |" for a, ok in m.get("anchors", {}).items()]
    if images:
        lines += ["", "## Plots", ""] + [f"![{img}]({img})" for img in images]
    else:
        lines += ["", "(Plots need matplotlib, which was not importable when this report was written.)"]
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.bench.report")
    p.add_argument("artifact", type=Path)
    p.add_argument("--out", type=Path, required=True, help="Markdown file to write (plots go beside it)")
    args = p.parse_args(argv)
    try:
        artifact = load(args.artifact)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    images = plots(artifact, args.out.parent, args.out.stem)
    sha256 = hashlib.sha256(args.artifact.read_bytes()).hexdigest()
    args.out.write_text(render(artifact, args.artifact.as_posix(), images, sha256))
    print(f"wrote {args.out}" + (f" and {', '.join(images)}" if images else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
