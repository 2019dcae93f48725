"""One sample: run the command in a new process and read the metric from its output."""

from __future__ import annotations

import json
import math
import re
import subprocess
import time
from dataclasses import dataclass, field

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
OUTPUT_TAIL = 2000
MAX_OUTPUTS_SAMPLE = 1 << 16


class SampleError(RuntimeError):
    """A sample failed: the process failed, timed out, or printed no metric."""


@dataclass(frozen=True)
class MetricSpec:
    """Where the metric is in the command's output: a key of its last JSON line that has
    it (dotted for nested keys), or a regular expression whose first group is the number.
    Fixture identities and the environment are read from the last JSON line either way."""

    name: str
    pattern: str | None = None

    def read(self, stdout: str) -> tuple[float, dict]:
        """(value, the JSON object it came from or {})."""
        if self.pattern:
            matches = list(re.finditer(self.pattern, stdout, re.MULTILINE))
            if not matches:
                raise SampleError(f"the output has no match for --pattern {self.pattern!r}")
            documents = list(_json_lines(stdout))
            return _number(matches[-1].group(1), self.name), documents[0] if documents else {}
        for document in _json_lines(stdout):
            value = _dotted(document, self.name)
            if value is not None:
                return _number(value, self.name), document
        raise SampleError(f"no JSON line of the output has the metric {self.name!r}")


def _json_lines(stdout: str):
    """The JSON objects printed one per line, last first."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                document = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(document, dict):
                yield document


def _dotted(document, key: str):
    value = document
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _number(value, name: str) -> float:
    if isinstance(value, bool):
        raise SampleError(f"metric {name!r} is a boolean, not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SampleError(f"metric {name!r} is {value!r}, not a number") from None
    if not math.isfinite(number):
        raise SampleError(f"metric {name!r} is {value!r}, not a finite number")
    return number


@dataclass
class Sample:
    arm: str
    index: int
    value: float
    pid: int
    wall_s: float
    reported: dict = field(default_factory=dict)

    @property
    def fixtures(self) -> dict:
        found = self.reported.get("fixtures")
        if not isinstance(found, dict):
            return {}
        return {str(k): v for k, v in found.items() if isinstance(v, str) and _SHA256.match(v)}

    @property
    def outputs_sha256(self) -> str | None:
        value = self.reported.get("outputs_sha256")
        return value if isinstance(value, str) and _SHA256.match(value) else None

    @property
    def outputs_sample(self) -> list[float] | None:
        """The numbers the command printed from the same positions of its outputs (`outputs_sample`); None when it
        printed none, or anything but a list of finite numbers."""
        value = self.reported.get("outputs_sample")
        if not isinstance(value, list) or not value or len(value) > MAX_OUTPUTS_SAMPLE:
            return None
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value):
            return None
        return [float(x) for x in value]

    @property
    def environment(self) -> dict:
        found = self.reported.get("environment")
        return found if isinstance(found, dict) else {}


def run_sample(arm: str, index: int, command: list[str], env: dict, cwd, metric: MetricSpec, timeout_s: float) -> Sample:
    """Run `command` once in a fresh process; raise `SampleError` with the output's tail on failure."""
    start = time.perf_counter()
    try:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, text=True, errors="replace")
    except OSError as exc:
        raise SampleError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from None
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise SampleError(f"arm {arm!r} sample {index}: timed out after {timeout_s:g} s") from None
    wall = time.perf_counter() - start
    if process.returncode != 0:
        tail = (stderr or stdout)[-OUTPUT_TAIL:]
        raise SampleError(f"arm {arm!r} sample {index}: exit status {process.returncode}\n{tail}")
    try:
        value, document = metric.read(stdout)
    except SampleError as exc:
        raise SampleError(f"arm {arm!r} sample {index}: {exc}\n{stdout[-OUTPUT_TAIL:]}") from None
    return Sample(arm, index, value, process.pid, wall, document)
