"""The `ci` tier of the numeric and bitwise suites: every case once, both dtypes across the cases."""

import pytest

from validation.routes import Route
from validation.shapes import CPU_CASES
from validation.suites.tiers import selected


def test_full_tier_runs_every_case_in_every_dtype():
    assert all(selected({"case": case, "dtype": dtype}, CPU_CASES, "full")
               for case in CPU_CASES for dtype in ("bf16", "fp16"))


def test_ci_tier_runs_each_case_in_exactly_one_dtype_and_both_dtypes_overall():
    chosen = {case: [d for d in ("bf16", "fp16") if selected({"case": case, "dtype": d}, CPU_CASES, "ci")]
              for case in CPU_CASES}
    assert all(len(dtypes) == 1 for dtypes in chosen.values())
    assert {dtypes[0] for dtypes in chosen.values()} == {"bf16", "fp16"}


def test_ci_tier_reads_fingerprint_targets_like_the_other_tests():
    case = CPU_CASES[0]
    kept = [d for d in ("bf16", "fp16")
            if selected({"target": (f"{case}-{d}", case, d, Route(paged=False))}, CPU_CASES, "ci")]
    assert kept == [d for d in ("bf16", "fp16") if selected({"case": case, "dtype": d}, CPU_CASES, "ci")]


def test_tests_without_a_case_run_in_every_tier():
    assert selected({}, CPU_CASES, "ci")


def test_an_unknown_tier_is_an_error():
    with pytest.raises(ValueError, match="unknown suite tier 'fast'"):
        selected({}, CPU_CASES, "fast")
