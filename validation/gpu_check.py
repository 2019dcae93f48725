"""One GPU session of checks: numeric and bitwise matrices, the capture check, and a short
timing of the routes (CUDA-graph replay, warm L2: a sanity check, not the benchmark), with the artifacts written to one folder and a table printed last.

    python -m validation.gpu_check --out-dir "$OUT"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .artifacts import COMMIT_ENV

ARTIFACTS = {
    "numeric": "numeric-matrix-h200.json",
    "bitwise": "bitwise-matrix-h200.json",
    "capture": "capture-splitkv-h200.json",
}
TIMING_SHAPES = ((1, 14, 2, 64, 2048), (8, 32, 8, 128, 8192), (32, 32, 8, 128, 4096))


def _suite(kind: str, out_dir: Path) -> subprocess.Popen:
    log = open(out_dir / f"{kind}.log", "w")
    cmd = [sys.executable, "-m", "validation.run_suite", kind, "--out", str(out_dir / ARTIFACTS[kind]), "--", "-rfE"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    proc.log_path = out_dir / f"{kind}.log"
    return proc


def _timings() -> list[tuple]:
    import torch
    import triton

    import kernels

    rows = []
    for batch, hq, hkv, d, s in TIMING_SHAPES:
        q = torch.randn(batch, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(batch, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        visible = torch.full((batch,), s, dtype=torch.int32, device="cuda")
        out = torch.empty_like(q)
        kv_bytes = 2 * k.numel() * k.element_size()
        for num_splits in (None, 4, 16, 32):
            if num_splits is None:
                fn = lambda: kernels.attention_decode(q, k, v, visible, out=out)  # noqa: E731
            else:
                ws = kernels.LayerWorkspace(batch, 1, hq, d, num_splits, q.device)
                fn = lambda ws=ws, n=num_splits: kernels.attention_decode_splitkv(q, k, v, visible, num_splits=n, workspace=ws, out=out)  # noqa: E731
            fn()
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                fn()
            us = triton.testing.do_bench(graph.replay, warmup=25, rep=100, return_mode="median") * 1e3
            rows.append((f"B{batch}-Hq{hq}-Hkv{hkv}-D{d}-S{s}", "single" if num_splits is None else f"split{num_splits}", us, kv_bytes / us / 1e6))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.gpu_check")
    parser.add_argument("--out-dir", default=os.environ.get("OUT", ".out"))
    parser.add_argument("--commit", default=None, help="commit to record in the artifacts when the tree has no .git")
    args = parser.parse_args(argv)
    if args.commit:
        os.environ[COMMIT_ENV] = args.commit
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.time()
    procs = {kind: _suite(kind, out_dir) for kind in ("numeric", "bitwise")}
    codes = {kind: proc.wait() for kind, proc in procs.items()}
    for kind, proc in procs.items():
        print(f"== {kind} (exit {codes[kind]}) last lines:")
        print("\n".join(proc.log_path.read_text().splitlines()[-12:]))
    capture = subprocess.run([sys.executable, "-m", "validation.capture", "--out", str(out_dir / ARTIFACTS["capture"])], capture_output=True, text=True)
    codes["capture"] = capture.returncode
    print("== capture:", capture.stdout[-3000:], capture.stderr[-3000:])
    try:
        timing = _timings()
    except Exception as exc:  # timing is informative only; the checks above decide
        timing = []
        print(f"timing failed: {exc}")
    print(f"\nwall {time.time() - start:.0f}s")
    print("\n| shape | route | us | KV TB/s |\n|---|---|---|---|")
    for shape, route, us, tbps in timing:
        print(f"| {shape} | {route} | {us:.2f} | {tbps:.3f} |")
    print("\n| check | exit | summary |\n|---|---|---|")
    for kind, name in ARTIFACTS.items():
        path = out_dir / name
        summary = "no artifact"
        if path.exists():
            results = json.loads(path.read_text())["results"]
            if kind == "numeric":
                summary = f"passed={results['passed']} " + " ".join(
                    f"{dt}: rel_l2={v['rel_l2']:.3e} max_abs={v['max_abs']:.3e} min_cos={v['min_cosine']:.7f} n={v['cases']}"
                    for dt, v in results["per_dtype"].items()
                )
            elif kind == "bitwise":
                summary = f"passed={results['passed']} backend={results['backend']} " + " ".join(
                    f"{a}={v['passed']}/{v['cases']}" for a, v in results["anchors"].items()
                )
            else:
                summary = f"passed={results['passed']} allocations={results['allocations']} host_syncs={results['host_syncs']} replay==eager={results['replay_equals_eager']}"
        print(f"| {kind} | {codes.get(kind)} | {summary} |")
    return 0 if all(c == 0 for c in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
