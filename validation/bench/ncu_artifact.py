"""Turn an `ncu --csv --page raw` report into a `profile` evidence artifact.

    python -m validation.bench.ncu_artifact report.csv --id ncu-single-pass-h200 \\
        --kernel decode_attention_partial_kernel --command "<the ncu command>" --out docs/evidence/ncu-single-pass-h200.json
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from .environment import environment, git_commit, now_utc, source_hashes, source_tokens

METRICS = (
    "launch__grid_size", "launch__block_size", "launch__registers_per_thread",
    "launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static",
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__waves_per_multiprocessor",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "gpu__time_duration.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "lts__t_sector_hit_rate.pct",
)


def _number(text: str):
    t = text.replace(",", "").strip()
    try:
        return int(t)
    except ValueError:
        try:
            return float(t)
        except ValueError:
            return None


def parse_raw_csv(text: str) -> list[dict]:
    """One dict per profiled kernel: `kernel`, `metrics` (name -> number), `units`."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    reader = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(reader) < 3:
        raise ValueError(f"no profiled kernel in the ncu report ({len(reader)} CSV lines)")
    header, units, data = reader[0], reader[1], reader[2:]
    kernels = []
    for row in data:
        rec = dict(zip(header, row))
        metrics = {h: _number(v) for h, v in rec.items() if "__" in h and _number(v) is not None}
        kernels.append({"kernel": rec.get("Kernel Name", ""), "metrics": metrics,
                        "units": {h: u for h, u in zip(header, units) if "__" in h and u}})
    return kernels


def build(text: str, *, artifact_id: str, kernel: str, command: str, shape: str) -> dict:
    kernels = [k for k in parse_raw_csv(text) if kernel in k["kernel"]]
    if not kernels:
        raise ValueError(f"the ncu report profiled no kernel named like {kernel!r}")
    k = kernels[-1]
    m = {name: value for name, value in k["metrics"].items() if name in METRICS}
    m["spill_bytes_local"] = m.get("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", 0) + \
        m.get("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", 0)
    sources = source_hashes()
    return {"schema_version": 1, "id": artifact_id, "kind": "profile", "created": now_utc(), "command": command,
            "environment": environment(), "commit": git_commit(), "sources": sources,
            "source_tokens": source_tokens(sources), "fixtures": {},
            "results": {"tool": "ncu", "kernel": k["kernel"], "shape": shape, "metrics": m,
                        "units": {name: unit for name, unit in k["units"].items() if name in METRICS}}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m validation.bench.ncu_artifact")
    p.add_argument("csv", type=Path)
    p.add_argument("--id", required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--shape", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        art = build(args.csv.read_text(), artifact_id=args.id, kernel=args.kernel, command=args.command,
                    shape=args.shape)
    except (OSError, ValueError) as exc:
        print(f"error: {args.csv}: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(json.dumps(art, indent=1) + "\n")
    print(json.dumps(art["results"]["metrics"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
