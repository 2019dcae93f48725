"""Run evidence producers, each artifact signed and put in place.

A producer writes to a staging path beside its artifact (`{out}`); only when it exits 0
and what it wrote loads as a valid artifact of the expected id is that file signed (with
the runner's key from the environment, when one is set) and moved over the artifact in
one `os.replace`. A failed producer leaves the old artifact as it was. The prepare steps
(one after another) and the producers marked `exclusive: false` (up to `jobs` at a time) run
side by side first; then the exclusive producers, which time something, run one at a time
on a machine nothing else uses.

Each command runs from the repository root without a shell, its output going to a log
file; `{out}`, `{path}`, `{id}`, `{commit}` and `{jobs}` in its words are replaced, and a
producer finds its artifact id in `DESIGN_GATES_EVIDENCE_ID` and the commit in
`DESIGN_GATES_COMMIT`, which the evidence writers read.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from gates.evidence.artifacts import parse_artifact, read_regular_file
from gates.evidence.attestation import sign
from gates.evidence.evidence_writer import COMMIT_ENV, ID_ENV
from gates.model.config import PrepareStep, Producer
from gates.model.atomic_write import write_atomically
from gates.model.errors import InputError

LOG_TAIL_LINES = 15


@dataclass
class StepResult:
    """What one prepare step or producer did."""

    name: str
    returncode: int | None = None
    seconds: float = 0.0
    log: Path | None = None
    problem: str | None = None
    signed_by: str | None = None
    after_failed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.problem is None and not self.after_failed

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        if self.log is None or not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@dataclass(frozen=True)
class RunSettings:
    repo_root: Path
    log_dir: Path
    jobs: int
    commit: str | None
    signing: tuple | None  # (key id, private key) or None
    python: str = sys.executable


def command_words(command: str, values: dict[str, str]) -> list[str]:
    """The command split as a shell would (no shell runs it), each `{name}` of `values` replaced."""
    words = shlex.split(command)
    if words and words[0] in ("python", "python3"):
        words[0] = values.get("python", words[0])
    replaced = []
    for word in words:
        for name, value in values.items():
            word = word.replace("{" + name + "}", value)
        replaced.append(word)
    return replaced


def staging_path(root: Path, producer: Producer) -> Path:
    target = root / producer.path
    return target.with_name(f".{target.name}.refresh-{os.getpid()}.tmp")


def run_prepare(steps: list[PrepareStep], settings: RunSettings, report: Callable[[str], None]) -> list[StepResult]:
    """Run the prepare steps one after another; a failed step is reported and the rest still run."""
    results = []
    for index, step in enumerate(steps, start=1):
        name = f"prepare {index}"
        report(f"{name}: started: {step.command}")
        result = _run(name, step.command, {}, settings, timeout=None)
        report(f"{name}: {'done' if result.ok else f'FAILED (exit {result.returncode})'} in {result.seconds:.1f} s")
        results.append(result)
    return results


def run_all(steps: list[PrepareStep], producers: list[Producer], settings: RunSettings,
            report: Callable[[str], None]) -> tuple[list[StepResult], list[StepResult]]:
    """Prepare steps and non-exclusive producers side by side, then the exclusive producers one at a time.

    The prepare steps warm what the exclusive producers need; the non-exclusive producers time
    nothing, so they can share the machine with them. Returns (prepare results, producer results)."""
    total = len(producers)
    order = {producer.id: index for index, producer in enumerate(producers, start=1)}
    shared = [p for p in producers if not p.exclusive]
    alone = [p for p in producers if p.exclusive]
    results: dict[str, StepResult] = {}

    def one(producer: Producer) -> StepResult:
        report(f"[{order[producer.id]}/{total}] {producer.id}: started")
        result = produce(producer, settings)
        state = "done" if result.ok else f"FAILED ({result.problem or f'exit {result.returncode}'})"
        report(f"[{order[producer.id]}/{total}] {producer.id}: {state} in {result.seconds:.1f} s")
        return result

    with ThreadPoolExecutor(max_workers=1) as preparing, \
            ThreadPoolExecutor(max_workers=max(1, min(settings.jobs, len(shared) or 1))) as pool:
        prepared = preparing.submit(run_prepare, steps, settings, report)
        futures = {producer.id: pool.submit(one, producer) for producer in shared}
        for producer_id, future in futures.items():
            results[producer_id] = future.result()
        prepare_results = prepared.result()
    for producer in alone:
        results[producer.id] = one(producer)
    return prepare_results, [results[p.id] for p in producers]


def produce(producer: Producer, settings: RunSettings) -> StepResult:
    """Run one producer and, when it succeeds, sign and place its artifact, then run its `after` commands."""
    root = settings.repo_root
    staging = staging_path(root, producer)
    staging.parent.mkdir(parents=True, exist_ok=True)
    staging.unlink(missing_ok=True)
    values = {"out": str(staging), "path": producer.path, "id": producer.id}
    result = _run(producer.id, producer.command, values, settings, timeout=producer.timeout)
    try:
        if result.returncode == 0 and result.problem is None:
            result.problem, result.signed_by = _place(producer, staging, root / producer.path, settings)
    finally:
        staging.unlink(missing_ok=True)
    if result.ok:
        for command in producer.after:
            after = _run(f"{producer.id} (after)", command, values, settings, timeout=producer.timeout)
            result.seconds += after.seconds
            if not after.ok:
                result.after_failed.append(f"{command}: exit {after.returncode}" + (f" ({after.problem})" if after.problem else ""))
    return result


def _place(producer: Producer, staging: Path, target: Path, settings: RunSettings) -> tuple[str | None, str | None]:
    """(problem, signing key id): check what the producer wrote, sign it, move it over the artifact."""
    if not staging.exists():
        return f"it exited 0 but wrote nothing to {{out}} ({staging.name})", None
    try:
        data, _ = parse_artifact(read_regular_file(staging, producer.path), producer.path)
    except InputError as exc:
        return f"what it wrote is no valid artifact: {exc.message}", None
    if data.get("id") != producer.id:
        return f"it wrote an artifact with id {data.get('id')!r}, not {producer.id!r}", None
    if isinstance(data.get("command"), str):  # the command as one re-runs it: the artifact's path, not the staging file
        data["command"] = data["command"].replace(str(staging), producer.path)
    signed_by = None
    if settings.signing is not None:
        key_id, private_key = settings.signing
        data = sign(data, key_id, private_key)
        signed_by = key_id
    write_atomically(target, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return None, signed_by


def _run(name: str, command: str, values: dict[str, str], settings: RunSettings, timeout: float | None) -> StepResult:
    values = dict(values, commit=settings.commit or "", jobs=str(settings.jobs), python=settings.python)
    log = settings.log_dir / (_file_name(name) + ".log")
    result = StepResult(name, log=log)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if "id" in values:
        env[ID_ENV] = values["id"]
    if settings.commit:
        env[COMMIT_ENV] = settings.commit
    start = time.monotonic()
    try:
        words = command_words(command, values)
    except ValueError as exc:
        result.problem = f"the command does not parse: {exc}"
        return result
    with open(log, "w", encoding="utf-8") as out:
        out.write(f"$ {shlex.join(words)}\n")
        out.flush()
        try:
            process = subprocess.Popen(words, cwd=settings.repo_root, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        except OSError as exc:
            result.problem = f"cannot start {words[0]!r}: {exc.strerror or exc}"
            return result
        try:
            result.returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(process)
            result.problem = f"stopped after its {timeout:g} s timeout"
        except BaseException:
            _stop(process)
            raise
    result.seconds = time.monotonic() - start
    return result


def _stop(process: subprocess.Popen) -> None:
    """End the process and everything it started (its own session)."""
    try:
        os.killpg(process.pid, 15)
        process.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, 9)
        except OSError:
            pass
        process.wait()


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-") or "step"
