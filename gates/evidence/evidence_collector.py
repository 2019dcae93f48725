"""What a test session measured, turned into the `results` of a numeric or bitwise artifact.

`EvidenceCollector` holds the worst value of each metric per dtype, the bitwise
anchors, the fingerprints and the outcome of every measuring test (a test marked
`design_gates` or using one of the recording fixtures). `results(kind, exitstatus)`
gives the layout G3 and G4 read:

- numeric: `{"passed", "per_dtype": {dtype: {metric: worst, "cases": n}}, "worst_of": {metric: "max"|"min"},
  "tests", "errors"}` (`worst_of`: which end of the cases each value is)
- bitwise: `{"passed", "backend", "anchors": {name: {"passed", "cases"}}, "fingerprints", "tests", "errors"}`

`passed` is true only when the session exited 0, every measuring test of the kind
ran and passed (a skipped, xfailed or failed one is no pass), something was measured,
and nothing went wrong on the way (`errors` says what did).
"""

from __future__ import annotations

import math
import re

NUMERIC, BITWISE = "numeric", "bitwise"
KINDS = (NUMERIC, BITWISE)
HIGHER_IS_WORSE = frozenset({"rel_l2", "abs_l2", "l2", "mse", "rmse", "mae", "rel_err", "abs_err", "ulp_err"})
DTYPE_NAMES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
               "float64": "fp64", "double": "fp64", "float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2"}
ALL_DTYPES = "all"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def worst_direction(name: str, worst: str | None = None) -> str:
    """"max" when a larger value of metric `name` is worse, "min" when a smaller one is.

    The metric decides, not the test: a name starting with "min_" (min_cosine) is a floor, one
    starting with "max_" (max_abs) or a known error metric (rel_l2, mse, ...) a ceiling, and a
    `worst` that says otherwise is refused (the best case of an error metric is no bound). Only a
    metric whose name says neither takes its direction from `worst`.
    """
    if worst is not None and worst not in ("max", "min"):
        raise ValueError(f"worst must be 'max' or 'min', got {worst!r}")
    known = named_direction(name)
    if known is not None:
        if worst is not None and worst != known:
            raise ValueError(f"metric {name!r}: its worst value is its {'largest' if known == 'max' else 'smallest'} "
                             f"(worst={known!r}); worst={worst!r} would keep its best case")
        return known
    if worst is not None:
        return worst
    raise ValueError(f"metric {name!r}: say whether a larger or a smaller value is worse: name it min_... or "
                     f"max_..., or pass worst='max' or worst='min'")


def named_direction(name: str) -> str | None:
    """The direction a metric's name gives: "min" for min_..., "max" for max_... and known error metrics."""
    if name.startswith("min_"):
        return "min"
    if name.startswith("max_") or name in HIGHER_IS_WORSE:
        return "max"
    return None


def dtype_name(dtype) -> str:
    """A dtype key: a string as given, a torch/numpy dtype by its short name (torch.bfloat16 -> bf16)."""
    if dtype is None:
        return ALL_DTYPES
    if isinstance(dtype, str):
        if not dtype:
            raise ValueError("dtype must not be empty")
        return dtype
    text = str(dtype).rsplit(".", 1)[-1]
    return DTYPE_NAMES.get(text, text)


def _number(name: str, value) -> float:
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"metric {name!r} must be a number (or a one-element tensor), got {type(value).__name__}")
    return float(value)


class EvidenceCollector:
    """The measurements of one session; the fixtures and the plugin's hooks fill it in."""

    def __init__(self):
        self.metrics: dict[str, dict[str, dict]] = {}     # dtype -> metric -> {"worst", "direction"}
        self.cases: dict[str, set] = {}                      # dtype -> case ids
        self.anchors: dict[str, dict] = {}                   # name -> {"passed", "cases"}
        self.fingerprints: dict[str, str] = {}
        self.tests: dict[str, dict] = {}                     # nodeid -> {"kinds", "anchor", "outcome"}
        self.errors: list[tuple[str | None, str]] = []      # (kind, or None for every kind; message)

    def measuring(self, nodeid: str, kind: str, anchor: str | None = None) -> None:
        """Note that test `nodeid` measures for `kind` (its outcome then counts)."""
        entry = self.tests.setdefault(nodeid, {"kinds": set(), "anchor": None, "outcome": None})
        entry["kinds"].add(kind)
        if anchor:
            entry["anchor"] = anchor

    def record_metric(self, name: str, value, *, dtype=None, case: str, worst: str | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"metric name must be a non-empty string, got {name!r}")
        direction = worst_direction(name, worst)
        number = _number(name, value)
        key = dtype_name(dtype)
        entry = self.metrics.setdefault(key, {}).setdefault(name, {"worst": None, "direction": direction})
        if entry["direction"] != direction:
            raise ValueError(f"metric {name!r} for {key} was recorded with worst={entry['direction']!r} before")
        self.cases.setdefault(key, set()).add(case)
        if not math.isfinite(number):
            self.errors.append((NUMERIC, f"metric {name} for {key} is {number} in {case}"))
            entry["worst"] = number
        elif entry["worst"] is None or math.isfinite(entry["worst"]):
            pick = max if direction == "max" else min
            entry["worst"] = number if entry["worst"] is None else pick(entry["worst"], number)

    def record_anchor(self, name: str, equal: bool, *, cases: int = 1) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"anchor name must be a non-empty string, got {name!r}")
        if not isinstance(equal, bool):
            raise TypeError(f"anchor {name!r}: equal must be True or False, got {type(equal).__name__}")
        if isinstance(cases, bool) or not isinstance(cases, int) or cases < 1:
            raise ValueError(f"anchor {name!r}: cases must be an integer >= 1, got {cases!r}")
        entry = self.anchors.setdefault(name, {"passed": True, "cases": 0})
        entry["passed"] = entry["passed"] and equal
        entry["cases"] += cases

    def record_fingerprint(self, key: str, sha256: str) -> None:
        if not isinstance(sha256, str) or not _SHA256.match(sha256):
            raise ValueError(f"fingerprint {key!r} must be a lowercase SHA-256 hex digest, got {sha256!r}")
        previous = self.fingerprints.get(key)
        if previous is not None and previous != sha256:
            self.errors.append((BITWISE, f"fingerprint {key} was recorded twice with different values"))
        self.fingerprints[key] = sha256

    def outcome(self, nodeid: str, phase: str, outcome: str) -> None:
        """Fold one test report in: a failure or skip in any phase sticks; a pass counts from the call."""
        entry = self.tests.get(nodeid)
        if entry is None:
            return
        if entry["outcome"] in ("failed", "skipped", "xfailed", "xpassed"):
            return
        if outcome != "passed" or phase == "call":
            entry["outcome"] = outcome

    def has_measured(self) -> bool:
        return bool(self.tests or self.metrics or self.anchors or self.fingerprints)

    def kinds_measured(self) -> list[str]:
        kinds = {kind for entry in self.tests.values() for kind in entry["kinds"]}
        kinds |= {NUMERIC} if self.metrics else set()
        kinds |= {BITWISE} if self.anchors or self.fingerprints else set()
        return [kind for kind in KINDS if kind in kinds]

    def results(self, kind: str, exitstatus: int, backend: str, errors=()) -> dict:
        """The artifact's `results` for `kind`; `errors` are problems found outside the tests
        (an unreadable covers setting, a glob that matches nothing)."""
        tests = {nodeid: entry["outcome"] or "not run" for nodeid, entry in sorted(self.tests.items())
                 if kind in entry["kinds"]}
        errors = [message for of_kind, message in self.errors if of_kind in (None, kind)] + list(errors)
        if not tests:
            errors.append(f"no test marked @pytest.mark.design_gates(kind={kind!r}) or recording {kind} evidence ran")
        for nodeid, outcome in tests.items():
            if outcome != "passed":
                errors.append(f"{kind} test {nodeid} {outcome}")
        if exitstatus != 0:
            errors.append(f"the session did not pass (pytest exit {int(exitstatus)})")
        results = self._numeric(errors) if kind == NUMERIC else self._bitwise(errors, backend)
        results["passed"] = not errors
        results["tests"] = tests
        results["errors"] = errors
        return results

    def _numeric(self, errors: list[str]) -> dict:
        if not self.metrics:
            errors.append("no metric was recorded (use the record_metric fixture)")
        per_dtype = {}
        for dtype in sorted(self.metrics):
            values = {name: entry["worst"] for name, entry in sorted(self.metrics[dtype].items())
                      if math.isfinite(entry["worst"])}
            per_dtype[dtype] = dict(values, cases=len(self.cases.get(dtype, ())))
        worst_of = {name: entry["direction"] for metrics in self.metrics.values() for name, entry in metrics.items()}
        return {"passed": False, "per_dtype": per_dtype, "worst_of": dict(sorted(worst_of.items()))}

    def _bitwise(self, errors: list[str], backend: str) -> dict:
        anchors = {name: dict(entry) for name, entry in sorted(self.anchors.items())}
        for nodeid, entry in sorted(self.tests.items()):
            name = entry["anchor"]
            if name:
                anchor = anchors.setdefault(name, {"passed": True, "cases": 0})
                anchor["passed"] = anchor["passed"] and entry["outcome"] == "passed"
                anchor["cases"] += 0 if name in self.anchors else 1
        if not anchors:
            errors.append("no bitwise anchor was recorded (use the record_anchor fixture or "
                          "@pytest.mark.design_gates(kind='bitwise', anchor=...))")
        for name, anchor in anchors.items():
            if not anchor["passed"]:
                errors.append(f"anchor {name} is not byte-identical")
        return {"passed": False, "backend": backend, "anchors": anchors,
                "fingerprints": dict(sorted(self.fingerprints.items()))}
