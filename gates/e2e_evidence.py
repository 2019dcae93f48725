"""What G7 accepts as end-to-end evidence, and whether a claim quotes it faithfully.

An `e2e` artifact backs an end-to-end claim only when it was measured the way
`python -m gates.ab` measures: every arm with at least `MIN_SAMPLES` samples, each
from its own fresh process (distinct process ids, none shared between arms), after a
discarded warm-up, with fixture identities naming the inputs.

A claim that quotes a number must quote the artifact: the number matches, at the
quoted precision, an arm's median of the artifact's metric (a rate such as tok/s
against a throughput metric, a time against a latency metric), or the ratio between
two arms' medians (`3.9x`, `+290 %`). When the sentence names arms of the artifact,
the number must belong to one of them.
"""

from __future__ import annotations

import re

from gates.quoted_numbers import matches, numbers_with_units

MIN_SAMPLES = 3
RATE_UNITS = {"tok/s", "tokens/s", "token/s", "it/s"}
TIME_UNITS = {"µs": 1e-6, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "ns": 1e-9}
RATIO_UNITS = {"x", "×"}
_RATE_METRIC = re.compile(r"tok|throughput|per_s|/s|qps|rps", re.IGNORECASE)
_TIME_METRIC = re.compile(r"(?:^|_)(?:ms|us|s)$|latency|ttft|tpot|itl|step|time", re.IGNORECASE)


def artifact_issues(artifact) -> list[str]:
    """Why an `e2e` artifact cannot back an end-to-end claim (empty when it can)."""
    issues = []
    if not artifact.fixtures:
        issues.append("no fixture identities")
    arms = artifact.results.get("arms")
    if not isinstance(arms, dict) or not arms:
        return issues + ["no arms"]
    seen_pids: dict[int, str] = {}
    for name, arm in sorted(arms.items()):
        if not isinstance(arm, dict):
            issues.append(f"arm {name!r} is not an object")
            continue
        samples = arm.get("samples") or []
        if len(samples) < MIN_SAMPLES:
            issues.append(f"arm {name!r} has {len(samples)} sample(s), fewer than {MIN_SAMPLES}")
        if arm.get("fresh_process") is not True:
            issues.append(f"arm {name!r} samples are not from fresh processes")
        pids = arm.get("pids")
        if not isinstance(pids, list) or len(pids) != len(samples):
            issues.append(f"arm {name!r} does not record the process of each sample (pids)")
        else:
            for pid in pids:
                if pid in seen_pids:
                    issues.append(f"arm {name!r}: two samples share process {pid} (with arm {seen_pids[pid]!r}): "
                                  "taken in a warm process")
                    break
                seen_pids[pid] = name
        if not isinstance(arm.get("warmup_discarded"), int) or arm.get("warmup_discarded") < 1:
            issues.append(f"arm {name!r} has no discarded warm-up")
    return issues


def _arm_medians(artifact) -> dict[str, float]:
    medians = {}
    for name, arm in (artifact.results.get("arms") or {}).items():
        if isinstance(arm, dict) and isinstance(arm.get("median"), (int, float)) and not isinstance(arm.get("median"), bool):
            medians[name] = float(arm["median"])
    return medians


def _named(sentence: str, arm: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(arm)}(?![\w-])", sentence, re.IGNORECASE) is not None


def unmatched_numbers(sentence: str, artifacts: list) -> list[str]:
    """The quoted numbers of a claim sentence that no cited e2e artifact backs, each with why."""
    problems = []
    for quoted in numbers_with_units(sentence):
        if quoted.unit not in RATE_UNITS and quoted.unit not in TIME_UNITS and quoted.unit not in RATIO_UNITS \
                and quoted.unit != "%":
            continue
        offered = []
        found = False
        for artifact in artifacts:
            medians = _arm_medians(artifact)
            metric = str(artifact.results.get("metric", ""))
            unit = str(artifact.results.get("unit", ""))
            named = [arm for arm in medians if _named(sentence, arm)]
            allowed = named or list(medians)
            candidates = []
            if quoted.unit in RATE_UNITS and (_RATE_METRIC.search(metric) or unit in RATE_UNITS):
                candidates = [medians[arm] for arm in allowed]
            elif quoted.unit in TIME_UNITS and (_TIME_METRIC.search(metric) or unit in TIME_UNITS):
                scale = TIME_UNITS.get(unit) or (1e-3 if metric.endswith("ms") else 1.0)
                candidates = [medians[arm] * scale / TIME_UNITS[quoted.unit] for arm in allowed]
            elif quoted.unit in RATIO_UNITS or quoted.unit == "%":
                ratios = [medians[a] / medians[b] for a in medians for b in medians
                          if a != b and medians[b] and (not named or a in named or b in named)]
                candidates = ratios if quoted.unit != "%" else [100 * (r - 1) for r in ratios] + [100 * (1 - r) for r in ratios]
            offered.extend(f"{artifact.id}: {arm} {value:g}" for arm, value in medians.items())
            if any(matches(quoted, value) for value in candidates):
                found = True
                break
        if not found:
            shown = quoted.text + ("" if quoted.unit in ("%", "x", "×") else " ") + quoted.unit
            problems.append(f"{shown} matches no arm of the cited e2e artifacts ({'; '.join(offered) or 'none cited'})")
    return problems
