"""G4 bitwise suite: byte-equality anchors between routes, and output fingerprints.

A1 split(num_splits=1) == single pass; A2 paged == contiguous for every num_splits;
A3 a request alone == the same request inside its batch; A4 run-to-run; A5 (CUDA)
graph replay == eager. Fingerprints compare output SHA-256s with
validation/fingerprints.json for this backend.
"""

from functools import lru_cache

import pytest
import torch

from kernels import LayerWorkspace
from validation.anchors import bytes_equal, describe_difference
from validation.environment import backend_key, device
from validation.fingerprints import fingerprint_targets, load_committed
from validation.fixtures import build_fixture, tensor_sha256
from validation.routes import Route, run_route
from validation.shapes import CPU_CASES, GPU_CASES, SPLIT_COUNTS

CASES = CPU_CASES + (GPU_CASES if device() == "cuda" else ())
DTYPES = ("bf16", "fp16")
BATCHED = tuple(case for case in CASES if case.batch > 1)
PAGINGS = (False, True)


@lru_cache(maxsize=4)
def fixture(case, dtype):
    fx = build_fixture(case, dtype, device())
    return fx, fx.sha256()


@lru_cache(maxsize=64)
def output(case, dtype, route):
    return run_route(fixture(case, dtype)[0], route)


def check_anchor(evidence, anchor, fx_key, fx_sha, a, b, what):
    same = bytes_equal(a, b)
    evidence.record_anchor(anchor, same, fx_key, fx_sha)
    assert same, f"{anchor} {fx_key} {what}: {describe_difference(a, b)}"


@pytest.mark.parametrize("paged", PAGINGS, ids=["contig", "paged"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_A1_split_with_one_split_equals_single_pass(case, dtype, paged, evidence):
    fx, sha = fixture(case, dtype)
    single = output(case, dtype, Route(paged=paged))
    split = output(case, dtype, Route(paged=paged, num_splits=1))
    check_anchor(evidence, "A1-split1-equals-single-pass", fx.key, sha, split, single, "split1 vs single")


@pytest.mark.parametrize("num_splits", (None,) + SPLIT_COUNTS, ids=lambda n: "single" if n is None else f"split{n}")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_A2_paged_equals_contiguous(case, dtype, num_splits, evidence):
    fx, sha = fixture(case, dtype)
    contig = output(case, dtype, Route(paged=False, num_splits=num_splits))
    paged = output(case, dtype, Route(paged=True, num_splits=num_splits))
    check_anchor(evidence, "A2-paged-equals-contiguous", fx.key, sha, paged, contig, f"num_splits={num_splits}")


@pytest.mark.parametrize("route", (Route(paged=False), Route(paged=True, num_splits=5)), ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BATCHED, ids=str)
def test_A3_request_alone_equals_request_in_batch(case, dtype, route, evidence):
    fx, sha = fixture(case, dtype)
    batched = output(case, dtype, route)
    for b in range(case.batch):
        alone = run_route(fx.request(b), route)
        check_anchor(evidence, "A3-request-alone-equals-in-batch", fx.key, sha, alone[0], batched[b], f"{route} request {b}")


@pytest.mark.parametrize("route", (Route(paged=False), Route(paged=True, num_splits=5)), ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_A4_run_to_run(case, dtype, route, evidence):
    fx, sha = fixture(case, dtype)
    first = output(case, dtype, route)
    again = run_route(fx, route)
    check_anchor(evidence, "A4-run-to-run", fx.key, sha, again, first, str(route))


@pytest.mark.skipif(device() != "cuda", reason="CUDA graphs need a GPU")
@pytest.mark.parametrize("paged", PAGINGS, ids=["contig", "paged"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_A5_graph_replay_equals_eager(case, dtype, paged, evidence):
    fx, sha = fixture(case, dtype)
    route = Route(paged=paged, num_splits=5)
    workspace = LayerWorkspace(case.batch, case.rows, case.num_q_heads, case.head_dim, 5, fx.q.device)
    eager = run_route(fx, route, workspace=workspace)
    out = fx.poisoned_out()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run_route(fx, route, out=out, workspace=workspace)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run_route(fx, route, out=out, workspace=workspace)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check_anchor(evidence, "A5-graph-replay-equals-eager", fx.key, sha, out, eager, str(route))


@pytest.mark.parametrize("target", list(fingerprint_targets()), ids=lambda t: t[0])
def test_output_fingerprint_is_unchanged(target, evidence):
    key, case, dtype, route = target
    fx, sha = fixture(case, dtype)
    actual = tensor_sha256(output(case, dtype, route))
    expected = load_committed().get(backend_key(), {}).get(key)
    evidence.record_fingerprint(key, actual, None if expected is None else actual == expected, fx.key, sha)
    if expected is None:
        pytest.skip(f"no committed fingerprint for {key} on {backend_key()}; record with python -m validation.fingerprints --update")
    assert actual == expected, (
        f"{key} on {backend_key()}: output bits changed ({expected[:12]} -> {actual[:12]}); if intended, decide it in the "
        "design record and refresh with python -m validation.fingerprints --update"
    )
