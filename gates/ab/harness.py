"""The A/B run: warm-up, interleaved fresh-process samples, and the `e2e` artifact.

The harness refuses to produce evidence that G7 would have to trust blindly:

* fewer than `MIN_SAMPLES` samples per arm, or no discarded warm-up;
* arms that differ in anything but the declared variable (`gates.ab.arms`);
* no fixture identity: at least one named file (`--fixture NAME=PATH`, hashed here)
  or identities the command reports (`"fixtures": {name: sha256}` in its JSON line);
* fixture identities or device environments that differ between samples: the arms
  did not measure the same inputs on the same machine;
* a failed sample (its exit status and output tail are reported);
* with an outputs tolerance: a sample whose `outputs_sample` is missing, or farther from the
  first arm's first sample (relative L2) than the tolerance: arms that run different kernels
  differ in their bits, but not by more than the tolerance, or they computed different things.
"""

from __future__ import annotations

import fnmatch
import hashlib
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gates.ab.arms import Arm, Variable, check_fair, inherited_environment
from gates.ab.samples import MetricSpec, Sample, SampleError, run_sample
from gates.evidence.source_binding import source_tokens

MIN_SAMPLES = 3


class AbError(RuntimeError):
    """The run cannot give trustworthy evidence; nothing is written."""


@dataclass
class AbPlan:
    artifact_id: str
    command: list[str]
    variable: Variable
    arms: list[Arm]
    metric: MetricSpec
    repo_root: Path
    samples: int = MIN_SAMPLES
    warmup: int = 1
    unit: str = ""
    higher_is_better: bool = True
    fixtures: dict[str, Path] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    timeout_s: float = 1800.0
    outputs_tolerance: float | None = None  # most relative L2 distance of an outputs_sample from the reference


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fixture_hashes(fixtures: dict[str, Path]) -> dict[str, str]:
    """SHA-256 of each named fixture file; only regular files are read."""
    hashes = {}
    for name, path in sorted(fixtures.items()):
        if not path.is_file():
            raise AbError(f"fixture {name!r}: {path} is not a regular file")
        hashes[name] = _sha256_file(path)
    return hashes


def source_hashes(globs: list[str], repo_root: Path) -> dict[str, str]:
    """SHA-256 of the repository files each glob matches; a glob matching nothing is an error."""
    repo_root = repo_root.resolve()
    tracked = [p for p in repo_root.rglob("*") if p.is_file() and ".git" not in p.relative_to(repo_root).parts]
    rel_paths = sorted(p.relative_to(repo_root).as_posix() for p in tracked)
    hashes = {}
    for pattern in globs:
        matched = [rel for rel in rel_paths if fnmatch.fnmatchcase(rel, pattern)]
        if not matched:
            raise AbError(f"--source {pattern!r} matches no file under {repo_root}")
        for rel in matched:
            hashes[rel] = _sha256_file(repo_root / rel)
    return dict(sorted(hashes.items()))


def interleaved_order(arms: list[Arm], samples: int) -> list[tuple[Arm, int]]:
    """A B A B ...: round `i` runs every arm once, in the declared order."""
    return [(arm, index) for index in range(1, samples + 1) for arm in arms]


def _summary(values: list[float]) -> dict:
    median = statistics.median(values)
    return {
        "median": median,
        "mean": statistics.fmean(values),
        "min": min(values),
        "max": max(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "spread": (max(values) - min(values)) / median if median else None,
    }


def _same_across(samples: list[Sample], read, what: str) -> dict:
    first = read(samples[0])
    for sample in samples[1:]:
        if read(sample) != first:
            raise AbError(f"{what} differ between samples: arm {samples[0].arm!r} sample {samples[0].index} "
                          f"reported {first}, arm {sample.arm!r} sample {sample.index} reported {read(sample)}")
    return first


def _commit(repo_root: Path) -> str | None:
    named = os.environ.get("DESIGN_GATES_COMMIT")
    if named:
        return named
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo_root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) == 40 else None


def run_ab(plan: AbPlan, progress=None, invocation: list[str] | None = None) -> dict:
    """Run the plan and return the `e2e` artifact; raise `AbError` when it cannot be trusted."""
    progress = progress or (lambda message: None)
    if plan.samples < MIN_SAMPLES:
        raise AbError(f"{plan.samples} sample(s) per arm: an e2e artifact needs at least {MIN_SAMPLES}")
    if plan.warmup < 1:
        raise AbError("at least one warm-up run per arm is discarded before the samples")
    base_env = inherited_environment(plan.variable)
    try:
        check_fair(plan.arms, plan.variable, plan.command, base_env)
    except ValueError as exc:
        raise AbError(str(exc)) from None
    named_fixtures = fixture_hashes(plan.fixtures)
    sources = source_hashes(plan.sources, plan.repo_root)

    def run(arm: Arm, index: int) -> Sample:
        try:
            return run_sample(arm.name, index, arm.command(plan.command, plan.variable),
                              arm.environment(base_env, plan.variable), plan.repo_root, plan.metric, plan.timeout_s)
        except SampleError as exc:
            raise AbError(str(exc)) from None

    total = plan.warmup * len(plan.arms) + plan.samples * len(plan.arms)
    done = 0
    for round_index in range(1, plan.warmup + 1):
        for arm in plan.arms:
            done += 1
            progress(f"[{done}/{total}] warm-up {round_index} of {arm.name} ({plan.variable.name}={arm.value}) ...")
            warm = run(arm, 0)
            progress(f"[{done}/{total}] warm-up {round_index} of {arm.name}: {plan.metric.name} = {warm.value:g} (discarded)")
    measured: list[Sample] = []
    for arm, index in interleaved_order(plan.arms, plan.samples):
        done += 1
        progress(f"[{done}/{total}] {arm.name} sample {index} ...")
        sample = run(arm, index)
        measured.append(sample)
        progress(f"[{done}/{total}] {arm.name} sample {index}: {plan.metric.name} = {sample.value:g}"
                 f"{(' ' + plan.unit) if plan.unit else ''} ({sample.wall_s:.1f} s, pid {sample.pid})")
    pids = [sample.pid for sample in measured]
    if len(set(pids)) != len(pids) or os.getpid() in pids:
        raise AbError("two samples came from the same process; every sample must be a fresh process")
    reported_fixtures = _same_across(measured, lambda s: s.fixtures, "the fixture identities the command reported")
    environment = _same_across(measured, lambda s: s.environment, "the environments the command reported")
    fixtures = {**reported_fixtures, **named_fixtures}
    if not fixtures:
        raise AbError("no fixture identity: name the inputs with --fixture NAME=PATH, or have the command "
                      "report {\"fixtures\": {name: sha256}} in its JSON line")
    arms = {}
    for arm in plan.arms:
        own = [s for s in measured if s.arm == arm.name]
        values = [s.value for s in own]
        arms[arm.name] = {
            "value": arm.value,
            "samples": values,
            **_summary(values),
            "fresh_process": True,
            "pids": [s.pid for s in own],
            "wall_s": [round(s.wall_s, 3) for s in own],
            "warmup_discarded": plan.warmup,
            "outputs_sha256": sorted({s.outputs_sha256 for s in own if s.outputs_sha256}),
        }
    reference = plan.arms[0].name
    comparison = {
        f"{arm.name}/{reference}": arms[arm.name]["median"] / arms[reference]["median"]
        for arm in plan.arms[1:] if arms[reference]["median"]
    }
    digests = [s.outputs_sha256 for s in measured]
    outputs_equal = None if any(d is None for d in digests) else len(set(digests)) == 1
    outputs_compared = compare_outputs(measured, reference, plan.outputs_tolerance)
    return {
        "schema_version": 1,
        "id": plan.artifact_id,
        "kind": "e2e",
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(invocation or [sys.executable, "-m", "gates.ab", *plan.command]),
        "environment": {"backend": environment.get("backend", "unknown"), "device": environment.get("device", "unknown"),
                        **{k: v for k, v in environment.items() if isinstance(v, (str, int, float, bool)) or v is None},
                        "python": platform.python_version(), "host": platform.node()},
        "commit": _commit(plan.repo_root),
        "sources": sources,
        "source_tokens": source_tokens(plan.repo_root, sources),
        "fixtures": dict(sorted(fixtures.items())),
        "results": {
            "metric": plan.metric.name,
            "unit": plan.unit,
            "higher_is_better": plan.higher_is_better,
            "variable": plan.variable.describe(),
            "measured_command": shlex.join(plan.command),
            "order": [f"{s.arm}#{s.index}" for s in measured],
            "arms": arms,
            "comparison": comparison,
            "outputs_equal": outputs_equal,
            **({"outputs_compared": outputs_compared} if outputs_compared is not None else {}),
        },
    }


def rel_l2(values: list[float], reference: list[float]) -> float:
    """||values - reference|| / ||reference|| (the distance itself where the reference is all zeros)."""
    difference = math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(values, reference)))
    scale = math.sqrt(math.fsum(b * b for b in reference))
    return difference / scale if scale else difference


def compare_outputs(measured: list[Sample], reference_arm: str, tolerance: float | None) -> dict | None:
    """Each arm's largest relative L2 distance of a sample's `outputs_sample` from the reference arm's first one;
    None where no sample printed one and no tolerance was asked for. Raises AbError where a tolerance was asked for
    and a sample printed none, printed one of another length, or lies outside it."""
    samples = [s.outputs_sample for s in measured]
    if all(sample is None for sample in samples) and tolerance is None:
        return None
    missing = [f"{s.arm}#{s.index}" for s, sample in zip(measured, samples) if sample is None]
    if missing:
        raise AbError(f"no outputs_sample (a list of finite numbers) in the JSON line of {', '.join(missing)}: the "
                      "arms' outputs cannot be compared" + (" within --outputs-tolerance" if tolerance is not None
                                                            else ""))
    first = next(s for s in measured if s.arm == reference_arm)
    reference = first.outputs_sample
    per_arm: dict[str, float] = {}
    for sample, values in zip(measured, samples):
        if len(values) != len(reference):
            raise AbError(f"{sample.arm}#{sample.index} printed an outputs_sample of {len(values)} numbers, "
                          f"{first.arm}#{first.index} one of {len(reference)}: they are not the same positions")
        per_arm[sample.arm] = max(per_arm.get(sample.arm, 0.0), rel_l2(values, reference))
    if tolerance is not None:
        outside = {arm: distance for arm, distance in per_arm.items() if distance > tolerance}
        if outside:
            raise AbError("outputs outside --outputs-tolerance " + f"{tolerance:g} (relative L2 from "
                          f"{first.arm}#{first.index}): " + ", ".join(f"{arm} {d:.3g}" for arm, d in outside.items()))
    return {"metric": "rel_l2", "against": f"{first.arm}#{first.index}", "per_arm": per_arm,
            "tolerance": tolerance, "within": None if tolerance is None else True,
            "positions": len(reference)}
