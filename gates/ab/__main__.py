"""`python -m gates.ab`: fresh-process A/B of a command, written as an `e2e` evidence artifact.

    python -m gates.ab --id ID --out PATH (--env-var NAME | --arg-option --OPT)
                       --arm NAME=VALUE --arm NAME=VALUE --metric KEY [--pattern REGEX]
                       [--samples 3] [--warmup 1] [--unit tok/s] [--lower-is-better]
                       [--fixture NAME=PATH ...] [--source GLOB ...] [--outputs-tolerance REL_L2]
                       [--replace] -- COMMAND [ARGS...]

Arms that run different kernels give different bits: where the command prints an
`outputs_sample` (a list of numbers from the same positions of its outputs),
`--outputs-tolerance` bounds each sample's relative L2 distance from the first arm's
first sample, and a run outside it writes nothing.

On a trusted runner that holds a key (DESIGN_GATES_SIGNING_KEY or
DESIGN_GATES_SIGNING_KEY_FILE, with DESIGN_GATES_SIGNING_KEY_ID) the artifact is
signed. Exit codes: 0 the artifact was written; 1 the run could not give trustworthy
evidence (nothing written; the reason is printed); 2 bad usage or an unreadable key.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from gates.ab.arms import ArmsError, parse_arms, parse_variable
from gates.ab.harness import MIN_SAMPLES, AbError, AbPlan, run_ab
from gates.ab.samples import MetricSpec
from gates.evidence.attestation import UnreadableKeyError, sign, signing_key_from_environment

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gates.ab", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--id", required=True, help="artifact id (lower case, digits, '.', '_', '-')")
    parser.add_argument("--out", required=True, type=Path, help="artifact path inside the repository")
    parser.add_argument("--env-var", help="the environment variable the arms set")
    parser.add_argument("--arg-option", help="the command-line option the arms pass (OPTION VALUE)")
    parser.add_argument("--arm", action="append", default=[], metavar="NAME=VALUE", help="an arm (two or more)")
    parser.add_argument("--metric", required=True, help="key of the command's JSON line (dotted for nested keys)")
    parser.add_argument("--pattern", help="instead of a JSON line: a regular expression whose first group is the metric")
    parser.add_argument("--samples", type=int, default=MIN_SAMPLES, help=f"samples per arm (at least {MIN_SAMPLES})")
    parser.add_argument("--warmup", type=int, default=1, help="discarded warm-up runs per arm (at least 1)")
    parser.add_argument("--unit", default="", help="unit of the metric, e.g. tok/s")
    parser.add_argument("--lower-is-better", action="store_true", help="the metric is a latency")
    parser.add_argument("--fixture", action="append", default=[], metavar="NAME=PATH", help="an input file to hash")
    parser.add_argument("--source", action="append", default=[], metavar="GLOB",
                        help="repository files the measurement depends on (each glob must match)")
    parser.add_argument("--outputs-tolerance", type=float, metavar="REL_L2",
                        help="most relative L2 distance of each sample's outputs_sample from the first arm's")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per sample (default 1800)")
    parser.add_argument("--replace", action="store_true", help="replace an existing artifact at --out")
    parser.add_argument("--repo-root", type=Path, default=Path.cwd(), help="repository root (default: here)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    return parser


def _plan(args, parser) -> AbPlan:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    if not _ID.match(args.id):
        parser.error(f"--id {args.id!r}: lower-case letters, digits, '.', '_' and '-' only")
    fixtures = {}
    for spec in args.fixture:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            parser.error(f"--fixture {spec!r}: expected NAME=PATH")
        fixtures[name] = Path(path) if Path(path).is_absolute() else args.repo_root / path
    try:
        variable = parse_variable(args.env_var, args.arg_option)
        arms = parse_arms(args.arm)
    except ArmsError as exc:
        parser.error(str(exc))
    return AbPlan(args.id, command, variable, arms, MetricSpec(args.metric, args.pattern), args.repo_root.resolve(),
                  samples=args.samples, warmup=args.warmup, unit=args.unit, higher_is_better=not args.lower_is_better,
                  fixtures=fixtures, sources=list(args.source), timeout_s=args.timeout,
                  outputs_tolerance=args.outputs_tolerance)


def output_path(out: Path, repo_root: Path, replace: bool) -> Path:
    """The resolved artifact path: inside the repository, a regular file or absent."""
    target = (out if out.is_absolute() else Path.cwd() / out)
    parent = target.parent.resolve()
    root = repo_root.resolve()
    if parent != root and root not in parent.parents:
        raise AbError(f"--out {out}: outside the repository {root}")
    if any(ord(c) < 32 for c in target.name):
        raise AbError(f"--out {out!r}: the file name holds a control character")
    target = parent / target.name
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise AbError(f"--out {out}: exists and is not a regular file")
    if target.exists() and not replace:
        raise AbError(f"--out {out}: exists; pass --replace to replace it")
    return target


def write_artifact(target: Path, artifact: dict) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_text(json.dumps(artifact, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, target)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    plan = _plan(args, parser)
    try:
        target = output_path(args.out, plan.repo_root, args.replace)
        signing_key = signing_key_from_environment()
        artifact = run_ab(plan, progress=lambda line: print(line, file=sys.stderr, flush=True),
                          invocation=[sys.executable, "-m", "gates.ab", *(sys.argv[1:] if argv is None else argv)])
        if signing_key is not None:
            artifact = sign(artifact, *signing_key)
        write_artifact(target, artifact)
    except UnreadableKeyError as exc:
        print(f"gates.ab: error: {exc}", file=sys.stderr)
        return 2
    except AbError as exc:
        print(f"gates.ab: refused: {exc}", file=sys.stderr)
        return 1
    for name, arm in artifact["results"]["arms"].items():
        print(f"{name:>12}  median {arm['median']:.4g} {plan.unit}  min {arm['min']:.4g}  max {arm['max']:.4g}  "
              f"n={len(arm['samples'])}")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
