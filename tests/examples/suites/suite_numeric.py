"""Example numeric suite: split sums against the fp64 oracle (math.fsum)."""

import math

import pytest
from cases import identity, rows

from examplepkg.ops import split_sum


@pytest.mark.parametrize("num_splits", [1, 4, 7])
def test_split_sum_within_tolerance_of_fp64_oracle(num_splits, evidence):
    data = rows()
    outputs = [split_sum(row, num_splits) for row in data]
    oracle = [math.fsum(row) for row in data]
    err = math.sqrt(sum((o - r) ** 2 for o, r in zip(outputs, oracle)))
    rel_l2 = err / math.sqrt(sum(r * r for r in oracle))
    cosine = sum(o * r for o, r in zip(outputs, oracle)) / math.sqrt(sum(o * o for o in outputs) * sum(r * r for r in oracle))
    max_abs = max(abs(o - r) for o, r in zip(outputs, oracle))
    evidence["kind"] = "numeric"
    evidence["fixtures"]["rows-16x1001-seed20261129"] = identity(data)
    fp32 = evidence["results"].setdefault("per_dtype", {}).setdefault("fp32", {"rel_l2": 0.0, "max_abs": 0.0, "min_cosine": 1.0, "cases": 0})
    fp32["rel_l2"] = max(fp32["rel_l2"], rel_l2)
    fp32["max_abs"] = max(fp32["max_abs"], max_abs)
    fp32["min_cosine"] = min(fp32["min_cosine"], cosine)
    fp32["cases"] += len(data)
    assert rel_l2 <= 1e-6, f"rel_l2 {rel_l2:.3e} exceeds 1e-6"
