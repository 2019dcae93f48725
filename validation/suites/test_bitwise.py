"""G4 bitwise suite: byte-equality anchors between routes, and output fingerprints.

A1 split(num_splits=1) == single pass; A2 paged == contiguous for every num_splits;
A3 a request alone == the same request inside its batch; A4 run-to-run; A5 (CUDA)
graph replay == eager. Fingerprints compare output SHA-256s with
validation/fingerprints.json for this backend. Quantized caches (int8 / FP8) hold A1-A3
and A5 too, and have fingerprints of their own keys (ending in the cache format).
"""

from functools import lru_cache

import pytest
import torch

from kernels import LayerWorkspace
from validation.anchors import bytes_equal, describe_difference
from validation.environment import backend_key, device
from validation.fingerprints import fingerprint_targets, load_committed, quant_fingerprint_targets
from validation.fixtures import build_fixture, tensor_sha256
from validation.quantized import QUANT_CPU_CASES, QUANT_GPU_CASES, build_quant_fixture, run_quant_route
from validation.routes import Route, run_route
from validation.shapes import CPU_CASES, GPU_CASES, SPLIT_COUNTS

CASES = CPU_CASES + (GPU_CASES if device() == "cuda" else ())
DTYPES = ("bf16", "fp16")
BATCHED = tuple(case for case in CASES if case.batch > 1)
PAGINGS = (False, True)
QUANT_CASES = QUANT_CPU_CASES + (QUANT_GPU_CASES if device() == "cuda" else ())
QUANT_SPLITS = (None, 1, 5)


@lru_cache(maxsize=4)
def fixture(case, dtype):
    fx = build_fixture(case, dtype, device())
    return fx, fx.sha256()


@lru_cache(maxsize=64)
def output(case, dtype, route):
    return run_route(fixture(case, dtype)[0], route)


def replayed_and_eager(run, fx, case, route):
    """(the output of a CUDA-graph replay of `route` into a NaN-filled buffer, the eager output)."""
    workspace = LayerWorkspace(case.batch, case.rows, case.num_q_heads, case.head_dim, route.num_splits, fx.q.device)
    eager = run(fx, route, workspace=workspace)
    out = fx.poisoned_out()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run(fx, route, out=out, workspace=workspace)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run(fx, route, out=out, workspace=workspace)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    return out, eager


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
    out, eager = replayed_and_eager(run_route, fx, case, route)
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


@lru_cache(maxsize=2)
def quant_fixture(qcase):
    fx = build_quant_fixture(qcase, device())
    return fx, fx.sha256()


@lru_cache(maxsize=32)
def quant_output(qcase, route):
    return run_quant_route(quant_fixture(qcase)[0], route)


@pytest.mark.parametrize("qcase", QUANT_CASES, ids=str)
def test_quantized_A1_A2_split1_equals_single_and_paged_equals_contiguous(qcase, evidence):
    fx, sha = quant_fixture(qcase)
    for paged in PAGINGS:
        single = quant_output(qcase, Route(paged=paged))
        split1 = quant_output(qcase, Route(paged=paged, num_splits=1))
        check_anchor(evidence, "A1-split1-equals-single-pass", fx.key, sha, split1, single, f"paged={paged}")
    for num_splits in QUANT_SPLITS:
        contig = quant_output(qcase, Route(paged=False, num_splits=num_splits))
        paged = quant_output(qcase, Route(paged=True, num_splits=num_splits))
        check_anchor(evidence, "A2-paged-equals-contiguous", fx.key, sha, paged, contig, f"num_splits={num_splits}")


@pytest.mark.parametrize("qcase", tuple(c for c in QUANT_CASES if c.case.batch > 1), ids=str)
def test_quantized_A3_request_alone_equals_request_in_batch(qcase, evidence):
    fx, sha = quant_fixture(qcase)
    for route in (Route(paged=False), Route(paged=True, num_splits=5)):
        batched = quant_output(qcase, route)
        for b in range(qcase.case.batch):
            alone = run_quant_route(fx.request(b), route)
            check_anchor(evidence, "A3-request-alone-equals-in-batch", fx.key, sha, alone[0], batched[b],
                         f"{route} request {b}")


@pytest.mark.skipif(device() != "cuda", reason="CUDA graphs need a GPU")
@pytest.mark.parametrize("paged", PAGINGS, ids=["contig", "paged"])
@pytest.mark.parametrize("qcase", QUANT_CASES, ids=str)
def test_quantized_A5_graph_replay_equals_eager(qcase, paged, evidence):
    fx, sha = quant_fixture(qcase)
    route = Route(paged=paged, num_splits=5)
    out, eager = replayed_and_eager(run_quant_route, fx, qcase.case, route)
    check_anchor(evidence, "A5-graph-replay-equals-eager", fx.key, sha, out, eager, str(route))


@pytest.mark.parametrize("target", list(quant_fingerprint_targets()), ids=lambda t: t[0])
def test_quantized_output_fingerprint_is_unchanged(target, evidence):
    key, qcase, route = target
    fx, sha = quant_fixture(qcase)
    actual = tensor_sha256(quant_output(qcase, route))
    expected = load_committed().get(backend_key(), {}).get(key)
    evidence.record_fingerprint(key, actual, None if expected is None else actual == expected, fx.key, sha)
    if expected is None:
        pytest.skip(f"no committed fingerprint for {key} on {backend_key()}; record with python -m validation.fingerprints --update")
    assert actual == expected, f"{key} on {backend_key()}: output bits changed ({expected[:12]} -> {actual[:12]})"
