"""Refresh evidence: run the producers of stale artifacts, sign, place and re-pin them, and re-check quoted numbers.

    gate-check refresh --list [--files]        # which artifacts are stale, and why
    gate-check refresh --check                 # the same; exit 1 when any needs a refresh (CI, pre-commit)
    gate-check refresh [ID...] [--all] [--runner NAME] [--jobs N] [--commit SHA] [--fix]

The configuration names each artifact's producer (`refresh.producers.<id>`: the command,
the path, the runner it needs, whether it must run alone). Without IDs the run takes
every producer whose artifact is missing, unreadable or stale (`--all`: every producer),
limited to `--runner` when given. It runs the `refresh.prepare` steps of those runners
beside the non-exclusive producers (up to `--jobs` of them at once), then the exclusive
producers one at a time, with progress per step. Each artifact is signed with the runner's key from the environment
(`DESIGN_GATES_SIGNING_KEY_FILE` or `DESIGN_GATES_SIGNING_KEY`, with
`DESIGN_GATES_SIGNING_KEY_ID`) and moved to its path; every record that cites it is
re-pinned (`gate-check pin`). Then every number a record or its results pages quote from
an artifact is checked again: a number that no longer matches its value is printed with
the new value, and `--fix` rewrites it in place at the precision and in the unit it was
written (review the diff like any other). A summary table ends the run.

Exit codes: 0 every producer ran and no quoted number is out of date (or, with --fix,
each was fixed); 1 a producer failed or a quoted number still disagrees (`--check`:
something needs a refresh); 2 bad usage or configuration.
"""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from gates.evidence.attestation import UnreadableKeyError, signing_key_from_environment
from gates.evidence.refresh_plan import ArtifactState, Citation, artifact_states, shown_files
from gates.evidence.refresh_run import RunSettings, run_all
from gates.frontends.pin_cli import pin_record
from gates.model.config import load_settings
from gates.model.atomic_write import write_atomically
from gates.model.errors import InputError, UsageError
from gates.model.findings import Finding
from gates.model.record import load_record

QUOTE_GATES = ("G1", "G7")


def add_arguments(parser) -> None:
    parser.add_argument("ids", nargs="*", metavar="ID", help="artifact ids to refresh (default: every stale one)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="list every producer's artifact and whether it is stale; run nothing")
    mode.add_argument("--check", action="store_true", help="like --list, and exit 1 when any artifact needs a refresh")
    parser.add_argument("--files", action="store_true", help="with --list/--check: name every changed file")
    parser.add_argument("--all", action="store_true", help="run every producer, fresh or not")
    parser.add_argument("--runner", action="append", default=[], metavar="NAME",
                        help="run only the producers (and prepare steps) of this runner (repeatable)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="how many non-exclusive producers run at once; also given to commands as {jobs}")
    parser.add_argument("--commit", help="the commit the artifacts record (default: the checkout's HEAD)")
    parser.add_argument("--log-dir", type=Path, help="keep each step's output here (default: a temporary folder, "
                        "removed at the end; a failed step's last lines are printed)")
    parser.add_argument("--no-prepare", action="store_true", help="skip the refresh.prepare steps")
    parser.add_argument("--fix", action="store_true", help="rewrite quoted numbers that no longer match their artifact")


def run(args, repo_root: Path) -> int:
    settings = load_settings(repo_root)
    producers = settings.refresh.producers
    if not producers:
        source = settings.source or "pyproject.toml [tool.design-gates]"
        raise UsageError(f"no evidence producers are configured: add refresh.producers to {source} "
                         "(the configuration guide, 'Evidence producers')")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    for name in args.ids:
        if name not in producers:
            close = difflib.get_close_matches(name, producers, n=1)
            raise UsageError(f"no producer for artifact {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                             + f"; configured: {', '.join(producers)}")
    runners = {p.runner for p in producers.values()}
    for runner in args.runner:
        if runner not in runners:
            raise UsageError(f"no producer runs on {runner!r}; runners in the configuration: {', '.join(sorted(runners))}")
    records = _records(repo_root, settings)
    states = artifact_states(settings, repo_root, _citations(records))
    if args.list or args.check:
        _print_states(states, args.files)
        stale = [s for s in states if s.needs_refresh and (not args.runner or s.producer.runner in args.runner)]
        return 1 if args.check and stale else 0
    chosen = _chosen(states, args)
    if not chosen:
        print("gate-check refresh: every selected artifact is fresh; nothing to run (--all runs them anyway)")
        return _requote(repo_root, args.fix)
    try:
        signing = signing_key_from_environment()
    except UnreadableKeyError as exc:
        raise UsageError(f"the signing key in the environment cannot be used: {exc}") from None
    if signing is None:
        print("gate-check refresh: no signing key in the environment: the artifacts are written unsigned",
              file=sys.stderr)
    start = time.monotonic()
    with _log_dir(args.log_dir) as log_dir:
        run_settings = RunSettings(repo_root, log_dir, args.jobs, args.commit or _head_commit(repo_root), signing)
        report = _progress()
        steps = [] if args.no_prepare else [s for s in settings.refresh.prepare
                                            if s.runner in {state.producer.runner for state in chosen}]
        prepared, results = run_all(steps, [s.producer for s in chosen], run_settings, report)
        _print_failures(prepared + results)
    refreshed = {state.producer.path for state, result in zip(chosen, results) if result.ok}
    pinned = _repin(records, repo_root, refreshed)
    _print_summary(chosen, results, prepared, pinned, time.monotonic() - start)
    quotes = _requote(repo_root, args.fix)
    return 1 if any(not r.ok for r in prepared + results) or quotes else 0


def _records(repo_root: Path, settings) -> list:
    from gates.checks.runner import record_files

    records = []
    for path in record_files([], repo_root, settings):
        try:
            records.append(load_record(path, repo_root))
        except InputError as exc:
            print(f"{exc.path}:{exc.line}:{exc.col}: warning: record not read: {exc.message}", file=sys.stderr)
    return records


def _citations(records) -> dict[str, list[Citation]]:
    cited: dict[str, list[Citation]] = defaultdict(list)
    for record in records:
        covers = tuple(c for c in (record.get("covers", default=[]) or []) if isinstance(c, str))
        for entry in record.get("evidence", default=[]) or []:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                cited[entry["path"]].append(Citation(record.rel_path, covers))
    return cited


def _chosen(states: list[ArtifactState], args) -> list[ArtifactState]:
    selected = []
    for state in states:
        if args.ids:
            if state.producer.id in args.ids:
                selected.append(state)
        elif (args.all or state.needs_refresh) and (not args.runner or state.producer.runner in args.runner):
            selected.append(state)
    return selected


def _print_states(states: list[ArtifactState], files: bool) -> None:
    width = max(len(s.producer.id) for s in states)
    for state in states:
        why = f": {state.reason}" if state.reason else ""
        print(f"{state.producer.id:<{width}}  {state.status:<10} runner {state.producer.runner}{why}")
        if files:
            for path in state.changed:
                print(f"    changed  {path}")
            for path in state.unbound:
                print(f"    unbound  {path}")
        elif state.changed:
            print(f"    {shown_files(state.changed)}")
    stale = sum(s.needs_refresh for s in states)
    print(f"{stale} of {len(states)} artifact(s) need a refresh" + ("" if files or not stale else " (--files names every file)"))


def _progress():
    start = time.monotonic()

    def report(message: str) -> None:
        print(f"[{time.monotonic() - start:7.1f} s] {message}", flush=True)

    return report


class _log_dir:
    """The folder for step logs: the one given (created), else a temporary one removed afterwards."""

    def __init__(self, given: Path | None):
        self.given, self.temporary = given, None

    def __enter__(self) -> Path:
        if self.given is not None:
            self.given.mkdir(parents=True, exist_ok=True)
            return self.given
        self.temporary = tempfile.TemporaryDirectory(prefix="gate-check-refresh-")
        return Path(self.temporary.name)

    def __exit__(self, *exc) -> None:
        if self.temporary is not None:
            self.temporary.cleanup()


def _print_failures(results) -> None:
    for result in results:
        if result.ok:
            continue
        why = result.problem or (f"exit {result.returncode}" if result.returncode else "")
        why = "; ".join([w for w in [why] + result.after_failed if w])
        print(f"--- {result.name} failed: {why}; its last lines:", file=sys.stderr)
        print(result.log_tail(), file=sys.stderr)


def _head_commit(repo_root: Path) -> str | None:
    from gates.history.git_repo import checkout_of

    found = checkout_of(repo_root)
    return found[1] if found else None


def _repin(records, repo_root: Path, refreshed: set[str]) -> dict[str, list[str]]:
    """Re-pin every record citing a refreshed artifact: {artifact path: [record paths re-pinned]}."""
    pinned: dict[str, list[str]] = defaultdict(list)
    for record in records:
        paths = {entry.get("path") for entry in record.get("evidence", default=[]) or [] if isinstance(entry, dict)}
        if not paths & refreshed:
            continue
        changes, problems = pin_record(repo_root / record.rel_path, repo_root, write=True)
        for line in changes + problems:
            print(line)
        for path in paths & refreshed:
            pinned[path].append(record.rel_path)
    return pinned


def _print_summary(chosen, results, prepared, pinned, seconds: float) -> None:
    print("\n| step | runner | was | result | seconds | signed by | records re-pinned |")
    print("|---|---|---|---|---|---|---|")
    for result in prepared:
        print(f"| {result.name} | | | {'ok' if result.ok else 'FAILED'} | {result.seconds:.1f} | | |")
    for state, result in zip(chosen, results):
        outcome = "ok" if result.ok else f"FAILED ({result.problem or f'exit {result.returncode}'})"
        print(f"| {state.producer.id} | {state.producer.runner} | {state.status} | {outcome} | {result.seconds:.1f} "
              f"| {result.signed_by or 'unsigned'} | {len(pinned.get(state.producer.path, []))} |")
    print(f"\nwall {seconds:.1f} s; {sum(r.ok for r in results)} of {len(results)} producer(s) ok")


def _requote(repo_root: Path, fix: bool) -> int:
    """Print (and with `fix`, rewrite) every quoted number that no longer matches its artifact; the count left."""
    from gates.checks.runner import check_records

    report = check_records([], repo_root, gates=list(QUOTE_GATES))
    fixes = [f for record in report.records for f in record.findings() if f.fix is not None]
    if not fixes:
        return 0
    for finding in fixes:
        print(f"{finding.path}:{finding.fix.line}:{finding.fix.col}: {finding.gate}: quotes {finding.fix.old}, "
              f"the artifact now says {finding.fix.new}")
    if not fix:
        print(f"{len(fixes)} quoted number(s) out of date; `gate-check refresh --fix` rewrites them")
        return len(fixes)
    applied, refused = apply_fixes(repo_root, fixes)
    print(f"{applied} quoted number(s) rewritten" + (f"; {len(refused)} left for a person:" if refused else ""))
    for line in refused:
        print(line)
    return len(refused)


def apply_fixes(repo_root: Path, findings: list[Finding]) -> tuple[int, list[str]]:
    """Apply each finding's fix to its file (where the old text is still there); (applied, refused lines)."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_path[finding.path].append(finding)
    applied, refused = 0, []
    for rel_path, items in by_path.items():
        path = repo_root / rel_path
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        done = set()
        for finding in sorted(items, key=lambda f: (f.fix.line, -f.fix.col)):
            fix = finding.fix
            key = (fix.line, fix.col)
            if key in done:
                continue
            line = lines[fix.line - 1] if 0 < fix.line <= len(lines) else ""
            start = fix.col - 1
            if line[start:start + len(fix.old)] != fix.old:
                start = line.find(fix.old) if line.count(fix.old) == 1 else -1
            if start < 0:
                refused.append(f"{rel_path}:{fix.line}:{fix.col}: {fix.old} not found where it was quoted; set it to {fix.new} by hand")
                continue
            lines[fix.line - 1] = line[:start] + fix.new + line[start + len(fix.old):]
            done.add(key)
            applied += 1
        write_atomically(path, "".join(lines))
    return applied, refused
