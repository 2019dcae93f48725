"""Sign an evidence artifact on a trusted runner, or verify its attestation.

    gate-check attest sign docs/evidence/numeric-matrix-h200.json
    gate-check attest verify docs/evidence/numeric-matrix-h200.json [--public-key KEY]

`sign` reads the private key from `DESIGN_GATES_SIGNING_KEY` (base64 of the 32 raw
bytes, or PEM) or the file named by `DESIGN_GATES_SIGNING_KEY_FILE`, and its id from
`DESIGN_GATES_SIGNING_KEY_ID`; never from the repository. It rewrites the artifact in
place with an `attestation` block over the canonical form (the object without
`attestation`, sorted keys, separators `,` `:`, UTF-8 without escapes); remember to
update the record's `sha256` pin. `verify` checks the signature against the keys of
the working tree's policy (`attestation.keys`) or against `--public-key`
(`ID=BASE64`). Exit codes: 0 valid, 1 not attested or not valid, 2 unreadable input.
"""

from __future__ import annotations

import json
from pathlib import Path

from gates.evidence.artifacts import parse_artifact, read_regular_file
from gates.evidence.attestation import TrustedKeys, UnreadableKeyError, sign, signing_key_from_environment, verification_problem
from gates.model.errors import InputError, UsageError
from gates.model.paths import resolve_inside, to_rel
from gates.model.policy import load_policy
from gates.frontends.subcommand_options import add_subcommand_options


def add_arguments(parser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    signer = actions.add_parser("sign", help="add an attestation to an artifact (on the trusted runner)")
    signer.add_argument("files", nargs="+", type=Path, metavar="FILE")
    add_subcommand_options(signer)
    checker = actions.add_parser("verify", help="check an artifact's attestation")
    checker.add_argument("files", nargs="+", type=Path, metavar="FILE")
    checker.add_argument("--public-key", action="append", default=[], metavar="ID=KEY",
                         help="trust this key instead of the policy's (repeatable)")
    add_subcommand_options(checker)


def _read(path: Path, repo_root: Path) -> tuple[Path, str, dict]:
    resolved = resolve_inside(repo_root, str(path.resolve() if path.is_absolute() else Path.cwd() / path))
    if resolved is None:
        raise UsageError(f"{path} lies outside the repository {repo_root}")
    label = to_rel(repo_root, resolved)
    data, _ = parse_artifact(read_regular_file(resolved, label), label)
    return resolved, label, data


def _trusted(args, repo_root: Path) -> TrustedKeys:
    if args.public_key:
        keys = {}
        for item in args.public_key:
            key_id, sep, text = item.partition("=")
            if not sep or not key_id or not text:
                raise UsageError(f"--public-key {item!r} must look like ID=BASE64")
            keys[key_id] = text
        return TrustedKeys(keys, {})
    policy = load_policy(repo_root)
    return TrustedKeys.from_section(policy.section("attestation") if policy else {})


def run(args, repo_root: Path) -> int:
    if args.action == "sign":
        try:
            found = signing_key_from_environment()
        except UnreadableKeyError as exc:
            raise UsageError(f"signing key: {exc}") from None
        if found is None:
            raise UsageError("no signing key: set DESIGN_GATES_SIGNING_KEY or DESIGN_GATES_SIGNING_KEY_FILE "
                             "(and DESIGN_GATES_SIGNING_KEY_ID) on the trusted runner")
        key_id, private_key = found
        for path in args.files:
            resolved, label, data = _read(path, repo_root)
            signed = sign(data, key_id, private_key)
            resolved.write_text(json.dumps(signed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{label}: signed with key {key_id!r}")
        return 0
    trusted = _trusted(args, repo_root)
    failed = 0
    for path in args.files:
        try:
            _, label, data = _read(path, repo_root)
        except InputError as exc:
            print(f"{exc.path}:{exc.line}:{exc.col}: error: {exc.message}")
            failed = max(failed, 2)
            continue
        problem = verification_problem(data, trusted)
        if problem:
            print(f"{label}:1:1: error: artifact {problem}")
            failed = max(failed, 1)
        else:
            print(f"{label}: attested by key {data['attestation']['key_id']!r}: signature valid")
    return failed
