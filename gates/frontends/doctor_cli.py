"""Check a repository's design-gates set-up before it merges: configuration, policy, keys, API packages.

    gate-check doctor [--ref REF] [--no-packages] [--format text|json]

Reads the configuration and the policy at REF (default HEAD) as the base of the next change and
reports what would refuse honest work or pass silently there: a rule glob that matches no file, an
allowed-signers line or runner key that does not parse, a trusted approval source without what it
needs, a ratchet commit outside the history, a module of the API packages that G5 can read neither
statically nor by importing (`gates.checks.setup_check`). Run it on the set-up's branch before
merging it: afterwards each mend is a change of the rules that waits for a reviewed record. Exit
codes: 0 no error (warnings may be printed), 1 an error, 2 bad usage or an unreadable repository.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from gates.history.git_repo import worktree_is_clean_at
from gates.checks.setup_check import check_setup


def add_arguments(parser) -> None:
    parser.add_argument("--ref", default="HEAD", help="the commit to read the set-up from (default HEAD)")
    parser.add_argument("--no-packages", action="store_true",
                        help="do not read the API packages' modules (the slowest part on a large package)")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args, repo_root: Path) -> int:
    report = check_setup(repo_root, args.ref, read_packages=not args.no_packages)
    findings = [replace(finding, commit=None) for finding in report.findings]  # every one is of the commit read
    differs = args.ref == "HEAD" and not worktree_is_clean_at(repo_root, "HEAD")
    if args.format == "json":
        print(json.dumps({"commit": report.commit, "worktree_differs": differs, "facts": report.facts,
                          "findings": [{"gate": f.gate, "path": f.path, **f.to_json()} for f in findings],
                          "unreadable_modules": report.unreadable_modules,
                          "errors": report.errors, "warnings": report.warnings}, indent=2))
    else:
        if differs:
            print(f"note: the working tree differs from HEAD; doctor reads the commit {report.commit[:12]}: commit "
                  "the set-up to check it")
        for fact in report.facts:
            print(f"  {fact}")
        for finding in findings:
            print(finding.format_text())
        if report.unreadable_modules:
            print(f"G5 can read {len(report.unreadable_modules)} module(s) neither statically nor by importing them "
                  "here. Make each readable, or run doctor where CI runs gate-check; where the team accepts that "
                  "their own surface goes unchecked, the policy lists them:\n\napi:\n  unchecked_modules:")
            print("".join(f"    - {module}\n" for module in report.unreadable_modules))
        print(f"doctor: {report.errors} error(s), {report.warnings} warning(s) in the set-up at {report.commit[:12]}")
    return 1 if report.errors else 0
