"""G4 Bitwise anchor: what must not change is byte-identical, and fingerprints hold.

The record declares `bitwise` (suite, anchors, committed fingerprint file). From
stage B on, the declared suite is run (`--run-suites`) or the record's `bitwise`
evidence is read (exists, schema-valid, pinned, fresh). Every declared anchor
must have been run and passed, with an integer `cases` > 0 (the artifact's anchor
keys are the anchor id, or start with "<id>-"); an anchor the artifact reports
but the record does not declare is a warning. The head's fingerprint file
(`{backend: {fixture: sha256}}`, backend from `results.backend` or the
environment) must hold the artifact's fingerprints, and a fingerprint that
changed is allowed only through an `accepted_changes` entry that names its new
value and an accepted question: with `--base` judged against the file where the
change starts, else against the working tree's file (`gates.checks.fingerprint_changes`).
"""

from __future__ import annotations

from gates.checks.context import GateContext, stage_at_least
from gates.model.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.checks.fingerprint_changes import (
    FP_KEYS, REMOVED, Acceptance, Unreadable, compare, path_at_merge_base, read_at_merge_base, read_working_tree, short,
)
from gates.checks.required_contracts import missing_contract
from gates.checks.suite_evidence import judged_results
from gates.model.record import Record

GATE = "G4"


def check(record: Record, ctx: GateContext) -> GateResult:
    bitwise = record.get("bitwise")
    if bitwise is None:
        return missing_contract(record, ctx, "bitwise", GATE) or GateResult(GATE, Status.NOT_APPLICABLE)
    if not stage_at_least(ctx.effective_stage(record), "B"):
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)

    judged = judged_results(record, ctx, "bitwise", "bitwise", GATE, findings, add)
    if judged is not None:
        _check_results(record, ctx, *judged, add, findings)
    return result_from_findings(GATE, findings)


def _check_results(record: Record, ctx: GateContext, data: dict, source: str, add, findings) -> None:
    if data.get("kind") != "bitwise":
        add(("bitwise",), f"{source} is a {data.get('kind')} artifact, not bitwise")
        return
    results = data.get("results") or {}
    if results.get("passed") is not True:
        add(("bitwise",), f"{source} reports passed = {results.get('passed')}")
    _check_anchors(record, results.get("anchors"), source, add, findings)
    path = record.get(*FP_KEYS)
    if path is not None:
        _check_fingerprints(record, ctx, path, results, data.get("environment") or {}, source, add)


def _check_anchors(record: Record, anchors, source: str, add, findings) -> None:
    anchors = anchors if isinstance(anchors, dict) else {}
    declared = record.get("bitwise", "anchors", default=[]) or []
    claimed = set()
    for index, anchor in enumerate(declared):
        aid = anchor["id"]
        runs = {key: value for key, value in anchors.items() if key == aid or key.startswith(aid + "-")}
        claimed.update(runs)
        keys = ("bitwise", "anchors", index)
        if not runs:
            add(keys, f"anchor {aid} ({anchor['check']}) was not run by {source}")
        for key, value in sorted(runs.items()):
            value = value if isinstance(value, dict) else {}
            cases = value.get("cases")
            if value.get("passed") is not True:
                add(keys, f"anchor {key} failed in {source}: outputs are not byte-identical")
            elif isinstance(cases, bool) or not isinstance(cases, int) or cases <= 0:
                add(keys, f"anchor {key} in {source} compared no outputs (cases = {cases!r}); "
                    "an anchor holds only over cases > 0")
    for key in sorted(set(anchors) - claimed):
        findings.append(Finding(GATE, record.rel_path, record.line_of("bitwise", "anchors"), 1,
                                f"{source} reports anchor {key}, which this record does not declare",
                                severity="warning"))


def _check_fingerprints(record, ctx, path, results, environment, source, add) -> None:
    try:
        head_all = read_working_tree(ctx.repo_root, path)
    except Unreadable as exc:
        add(FP_KEYS, str(exc))
        return
    backend = results.get("backend") or environment.get("backend")
    fingerprints = results.get("fingerprints") or {}
    if not isinstance(fingerprints, dict):
        add(FP_KEYS, f"{source} has no fingerprints object {{fixture: sha256}}")
        return
    produced = {backend: fingerprints}
    if not isinstance(head_all.get(backend), dict):
        add(FP_KEYS, f"fingerprint file {path} has no entry for backend {backend!r} (has {sorted(head_all)})")
        return
    acceptance = Acceptance(record)
    if ctx.change is None:
        for keys, message in compare(head_all, produced, [backend], acceptance, _artifact_difference(path, source)):
            add(keys, message)
        return
    for keys, message in compare(head_all, produced, [backend], None, _unrecorded(path, source)):
        add(keys, message)
    base_path = path_at_merge_base(record, ctx.change) or path
    try:
        base_all = read_at_merge_base(ctx.change, base_path)
    except Unreadable as exc:
        add(FP_KEYS, str(exc))
        return
    where = path if base_path == path else f"{path} (at the merge base {base_path})"
    backends = sorted(set(base_all) | set(head_all))
    for keys, message in compare(base_all, head_all, backends, acceptance, _base_difference(where)):
        add(keys, message)


def _artifact_difference(path: str, source: str):
    def describe(backend, key, old, new):
        if new is None:
            return f"fingerprint {backend}/{key} is committed but {source} did not produce it"
        if old is None:
            return f"fingerprint {backend}/{key} from {source} is not in {path}; commit it"
        return (f"fingerprint {backend}/{key} changed ({short(old)} → {short(new)}) and no accepted question "
                f"allows it; {_declare(key, new)}")
    return describe


def _unrecorded(path: str, source: str):
    def describe(backend, key, old, new):
        if new is None:
            return f"fingerprint {backend}/{key} is in {path} but {source} did not produce it"
        return (f"fingerprint {backend}/{key} from {source} ({short(new)}) is not what {path} records "
                f"({short(old)}); the committed file must hold the judged artifact's fingerprints")
    return describe


def _base_difference(where: str):
    def describe(backend, key, old, new):
        if old is None:
            return None
        if new is None:
            return (f"fingerprint {backend}/{key} was removed from {where} since the merge base, and no accepted "
                    f"question allows it; {_declare(key, new)}")
        return (f"fingerprint {backend}/{key} in {where} changed since the merge base ({short(old)} → {short(new)}) "
                f"and no accepted question allows it; {_declare(key, new)}")
    return describe


def _declare(key: str, new) -> str:
    value = REMOVED if new is None else new
    return (f"ask the reviewers, then declare it in bitwise.fingerprints.accepted_changes as "
            f"{{key: {key}, question: Q<n>, to: {value}}}")
