"""Re-run the numeric and bitwise suites a record declares and compare with its committed evidence.

    gate-check verify [RECORD...] [--suite-timeout SECONDS]

For each record (default: every record in the configured records folders) with a `numeric_contract`
or `bitwise` suite, the suite is run here (on the CPU, through the Triton interpreter
when there is no GPU) and its results are set beside the committed artifact's:

- numeric: for every declared tolerance, the committed value and this run's value of
  the metric for the dtype; outside when either breaks the declared bound;
- bitwise: every anchor must hold in this run; fingerprints are compared per backend
  only (a CPU run's bytes are not a GPU run's): with the committed artifact when it
  comes from this run's backend, and with this backend's entry of the record's
  fingerprint file (`bitwise.fingerprints.path`) when it has one. A backend with
  nothing to compare against prints a note, not an error.

`--run-suites` is accepted, as in `gate-check`, and changes nothing: verify always runs them.

Each comparison prints as `path:line:col: G3 ok|error: ...`. Exit codes: 0 every
comparison holds, 1 one does not (or a suite fails or cannot be run), 2 a record or
an artifact cannot be read.
"""

from __future__ import annotations

from pathlib import Path

from gates.checks.evidence_refs import checked_artifact
from gates.checks.fingerprint_changes import FP_KEYS, Acceptance, Unreadable, compare, read_working_tree, short
from gates.checks.suite_evidence import select_evidence
from gates.evidence.suite_run import cached_run
from gates.model.errors import InputError
from gates.model.record import load_record

SUITES = (("numeric_contract", "numeric", "G3"), ("bitwise", "bitwise", "G4"))


def add_arguments(parser) -> None:
    parser.add_argument("paths", nargs="*", help="record files or folders (default: the configured records folders)")
    parser.add_argument("--suite-timeout", type=float, default=600.0, metavar="SECONDS",
                        help="time limit per suite run (default 600)")
    parser.add_argument("--run-suites", action="store_true",
                        help="accepted as in gate-check; verify always runs the declared suites")


class _Printer:
    def __init__(self, repo_root: Path):
        self.exit_code = 0
        self.repo_root = repo_root

    def line(self, record, keys, gate: str, ok: bool, message: str) -> None:
        print(f"{record.rel_path}:{record.line_of(*keys)}:1: {gate} {'ok' if ok else 'error'}: {message}")
        if not ok:
            self.exit_code = max(self.exit_code, 1)

    def note(self, record, keys, message: str) -> None:
        print(f"{record.rel_path}:{record.line_of(*keys)}:1: G4 note: {message}")


def _number(value) -> str:
    return f"{value:.6g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "missing"


def _within(value, tolerance: dict) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    if "max" in tolerance and not value <= tolerance["max"]:
        return False
    return not ("min" in tolerance and not value >= tolerance["min"])


def compare_numeric(record, committed: dict, fresh: dict, where: str, out: _Printer) -> None:
    ours = (fresh.get("results") or {}).get("per_dtype") or {}
    theirs = (committed.get("results") or {}).get("per_dtype") or {}
    for index, tolerance in enumerate(record.get("numeric_contract", "tolerances", default=[]) or []):
        metric, dtype = tolerance.get("metric"), tolerance.get("dtype")
        bound = f"max {tolerance['max']:g}" if "max" in tolerance else f"min {tolerance.get('min', float('nan')):g}"
        old = (theirs.get(dtype) or {}).get(metric)
        new = (ours.get(dtype) or {}).get(metric)
        ok = _within(old, tolerance) and _within(new, tolerance)
        out.line(record, ("numeric_contract", "tolerances", index), "G3", ok,
                 f"{dtype} {metric}: committed {_number(old)} ({where}), this run {_number(new)}, declared {bound}")


def compare_bitwise(record, committed: dict, fresh: dict, where: str, out: _Printer) -> None:
    ours, theirs = fresh.get("results") or {}, committed.get("results") or {}
    for name, anchor in sorted((ours.get("anchors") or {}).items()):
        passed = isinstance(anchor, dict) and anchor.get("passed") is True
        old = ((theirs.get("anchors") or {}).get(name) or {}).get("passed")
        out.line(record, ("bitwise", "anchors"), "G4", passed,
                 f"anchor {name}: committed passed = {old} ({where}), this run passed = {passed}")
    if not ours.get("anchors"):
        out.line(record, ("bitwise", "anchors"), "G4", False, "this run reports no anchor")
    new_prints = ours.get("fingerprints") or {}
    here = backend_of(fresh)
    if backend_of(committed) == here:
        _compare_prints(record, theirs.get("fingerprints") or {}, new_prints, where, out)
    else:
        out.note(record, ("bitwise",), f"fingerprints not compared with {where}: it comes from backend "
                 f"{backend_of(committed)!r}, this run from {here!r} (fingerprints are compared per backend)")
    path = record.get(*FP_KEYS)
    if isinstance(path, str):
        try:
            committed_file = read_working_tree(out.repo_root, path).get(here)
        except Unreadable as exc:
            out.line(record, FP_KEYS, "G4", False, str(exc))
            return
        if isinstance(committed_file, dict):
            _compare_with_file(record, path, here, committed_file, new_prints, out)
        else:
            out.note(record, FP_KEYS, f"{path} has no entry for this run's backend {here!r}: "
                     "this run's fingerprints are not compared with it")


def backend_of(artifact: dict) -> str | None:
    """The backend an artifact's fingerprints belong to (as G4 reads it): `results.backend`, else the environment's."""
    return (artifact.get("results") or {}).get("backend") or (artifact.get("environment") or {}).get("backend")


def _compare_with_file(record, path: str, backend: str, held: dict, new_prints: dict, out: _Printer) -> None:
    """This run's fingerprints against the file's entry for its backend, as G4 judges them: a
    difference holds only through an accepted change the record lists."""
    def describe(backend, key, old, new):
        if new is None:
            return None  # a key this run's tier does not cover
        return f"fingerprint {key}: {path} [{backend}] holds {short(old)}, this run {short(new)}"

    produced = {key: value for key, value in new_prints.items()}
    problems = compare({backend: held}, {backend: produced}, [backend], Acceptance(record), describe)
    for keys, message in problems:
        out.line(record, keys, "G4", False, message)
    if not problems:
        matched = len(set(held) & set(produced))
        out.line(record, FP_KEYS, "G4", True, f"{matched} fingerprint(s) of this run hold in {path} [{backend}] "
                 "(with the record's accepted changes)")


def _compare_prints(record, old_prints: dict, new_prints: dict, where: str, out: _Printer) -> None:
    for key in sorted(set(old_prints) & set(new_prints)):
        out.line(record, ("bitwise",), "G4", old_prints[key] == new_prints[key],
                 f"fingerprint {key}: committed {str(old_prints[key])[:16]} ({where}), this run {str(new_prints[key])[:16]}")
    skipped = sorted(set(old_prints) ^ set(new_prints))
    if skipped:
        out.note(record, ("bitwise",), f"{len(skipped)} fingerprint(s) that only one of {where} and this run "
                 "reports, not compared")


def verify_record(record, ctx, out: _Printer) -> None:
    for section, kind, gate in SUITES:
        spec = record.get(section)
        if not isinstance(spec, dict) or not spec.get("suite"):
            continue
        problems = []
        entry = select_evidence(record, kind, (section, "evidence"),
                                lambda keys, message: problems.append((keys, message)))
        for keys, message in problems:
            out.line(record, keys, gate, False, message)
        if entry is None:
            continue
        artifact, findings = checked_artifact(record, ctx, entry, gate, fresh=False)
        for finding in findings:
            out.line(record, entry.keys, gate, False, finding.message)
        if artifact is None:
            continue
        run = cached_run(ctx, spec["suite"], spec.get("timeout_s"), record.get("covers", default=[]) or [], kind)
        if run.data is None or not run.passed:
            reason = run.problem or f"suite {run.suite} failed (pytest exit {run.returncode})"
            out.line(record, (section, "suite"), gate, False, f"{reason}; pytest output ends:\n{run.output_tail}")
            if run.data is None:
                continue
        compare = compare_numeric if kind == "numeric" else compare_bitwise
        compare(record, artifact.data, run.data, f"evidence {entry.id!r}", out)


def run(args, repo_root: Path) -> int:
    from gates.checks.runner import make_context, record_files

    out = _Printer(repo_root)
    records = []
    for path in record_files(args.paths, repo_root):
        try:
            records.append(load_record(path, repo_root))
        except InputError as exc:
            print(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}")
            out.exit_code = 2
    ctx = make_context(records, repo_root, suite_timeout_s=args.suite_timeout)
    for record in records:
        verify_record(record, ctx, out)
    for exc in ctx.evidence.refused:
        print(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}")
        out.exit_code = 2
    return out.exit_code
