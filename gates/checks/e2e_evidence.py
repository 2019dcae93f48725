"""What G7 accepts as end-to-end evidence, and whether a claim quotes it faithfully.

An `e2e` artifact backs an end-to-end claim only when it was measured the way
`python -m gates.ab` measures: every arm with at least `MIN_SAMPLES` samples, each
from its own fresh process (distinct process ids, none shared between arms), after a
discarded warm-up, with fixture identities naming the inputs, each arm at its own setting
of the variable under comparison (`value`; two arms at one setting compare nothing). An
arm's median is the median of its samples, recomputed here: a written `median` that is
not is refused. And the artifact must be one a claim can trust (`backing_problems`):
signed by a runner key the policy trusts, whatever `attestation.required` lists (the trust
model asks it of every end-to-end claim), and measured on the code the record covers as it
is now (it binds every covered file, and none of its sources changed since).

A claim that quotes a number must quote the artifact: the number matches, at the
quoted precision, an arm's median of the artifact's metric (a rate such as tok/s
against a throughput metric, a time against a latency metric), or the ratio between
two arms' medians (`3.9x`, `+290 %`). When the sentence names arms of the artifact,
the number must belong to one of them.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass

from gates.checks.evidence_refs import record_covered_files
from gates.checks.cited_values import CitedValues
from gates.checks.number_trace import LineTracer
from gates.checks.quoted_numbers import matches, numbers_with_units
from gates.evidence.artifacts import EvidenceArtifact, verify_sha256
from gates.evidence.attestation import TrustedKeys, verification_problem

MIN_SAMPLES = 3
MAX_PROBLEMS_SHOWN = 6
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
    settings: dict[str, str] = {}
    for name, arm in sorted(arms.items()):
        if not isinstance(arm, dict):
            issues.append(f"arm {name!r} is not an object")
            continue
        samples = arm.get("samples") or []
        if len(samples) < MIN_SAMPLES:
            issues.append(f"arm {name!r} has {len(samples)} sample(s), fewer than {MIN_SAMPLES}")
        issues.extend(_median_issues(name, arm))
        setting = arm.get("value")
        if not isinstance(setting, str):
            issues.append(f"arm {name!r} does not record the setting it measured (value)")
        elif setting in settings:
            issues.append(f"arms {settings[setting]!r} and {name!r} measure the same setting "
                          f"({_variable(artifact)}={setting}): they compare nothing")
        else:
            settings[setting] = name
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


def samples_median(arm) -> float | None:
    """The median of an arm's samples (None when they are not all finite numbers)."""
    samples = arm.get("samples") if isinstance(arm, dict) else None
    if not isinstance(samples, list) or not samples:
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in samples):
        return None
    return float(statistics.median(samples))


def _median_issues(name: str, arm: dict) -> list[str]:
    median = samples_median(arm)
    if median is None:
        return [f"arm {name!r} has samples that are not all finite numbers"]
    written = arm.get("median")
    if written is None:
        return []
    if isinstance(written, bool) or not isinstance(written, (int, float)) \
            or not math.isclose(written, median, rel_tol=1e-9, abs_tol=1e-12):
        return [f"arm {name!r} says its median is {written}, but the median of its samples is {median:g}"]
    return []


def _variable(artifact) -> str:
    variable = artifact.results.get("variable")
    name = variable.get("name") if isinstance(variable, dict) else None
    return str(name) if name else "the variable"


def _arm_medians(artifact) -> dict[str, float]:
    """Each arm's median, recomputed from its samples (the written `median` is not taken as it is)."""
    medians = {}
    for name, arm in (artifact.results.get("arms") or {}).items():
        median = samples_median(arm)
        if median is not None:
            medians[name] = median
    return medians


_TEST_FILE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")


def _is_test_file(path: str) -> bool:
    """A test module, a conftest, or a file under a `tests/` (`test/`) folder: a serving run does not run them."""
    return _TEST_FILE.search(path) is not None


def backing_problems(record, ctx, artifact) -> list[str]:
    """Why a pinned e2e `artifact` cannot be trusted to back the record's claims: it is not signed by a runner
    key the policy trusts, or it was not measured on the covered code as it is now (it binds every covered file
    but the tests, and none of its sources changed since)."""
    section = ctx.policy.section("attestation") if ctx.policy is not None else {}
    problems = []
    trust = verification_problem(artifact.data, TrustedKeys.from_section(section))
    if trust:
        problems.append(f"{trust} (an end-to-end claim needs attested e2e evidence, whatever the policy's "
                        "attestation.required lists)")
    if not artifact.sources:
        problems.append("binds no sources: it must name (with SHA-256) the code it measured, every file the "
                        "record covers but its tests")
    else:
        problems.extend(f"does not bind {path}, a file the record covers: it did not measure this file as it is"
                        for path in record_covered_files(record, ctx)
                        if path not in artifact.sources and not _is_test_file(path))
    for source in ctx.evidence.stale_sources(artifact):
        state = "is missing" if ctx.evidence.source_hash(source) is None else "changed"
        problems.append(f"is stale: {source} {state} since it was measured")
    return problems


def _named(sentence: str, arm: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(arm)}(?![\w-])", sentence, re.IGNORECASE) is not None


def unmatched_numbers(sentence: str, artifacts: list, exempt=frozenset()) -> list[str]:
    """The quoted numbers of a claim sentence that no cited e2e artifact backs, each with why.

    `exempt` holds the columns of numbers already tied to a named value of another artifact
    (a kernel time with its `ARTIFACT-ID:KEY.PATH` reference).
    """
    arms = [_ArmsOf(artifact, sentence) for artifact in artifacts]
    offered = "; ".join(f"{a.artifact.id}: {arm} {value:g}" for a in arms for arm, value in a.medians.items())
    problems = []
    for quoted in numbers_with_units(sentence):
        if quoted.col in exempt:
            continue
        if quoted.unit not in RATE_UNITS and quoted.unit not in TIME_UNITS and quoted.unit not in RATIO_UNITS \
                and quoted.unit != "%":
            continue
        if not any(matches(quoted, value) for a in arms for value in a.candidates(quoted.unit)):
            shown = quoted.text + ("" if quoted.unit in ("%", "x", "×") else " ") + quoted.unit
            problems.append(f"{shown} matches no arm of the cited e2e artifacts ({offered or 'none cited'})")
    return problems


class _ArmsOf:
    """What one artifact offers a claim: its arms' medians (those the sentence names, if any) and their ratios."""

    def __init__(self, artifact, sentence: str):
        self.artifact = artifact
        self.medians = _arm_medians(artifact)
        self.metric = str(artifact.results.get("metric", ""))
        self.unit = str(artifact.results.get("unit", ""))
        self.named = [arm for arm in self.medians if _named(sentence, arm)]
        self._cache: dict[str, list[float]] = {}

    def candidates(self, quoted_unit: str) -> list[float]:
        if quoted_unit not in self._cache:
            self._cache[quoted_unit] = self._values(quoted_unit)
        return self._cache[quoted_unit]

    def _values(self, quoted_unit: str) -> list[float]:
        medians, named, metric, unit = self.medians, self.named, self.metric, self.unit
        allowed = named or list(medians)
        if quoted_unit in RATE_UNITS and (_RATE_METRIC.search(metric) or unit in RATE_UNITS):
            return [medians[arm] for arm in allowed]
        if quoted_unit in TIME_UNITS and (_TIME_METRIC.search(metric) or unit in TIME_UNITS):
            scale = TIME_UNITS.get(unit) or (1e-3 if metric.endswith("ms") else 1.0)
            return [medians[arm] * scale / TIME_UNITS[quoted_unit] for arm in allowed]
        if quoted_unit in RATIO_UNITS or quoted_unit == "%":
            ratios = [medians[a] / medians[b] for a in medians for b in medians
                      if a != b and medians[b] and (not named or a in named or b in named)]
            return ratios if quoted_unit != "%" else [100 * (r - 1) for r in ratios] + [100 * (1 - r) for r in ratios]
        return []


# --- which artifacts back a claim, and what a claim sentence says ------------------------------------------------

METRIC_FAMILIES = {
    "TTFT": re.compile(r"ttft|first[_ -]?token|首字|首词|首\s*token", re.IGNORECASE),
    "TPOT": re.compile(r"tpot|\bitl\b|inter[_ -]?token|per[_ -]?(?:output[_ -]?)?token[_ -]?(?:ms|us|s|latency|time)"
                       r"|每词|每\s*token", re.IGNORECASE),
    "throughput": re.compile(r"tok(?:en)?s?(?:/s|[_ ]per[_ ]s)|throughput|qps|requests?(?:/s|[_ ]per[_ ]s)|rps|吞吐",
                             re.IGNORECASE),
}
_PARAGRAPH_BREAK = re.compile(r"^\s*(?:$|#|\||>|[-*+]\s|\d+[.)]\s)")
_LINK_TARGET_TEXT = re.compile(r"\]\([^)\s]*\)")


@dataclass(frozen=True)
class Candidate:
    """A cited `e2e` artifact as a claim may lean on it: `label` is the record's evidence id;
    `pin_problem` says why the artifact is not the file the record pinned (None when it is)."""

    label: str
    artifact: EvidenceArtifact | None
    pin_problem: str | None = None
    backing: tuple[str, ...] = ()  # why the artifact cannot be trusted (`backing_problems`)


def pin_problem(entry, artifact: EvidenceArtifact | None) -> str | None:
    """Why `artifact` is not the e2e artifact a declared evidence `entry` pins (None when it is)."""
    if artifact is None:
        return f"{entry.path} cannot be read"
    if not verify_sha256(artifact, entry.sha256):
        return f"{entry.path} has SHA-256 {artifact.file_sha256}, the record pins {entry.sha256}"
    if artifact.id != entry.id:
        return f"the artifact's own id is {artifact.id!r}"
    if artifact.kind != "e2e" or entry.kind != "e2e":
        return f"it is a {artifact.kind!r} artifact, not e2e"
    return None


def usable_artifacts(candidates: list[Candidate]) -> tuple[list[EvidenceArtifact], list[str]]:
    """The cited e2e artifacts that can back a claim, and why each of the others cannot."""
    usable, rejected = [], []
    for candidate in candidates:
        if candidate.pin_problem or candidate.artifact is None:
            rejected.append(f"{candidate.label}: {candidate.pin_problem or 'cannot be read'}")
            continue
        issues = list(candidate.backing) + artifact_issues(candidate.artifact)
        if issues:
            rejected.append(f"{candidate.label}: {'; '.join(issues)}")
        else:
            usable.append(candidate.artifact)
    return usable, rejected


def claim_paragraphs(text: str, first_line: int = 1) -> dict[int, str]:
    """The paragraph of each line of Markdown `text` (line number -> its lines joined by spaces), in one pass.

    A paragraph runs up to a blank line, a heading, a table, a quote or a list item (a list
    item is a paragraph of its own, with the lines it wraps over); a heading and a table row
    are paragraphs of their own. The text is kept as written (`code`, links), on one line;
    the lines of one paragraph share one string.
    """
    lines = text.split("\n")
    found: dict[int, str] = {}
    current: list[int] = []

    def close() -> None:
        if current:
            joined = " ".join(lines[n - first_line] for n in current)
            found.update((n, joined) for n in current)
            current.clear()

    for offset, line in enumerate(lines):
        line_no = first_line + offset
        stripped = line.lstrip()
        if not stripped:
            close()
            continue
        if stripped.startswith(("|", "#")):
            close()
            found[line_no] = line
            continue
        if _PARAGRAPH_BREAK.match(line):
            close()
        current.append(line_no)
    close()
    return found


def claim_paragraph(text: str, first_line: int, line_no: int) -> str:
    """The paragraph holding line `line_no` (see `claim_paragraphs`; call that once for many claims)."""
    return claim_paragraphs(text, first_line).get(line_no, "")


def _readable(text: str) -> str:
    """The text with backticks and link targets blanked, the same length (a number in `code` is still quoted)."""
    return _LINK_TARGET_TEXT.sub(lambda m: "]" + " " * (len(m.group(0)) - 1), text.replace("`", " "))


def metric_families(text: str) -> set[str]:
    """The serving metrics (TTFT, TPOT, throughput) a sentence or an artifact's metric name speaks of."""
    return {family for family, pattern in METRIC_FAMILIES.items() if pattern.search(text)}


def metric_problems(sentence: str, artifacts: list) -> list[str]:
    """The sentence names a serving metric that none of the artifacts measures."""
    named = metric_families(sentence)
    if not named:
        return []
    measured = {artifact.id: str(artifact.results.get("metric", "")) for artifact in artifacts}
    if any(named & metric_families(metric) for metric in measured.values()):
        return []
    shown = ", ".join(f"{artifact_id} measures {metric or 'an unnamed metric'}" for artifact_id, metric in measured.items())
    return [f"the sentence speaks of {' and '.join(sorted(named))}, which no cited e2e artifact measures ({shown})"]


def claim_problems(paragraph: str, claim_level, candidates: list[Candidate], named: CitedValues | None = None) -> list[str]:
    """Why an end-to-end claim is not backed (empty when it is); `paragraph` holds the claim (`claim_paragraph`).

    The record must be at `claim_level: e2e`; one cited e2e artifact must match its pin and
    have been measured properly (`artifact_issues`); the serving metric the paragraph names
    must be one such an artifact measures, and each rate, time, ratio or percentage it quotes
    must be one of their values (`unmatched_numbers`). A number followed by a reference to a
    value of another cited artifact (`named`: a kernel time and its `ARTIFACT-ID:KEY.PATH`)
    is that value instead, and must equal it.
    """
    problems = []
    if claim_level != "e2e":
        problems.append(f"claim_level is {claim_level or 'not set'}")
    usable, rejected = usable_artifacts(candidates)
    if not candidates:
        problems.append("no e2e artifact is cited")
    elif not usable:
        problems.extend(rejected)
    else:
        e2e_ids = {candidate.artifact.id for candidate in candidates if candidate.artifact is not None}
        exempt = set()
        if named is not None:
            for tie in LineTracer(named).prose_ties(0, paragraph):
                if tie.mislabelled:
                    problems.append(f"{tie.quoted.shown()} and its reference disagree: {tie.problem}")
                elif tie.problem:
                    problems.append(f"{tie.quoted.shown()} names no value of the cited evidence: {tie.problem}")
                elif tie.mismatch():
                    problems.append(f"{tie.quoted.shown()} is not the value it names, {tie.target.shown()}")
                elif tie.target.artifact_id not in e2e_ids:
                    exempt.add(tie.quoted.col)
        readable = _readable(paragraph)
        problems.extend(metric_problems(readable, usable))
        problems.extend(unmatched_numbers(readable, usable, exempt))
    return problems


def claim_message(term: str, problems: list[str], result: str = "") -> str:
    """The finding for an end-to-end claim that `claim_problems` rejected; `result` is the words that state
    its result, named with the term as what made the sentence a claim."""
    shown = problems[:MAX_PROBLEMS_SHOWN] + ([f"and {len(problems) - MAX_PROBLEMS_SHOWN} more"]
                                               if len(problems) > MAX_PROBLEMS_SHOWN else [])
    why = f" (a claim by {term!r} with the result {result!r})" if result else ""
    return (f"end-to-end claim ({term!r}) is not backed by e2e evidence: {'; '.join(shown)}. Link an e2e "
            f"artifact with fixture identities and >= {MIN_SAMPLES} fresh-process samples per arm (`python -m gates.ab`) "
            "and quote its values (an arm's median, or the ratio of two arms' medians), or state kernel-level "
            f"results only{why}")


def claim_findings(verdicts, paragraphs: dict[int, str], claim_level, candidates, named, first_problems=()):
    """(line, col, message) of each claim among `verdicts` that the evidence does not back.

    The one rule for records, pull-request descriptions and results pages: each claim's
    paragraph (`claim_paragraphs`) is judged by `claim_problems`; `first_problems` come
    before those (a description that names no record).
    """
    judged: dict[str, list[str]] = {}
    for verdict in verdicts:
        if not verdict.claim:
            continue
        paragraph = paragraphs.get(verdict.line, "")
        if paragraph not in judged:
            judged[paragraph] = list(first_problems) + claim_problems(paragraph, claim_level, candidates, named)
        if judged[paragraph]:
            yield verdict.line, verdict.col, claim_message(verdict.words, judged[paragraph], verdict.result)
