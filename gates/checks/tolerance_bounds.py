"""What a numeric tolerance may say: sane on its own, and no looser than the policy's ceilings.

A record's author picks its own tolerances, so G3 does not take them on trust. Each
metric has a direction: an error metric (`rel_l2`, `max_abs`) is bounded from above
by a finite `max` > 0 (below 1 for `rel_l2`, which an all-zero output
reaches); a similarity metric (`min_cosine`) from below by a `min` in
(0, 1]. A metric G3 does not know is accepted only when the policy's ceilings name
it (the ceiling's bound gives its direction). The ceilings come from
`ceilings.tolerances` of the policy that judges the run (read at the base commit
with `--base`), as `{metric, dtype?, max?, min?}`; one without a dtype holds for
every dtype.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ERROR_METRICS = ("rel_l2", "max_abs")
SIMILARITY_METRICS = ("min_cosine",)


@dataclass(frozen=True)
class Ceiling:
    metric: str
    dtype: str | None
    bound: str  # "max" or "min"
    value: float

    def applies_to(self, metric: str, dtype: str) -> bool:
        return self.metric == metric and self.dtype in (None, dtype)

    def allows(self, value) -> bool:
        return value <= self.value if self.bound == "max" else value >= self.value

    def describe(self, policy_path: str) -> str:
        scope = f"{self.dtype} " if self.dtype else ""
        sign = "≤" if self.bound == "max" else "≥"
        return f"the ceiling {scope}{self.metric} {sign} {number_text(self.value)} in {policy_path}"


def ceilings_of(policy) -> list[Ceiling]:
    """The tolerance ceilings of `policy` (a `gates.model.policy.Policy` or None)."""
    if policy is None:
        return []
    found = []
    for entry in policy.section("ceilings").get("tolerances") or []:
        for bound in ("max", "min"):
            if isinstance(entry, dict) and bound in entry:
                found.append(Ceiling(entry["metric"], entry.get("dtype"), bound, entry[bound]))
    return found


def number_text(value) -> str:
    """A number for a message; a huge integer is abbreviated instead of overflowing."""
    try:
        return f"{value:g}"
    except (OverflowError, TypeError, ValueError):
        text = str(value)
        return text if len(text) <= 24 else f"{text[:12]}…({len(text)} digits)"


def is_finite_number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def direction_of(metric: str, ceilings: list[Ceiling]) -> str | None:
    """"max" for an error metric, "min" for a similarity metric, None when unknown."""
    if metric in ERROR_METRICS:
        return "max"
    if metric in SIMILARITY_METRICS:
        return "min"
    bounds = {c.bound for c in ceilings if c.metric == metric}
    return bounds.pop() if len(bounds) == 1 else None


def tolerance_problems(tolerance: dict, ceilings: list[Ceiling], policy_path: str) -> list[str]:
    """Why the declared `tolerance` ({metric, dtype, max | min}) is refused (empty when it is sound)."""
    metric, dtype = tolerance.get("metric"), tolerance.get("dtype")
    bounds = [b for b in ("max", "min") if b in tolerance]
    if len(bounds) != 1:
        return ["a tolerance sets exactly one of max or min"]
    bound = bounds[0]
    value = tolerance[bound]
    if not is_finite_number(value):
        return [f"{dtype} {metric} {bound} = {number_text(value)} is not a finite number"]
    direction = direction_of(metric, ceilings)
    if direction is None:
        return [f"G3 does not know which way {metric!r} improves: use {', '.join(ERROR_METRICS)} (bounded by max) "
                f"or {', '.join(SIMILARITY_METRICS)} (bounded by min), or give {metric!r} a ceiling in {policy_path}"]
    if bound != direction:
        return [f"{metric} is bounded by {direction}, not {bound}: a {bound} on it holds for any kernel"]
    problems = []
    if metric in ERROR_METRICS and not value > 0:
        problems.append(f"{dtype} {metric} max = {number_text(value)} cannot hold for a rounded result; it must be > 0 "
                        "(where the output must equal a reference exactly, as a copy or a pad does, declare a bitwise "
                        "anchor for it instead)")
    if metric == "rel_l2" and value >= 1:
        problems.append(f"{dtype} rel_l2 max = {number_text(value)} holds for an all-zero output "
                        "(its rel_l2 is 1); it must be < 1")
    if metric in SIMILARITY_METRICS and not 0 < value <= 1:
        problems.append(f"{dtype} {metric} min = {number_text(value)} is outside (0, 1]: a cosine is at most 1, "
                        "and a bound at or below 0 holds for unrelated outputs")
    for ceiling in ceilings:
        if ceiling.applies_to(metric, dtype) and ceiling.bound == bound and not ceiling.allows(value):
            problems.append(f"{dtype} {metric} {bound} = {number_text(value)} is looser than "
                            f"{ceiling.describe(policy_path)}")
    return problems
