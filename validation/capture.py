"""Capture check (CUDA): the split path with a workspace records into a CUDA graph with
zero allocations and zero host synchronizations, and replay equals eager, also after the
visible counts change on the device between replays.

    python -m validation.capture --out docs/evidence/capture-splitkv-h200.json
"""

from __future__ import annotations

import argparse
import sys

import torch

from .anchors import bytes_equal, describe_difference
from .artifacts import artifact_id_for, build_artifact, write_artifact
from .fixtures import build_fixture
from .routes import Route, run_route
from .shapes import GPU_CASES, Case

CAPTURE_CASES = (Case(4, 1, 32, 8, 128, (4097, 1000, 1, 0), seed=21), GPU_CASES[1])
NUM_SPLITS = 8


def _allocations() -> int:
    return int(torch.cuda.memory_stats().get("allocation.all.allocated", 0))


def capture_one(case: Case, dtype: str, paged: bool) -> dict:
    """Capture one split call into a graph; count allocations and host syncs during capture."""
    from kernels import LayerWorkspace

    fx = build_fixture(case, dtype, "cuda")
    route = Route(paged=paged, num_splits=NUM_SPLITS)
    workspace = LayerWorkspace(case.batch, case.rows, case.num_q_heads, case.head_dim, NUM_SPLITS, fx.q.device)
    out = fx.poisoned_out()
    eager = run_route(fx, route, workspace=workspace)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    result = {"captured": False, "allocations": 0, "host_syncs": 0, "error": None}
    with torch.cuda.graph(graph):
        before = _allocations()
        torch.cuda.set_sync_debug_mode("error")
        try:
            run_route(fx, route, out=out, workspace=workspace)
            result["captured"] = True
        except RuntimeError as exc:
            result["error"] = str(exc).splitlines()[0]
            result["host_syncs"] += int("synchroniz" in str(exc))
        finally:
            torch.cuda.set_sync_debug_mode(0)
            result["allocations"] = _allocations() - before
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    result["replay_equals_eager"] = bytes_equal(out, eager)
    if not result["replay_equals_eager"]:
        result["error"] = describe_difference(out, eager)

    shorter = torch.clamp(fx.visible_tokens - 3, min=0)
    fx.visible_tokens.copy_(shorter)
    eager_shorter = run_route(fx, route, workspace=workspace)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    result["replay_after_visible_change_equals_eager"] = bytes_equal(out, eager_shorter)
    result["fixture"] = fx.key
    result["fixture_sha256"] = build_fixture(case, dtype, "cpu").sha256()
    return result


def run_capture_checks() -> tuple[dict, dict]:
    runs = {}
    for case in CAPTURE_CASES:
        for dtype in ("bf16", "fp16"):
            for paged in (False, True):
                runs[f"{case.id}-{dtype}-split{NUM_SPLITS}-{'paged' if paged else 'contig'}"] = capture_one(case, dtype, paged)
    results = {
        "captured": all(r["captured"] for r in runs.values()),
        "allocations": sum(r["allocations"] for r in runs.values()),
        "host_syncs": sum(r["host_syncs"] for r in runs.values()),
        "replay_equals_eager": all(r["replay_equals_eager"] and r["replay_after_visible_change_equals_eager"] for r in runs.values()),
        "runs": runs,
    }
    results["passed"] = results["captured"] and results["allocations"] == 0 and results["host_syncs"] == 0 and results["replay_equals_eager"]
    fixtures = {r["fixture"]: r["fixture_sha256"] for r in runs.values()}
    return results, fixtures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.capture", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("the capture check needs a CUDA device", file=sys.stderr)
        return 2
    results, fixtures = run_capture_checks()
    write_artifact(args.out, build_artifact(artifact_id=artifact_id_for(args.out), kind="capture", results=results, fixtures=fixtures))
    for key, run in results["runs"].items():
        print(f"{key}: captured={run['captured']} allocations={run['allocations']} host_syncs={run['host_syncs']} "
              f"replay==eager={run['replay_equals_eager']} after-visible-change={run['replay_after_visible_change_equals_eager']}"
              + (f" error={run['error']}" if run["error"] else ""))
    return 0 if results["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
