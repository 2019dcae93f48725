"""G3 numeric suite: every route of the kernels against the fp64 oracle, bf16 and fp16,
and over int8 / FP8 caches (recorded as "<dtype>-int8" and "<dtype>-fp8").

Each case must meet the dtype's absolute tolerance and the FlashAttention-style bound
against torch in the same dtype (validation/tolerances.py). Inputs are seeded; cache
slots, pages and output elements that must not be touched are NaN/Inf-poisoned.
"""

from functools import lru_cache

import pytest
import torch

from kernels.decode_attention.reference import decode_attention_reference
from validation.environment import device
from validation.fixtures import build_fixture
from validation.metrics import compare
from validation.oracle import decode_attention_fp64
from validation.quantized import QUANT_CPU_CASES, QUANT_GPU_CASES, QUANT_ROUTES, build_quant_fixture, run_quant_route
from validation.routes import NUMERIC_ROUTES, run_route
from validation.shapes import CPU_CASES, GPU_CASES, MODEL_CASES
from validation.tolerances import TORCH_DTYPES, tolerance_for, violations

CASES = CPU_CASES + (GPU_CASES + MODEL_CASES if device() == "cuda" else ())
QUANT_CASES = QUANT_CPU_CASES + (QUANT_GPU_CASES if device() == "cuda" else ())
DTYPES = ("bf16", "fp16")


@lru_cache(maxsize=4)
def fixture_and_references(case, dtype):
    fx = build_fixture(case, dtype, device())
    expected = decode_attention_fp64(fx.q, fx.k_cache, fx.v_cache, fx.visible_tokens)
    same_dtype = decode_attention_reference(
        fx.q.cpu(), fx.k_cache.cpu(), fx.v_cache.cpu(), fx.visible_tokens.cpu(), compute_dtype=TORCH_DTYPES[dtype]
    )
    return fx, fx.sha256(), expected, compare(same_dtype, expected)


@pytest.mark.parametrize("route", NUMERIC_ROUTES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_output_matches_fp64_oracle(case, dtype, route, evidence):
    fx, fixture_sha, expected, reference_metrics = fixture_and_references(case, dtype)
    out = run_route(fx, route)
    metrics = compare(out, expected)
    problems = violations(metrics, reference_metrics, tolerance_for(dtype), expected.abs().max().item())
    evidence.record_numeric(dtype, metrics, not problems, fx.key, fixture_sha)
    assert not problems, f"{fx.key} {route}: " + "; ".join(problems)


def test_poisoned_output_is_fully_written():
    fx = build_fixture(CPU_CASES[1], "bf16", device())
    out = fx.poisoned_out()
    run_route(fx, NUMERIC_ROUTES[3], out=out)
    assert torch.isfinite(out).all(), "some output elements kept their NaN poison"


@lru_cache(maxsize=2)
def quant_fixture_and_references(qcase):
    """The quantized fixture, the fp64 oracle over its dequantized cache, and the same-dtype
    torch reference over that cache rounded to q's dtype (the bound's yardstick)."""
    fx = build_quant_fixture(qcase, device())
    k, v = fx.dequantized(paged=False)
    expected = decode_attention_fp64(fx.q, k, v, fx.visible_tokens)
    torch_dtype = TORCH_DTYPES[qcase.dtype]
    same_dtype = decode_attention_reference(
        fx.q.cpu(), k.cpu().to(torch_dtype), v.cpu().to(torch_dtype), fx.visible_tokens.cpu(), compute_dtype=torch_dtype
    )
    return fx, fx.sha256(), expected, compare(same_dtype, expected)


@pytest.mark.parametrize("route", QUANT_ROUTES, ids=str)
@pytest.mark.parametrize("qcase", QUANT_CASES, ids=str)
def test_quantized_cache_output_matches_fp64_oracle_of_dequantized_cache(qcase, route, evidence):
    fx, fixture_sha, expected, reference_metrics = quant_fixture_and_references(qcase)
    out = run_quant_route(fx, route)
    metrics = compare(out, expected)
    problems = violations(metrics, reference_metrics, tolerance_for(qcase.dtype), expected.abs().max().item())
    evidence.record_numeric(f"{qcase.dtype}-{qcase.family}", metrics, not problems, fx.key, fixture_sha)
    assert not problems, f"{fx.key} {route}: " + "; ".join(problems)
