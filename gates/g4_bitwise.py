"""G4 Bitwise anchor: what must not change is byte-identical, and fingerprints hold.

The record declares `bitwise` (suite, anchors, committed fingerprint file). From
stage B on, the declared suite is run (`--run-suites`) or the record's `bitwise`
evidence is read (exists, schema-valid, pinned, fresh). Every declared anchor
must have passed (the artifact's anchor keys are the anchor id, or start with
"<id>-"), and the output fingerprints must equal the committed fingerprint file
(`{backend: {fixture: sha256}}`, backend from `results.backend` or the
environment). A changed fingerprint passes only when `accepted_changes` lists it
with a question whose decision is `accepted`.
"""

from __future__ import annotations

import json

from gates.context import GateContext, stage_at_least
from gates.findings import Finding, GateResult, Status, adder_at_keys, result_from_findings
from gates.paths import resolve_inside
from gates.record import Record
from gates.suite_evidence import judged_results

GATE = "G4"


def check(record: Record, ctx: GateContext) -> GateResult:
    bitwise = record.get("bitwise")
    if bitwise is None:
        return GateResult(GATE, Status.NOT_APPLICABLE)
    if not stage_at_least(ctx.effective_stage(record), "B"):
        return GateResult(GATE, Status.NOT_APPLICABLE)
    findings: list[Finding] = []
    add = adder_at_keys(GATE, record, findings)

    judged = judged_results(record, ctx, "bitwise", "bitwise", GATE, findings, add)
    if judged is not None:
        _check_results(record, ctx, *judged, add)
    return result_from_findings(GATE, findings)


def _check_results(record: Record, ctx: GateContext, data: dict, source: str, add) -> None:
    if data.get("kind") != "bitwise":
        add(("bitwise",), f"{source} is a {data.get('kind')} artifact, not bitwise")
        return
    results = data.get("results") or {}
    if results.get("passed") is not True:
        add(("bitwise",), f"{source} reports passed = {results.get('passed')}")
    anchors = results.get("anchors") or {}
    for index, anchor in enumerate(record.get("bitwise", "anchors", default=[]) or []):
        aid = anchor["id"]
        runs = {key: value for key, value in anchors.items() if key == aid or key.startswith(aid + "-")}
        keys = ("bitwise", "anchors", index)
        if not runs:
            add(keys, f"anchor {aid} ({anchor['check']}) was not run by {source}")
        for key, value in sorted(runs.items()):
            if not (isinstance(value, dict) and value.get("passed") is True):
                add(keys, f"anchor {key} failed in {source}: outputs are not byte-identical")
    path = record.get("bitwise", "fingerprints", "path")
    if path is not None:
        _check_fingerprints(record, ctx, path, results, data.get("environment") or {}, source, add)


def _check_fingerprints(record, ctx, path, results, environment, source, add) -> None:
    fp_keys = ("bitwise", "fingerprints", "path")
    resolved = resolve_inside(ctx.repo_root, path)
    try:
        committed_all = json.loads(resolved.read_text(encoding="utf-8")) if resolved else None
    except FileNotFoundError:
        add(fp_keys, f"fingerprint file {path} does not exist")
        return
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        add(fp_keys, f"fingerprint file {path} is unreadable: {exc}")
        return
    if not isinstance(committed_all, dict):
        add(fp_keys, f"fingerprint file {path} is not a JSON object {{backend: {{fixture: sha256}}}}")
        return
    backend = results.get("backend") or environment.get("backend")
    committed = committed_all.get(backend)
    if not isinstance(committed, dict):
        add(fp_keys, f"fingerprint file {path} has no entry for backend {backend!r} (has {sorted(committed_all)})")
        return
    produced = results.get("fingerprints") or {}
    accepted = _accepted_changes(record)
    for key in sorted(set(committed) | set(produced)):
        old, new = committed.get(key), produced.get(key)
        if old == new:
            continue
        if key in accepted or f"{backend}/{key}" in accepted:
            continue
        pending = _listed_change(record, key, backend)
        if pending is not None:
            index, question, decision = pending
            add(("bitwise", "fingerprints", "accepted_changes", index),
                f"fingerprint {backend}/{key} changed; it is listed under question {question}, whose decision is "
                f"{decision or 'not made'} (it must be accepted)")
            continue
        if new is None:
            add(fp_keys, f"fingerprint {backend}/{key} is committed but {source} did not produce it")
        elif old is None:
            add(fp_keys, f"fingerprint {backend}/{key} from {source} is not in {path}; commit it")
        else:
            add(fp_keys, f"fingerprint {backend}/{key} changed ({old[:12]}… → {new[:12]}…) and no accepted question "
                f"allows it; declare it in bitwise.fingerprints.accepted_changes")


def _listed_change(record: Record, key: str, backend: str):
    decisions = {q.get("id"): q.get("decision") for q in record.get("questions", default=[]) or []}
    for index, change in enumerate(record.get("bitwise", "fingerprints", "accepted_changes", default=[]) or []):
        if change.get("key") in (key, f"{backend}/{key}"):
            return index, change.get("question"), decisions.get(change.get("question"))
    return None


def _accepted_changes(record: Record) -> set[str]:
    decisions = {q.get("id"): q.get("decision") for q in record.get("questions", default=[]) or []}
    return {
        change["key"]
        for change in record.get("bitwise", "fingerprints", "accepted_changes", default=[]) or []
        if decisions.get(change.get("question")) == "accepted"
    }
