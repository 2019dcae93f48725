"""`gate-check`: check design records against the gates G0-G8.

    gate-check [PATHS...] [--gate G7 ...] [--stage B] [--format text|json|junit|github|sarif] [--quiet]
               [--run-suites] [--base REF [--head REF] [--reviews FILE] | --history] [--output FILE] [--explain]
    gate-check new ID --title TITLE [--lang en|zh] [--author "Name <email>"]
    gate-check pr-body ...
    gate-check lint-pr --body-file FILE [--format text|json|github|sarif] [--explain]
    gate-check pin RECORD... [--check]
    gate-check refresh [ID...] [--list|--check] [--runner NAME] [--fix]
    gate-check doctor [--ref REF] [--no-packages] [--format text|json]

With no PATHS, every record in the configured records folders (`records` in
.design-gates/config.yaml or [tool.design-gates]; default docs/design) is checked; with `--head`, as the
records are in that commit. `--history` adds the history ratchet: each first-parent
commit after the policy's `history.enforce_from`, judged as its own change. Exit
codes: 0 every gate passed (or does not apply), 1 a gate failed or errored, 2 bad
usage or an unreadable/invalid input, 3 an internal error of design-gates. The
mapping from error types to exit codes lives in `main` and nowhere else.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from gates import __version__
from gates.model.config import load_settings
from gates.model.errors import DesignGatesError, GitContextError, InputError, InternalError, UsageError

SUBCOMMANDS = {
    "new": "gates.frontends.scaffold",
    "pr-body": "gates.frontends.pr_body",
    "lint-pr": "gates.frontends.lint_pr",
    "verify": "gates.frontends.verify_cli",
    "key": "gates.frontends.key_cli",
    "attest": "gates.frontends.attest_cli",
    "pin": "gates.frontends.pin_cli",
    "refresh": "gates.frontends.refresh_cli",
    "doctor": "gates.frontends.doctor_cli",
}

EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def find_repo_root(start: Path) -> Path:
    """The git top level above `start` (a folder holding `.git`), else `start` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo-root", type=Path, help="repository root (default: the git top level of the current folder)")
    parser.add_argument("--debug", action="store_true", help="show a traceback for internal errors")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gate-check",
        description="Check design records (by default every record in the configured records folders, "
        "docs/design unless .design-gates/config.yaml or [tool.design-gates] says otherwise) against the gates G0-G8.",
        epilog=f"sub-commands: {', '.join(SUBCOMMANDS)} (gate-check SUBCOMMAND --help). "
        "Exit codes: 0 pass, 1 a gate failed, 2 bad usage or input, 3 internal error.",
    )
    parser.add_argument("paths", nargs="*", help="record files or folders (default: the configured records folders)")
    parser.add_argument("--gate", action="append", default=[], metavar="GATE",
                        help="run only this gate (repeatable, or comma-separated: --gate G3,G4)")
    parser.add_argument("--stage", choices=["A", "B", "C", "D"], help="check the stage rules as if each record had reached at least this stage")
    parser.add_argument("--format", choices=["text", "json", "junit", "github", "sarif"], default="text",
                        help="text (default), json, junit, github (workflow annotations) or sarif (SARIF 2.1.0 for code scanning)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only the findings: no summary line when every gate passes (exit codes unchanged)")
    parser.add_argument("--output", type=Path, help="write the report here instead of standard output")
    parser.add_argument("--run-suites", action="store_true", help="G3/G4: run the declared validation suites instead of reading their evidence")
    parser.add_argument("--suite-timeout", type=float, default=600.0, metavar="SECONDS", help="time limit per suite run (default 600)")
    parser.add_argument("--base", help="also check the change base..head (stage scope, prerequisites, API diff, approvals)")
    parser.add_argument("--head", help="head of the change (default HEAD); needs --base. Every gate reads the "
                        "records and evidence of this commit, not the working tree")
    parser.add_argument("--reviews", type=Path, metavar="FILE|DIR",
                        help="G8: the forge's review export of the pull request (GitHub's pulls/N/reviews JSON, "
                        "written by CI outside the repository), with --base; with --history, a folder of such "
                        "exports, <merged commit sha>.json for each merge")
    parser.add_argument("--history", action="store_true",
                        help="also judge each first-parent commit after the policy's history.enforce_from "
                        "as its own change (the main branch's ratchet)")
    parser.add_argument("-j", "--jobs", type=int, metavar="N",
                        help="check many records on N processes (default: one per CPU; without --base, --history "
                             "or --run-suites, and only where each process gets enough records)")
    parser.add_argument("--max-record-bytes", type=int, metavar="N", help="size limit per record (default 1 MiB)")
    parser.add_argument("--require-records", action="store_true",
                        help="exit 2 when the run judges nothing: no record found, no policy for --base/--history, "
                        "no history.enforce_from for --history (default: say so and exit 0; "
                        "or set require_records: true in the configuration)")
    parser.add_argument("--explain", action="store_true",
                        help="G7: also say how each sentence with an end-to-end word was read (a claim, or why not)")
    parser.add_argument("--version", action="version", version=f"design-gates {__version__}")
    _common_options(parser)
    return parser


def _run_checks(args, repo_root: Path) -> int:
    from gates.checks.runner import check_records
    from gates.frontends.report_formats import render

    if args.head and not args.base:
        raise UsageError("--head needs --base")
    if args.reviews and not (args.base or args.history):
        raise UsageError("--reviews needs --base (a pull request's export) or --history (a folder of exports)")
    if args.history and args.base:
        raise UsageError("--history judges the merged history commit by commit; it takes no --base or --head")
    if args.max_record_bytes is not None and args.max_record_bytes < 1:
        raise UsageError("--max-record-bytes must be positive")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    gates = [name.strip() for value in args.gate for name in value.split(",") if name.strip()]
    change = None
    if args.base:
        from gates.history.git_repo import load_change_set

        change = load_change_set(repo_root, args.base, args.head or "HEAD")
        if args.reviews:
            from gates.history.forge_reviews import load_reviews

            change.forge_reviews = load_reviews(args.reviews, repo_root)
    history = history_findings = None
    if args.history:
        from gates.history.ratchet import check_history

        history = check_history(repo_root, reviews=args.reviews)
        if not args.quiet and history.configured:
            print(f"gate-check: {history.note}", file=sys.stderr)
        history_findings = history.findings
    with _records_root(repo_root, args.head) as root:
        report = check_records(_paths_under(args.paths, repo_root, root), root, gates=gates or None,
                               stage=args.stage, run_suites=args.run_suites, change=change,
                               suite_timeout_s=args.suite_timeout, max_record_bytes=args.max_record_bytes,
                               history_findings=history_findings, jobs=args.jobs,
                               approvals_judged_except=_approvals_judged_except(repo_root, history))
        explained = ""
        if args.explain:
            from gates.frontends.claims_explain import explain_records

            explained = explain_records([record.path for record in report.records], root)
    unjudged = _nothing_judged(args, repo_root, report, change, history)
    if unjudged and (args.require_records or load_settings(repo_root).require_records):
        for line in unjudged:
            print(f"gate-check: error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.quiet:
        for line in unjudged:
            print(f"gate-check: {line}", file=sys.stderr)
    text = render(report, args.format, quiet=args.quiet)
    if explained:
        sys.stderr.write(explained) if args.format in ("json", "junit", "sarif") else sys.stdout.write(explained)
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        if not (args.quiet and report.ok):
            summary = render(report, "text").splitlines()[-1]
            sys.stdout.write(f"{summary}; report written to {args.output}\n")
    else:
        sys.stdout.write(text)
    if report.input_errors:
        return EXIT_BAD_INPUT
    return EXIT_OK if report.ok else EXIT_GATE_FAILED


def _approvals_judged_except(repo_root: Path, history) -> frozenset[str] | None:
    """On a `--history` run whose checks judged the commits up to HEAD, and whose working tree is HEAD's: the paths
    that commits judged without a base policy changed (`GateContext.approvals_judged_except`); else None."""
    if history is None or not history.configured:
        return None
    from gates.history.git_repo import worktree_is_clean_at

    return history.changed_without_policy if worktree_is_clean_at(repo_root, "HEAD") else None


def _nothing_judged(args, repo_root: Path, report, change, history) -> list[str]:
    from gates.checks.runner import judging_policy
    from gates.frontends.nothing_judged import nothing_judged

    policy = judging_policy(repo_root, change) if change is not None else None
    return nothing_judged(report, repo_root, args.paths, load_settings(repo_root), change=change,
                          change_policy=policy, history=history)


@contextmanager
def _records_root(repo_root: Path, head: str | None):
    """Where the gates read records and evidence: the working tree, or with `--head` the
    files of that commit (unless the working tree is exactly that commit)."""
    if head is None:
        yield repo_root
        return
    from gates.history.git_repo import checked_out_tree, worktree_is_clean_at

    if worktree_is_clean_at(repo_root, head):
        yield repo_root
        return
    with checked_out_tree(repo_root, head) as tree:
        yield tree


def _paths_under(paths: list[str], repo_root: Path, root: Path) -> list[str]:
    """The PATHS named on the command line, moved from the working tree into `root`."""
    if root == repo_root:
        return paths
    moved = []
    for raw in paths:
        named = Path(os.path.abspath(raw))
        absolute = Path(os.path.realpath(named.parent)) / named.name
        try:
            moved.append(str(root / absolute.relative_to(repo_root)))
        except ValueError:
            moved.append(raw)  # outside the repository: the runner refuses it by name
    return moved


def _run_subcommand(name: str, argv: list[str]) -> int:
    module = importlib.import_module(SUBCOMMANDS[name])
    parser = _Parser(prog=f"gate-check {name}", description=(module.__doc__ or "").strip().split("\n")[0] or None)
    _common_options(parser)
    module.add_arguments(parser)
    args = parser.parse_args(argv)
    repo_root = (args.repo_root or find_repo_root(Path.cwd())).resolve()
    return int(module.run(args, repo_root))


def main(argv=None) -> int:
    """Entry point of `gate-check`; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return _run_subcommand(argv[0], argv[1:])
        args = build_parser().parse_args(argv)
        repo_root = (args.repo_root or find_repo_root(Path.cwd())).resolve()
        if not repo_root.is_dir():
            raise UsageError(f"--repo-root {repo_root}: not a folder")
        return _run_checks(args, repo_root)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_BAD_INPUT)
    except InputError as exc:
        print(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (UsageError, GitContextError) as exc:
        print(f"gate-check: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("gate-check: interrupted", file=sys.stderr)
        return 130
    except (InternalError, DesignGatesError, Exception) as exc:  # noqa: BLE001 - the one place errors become exit codes
        if debug:
            import traceback

            traceback.print_exc()
        print(f"gate-check: internal error: {type(exc).__name__}: {exc}"
              + ("" if debug else " (run with --debug for a traceback)"), file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
