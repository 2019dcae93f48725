"""Create the Ed25519 key pair of a trusted runner that signs evidence artifacts.

    gate-check key new --id h200-runner --out ~/h200-runner.key

Writes the private key (base64 of its 32 raw bytes, file mode 0600) to `--out`,
which must lie outside the repository and must not exist yet, and prints the public
half as the policy entry to paste under `attestation.keys` in
`.design-gates/policy.yaml`. Store the private key as a CI secret of the trusted runner
only (`DESIGN_GATES_SIGNING_KEY`, or a file named by `DESIGN_GATES_SIGNING_KEY_FILE`,
with `DESIGN_GATES_SIGNING_KEY_ID` set to the id).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gates.evidence.attestation import KEY_ENV, KEY_ID_ENV, private_key_text, public_key_text
from gates.model.errors import UsageError
from gates.frontends.subcommand_options import add_subcommand_options

KEY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def add_arguments(parser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    new = actions.add_parser("new", help="create a key pair; print the public half for the policy")
    new.add_argument("--id", required=True, help="the key's id in the policy, e.g. h200-runner")
    new.add_argument("--out", required=True, type=Path, help="where to write the PRIVATE key (outside the repository)")
    add_subcommand_options(new)


def _repository_holding(folder: Path, repo_root: Path, *, explicit: bool) -> Path | None:
    """The repository `folder` lies in: any git checkout, or `--repo-root` when given; else None.

    Without `--repo-root` outside a checkout, the current folder is no repository, so a
    key may be written below it."""
    from gates.history.git_repo import checkout_of

    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    found = checkout_of(probe)
    if found is not None:
        return found[0]
    if explicit and (folder == repo_root or repo_root in folder.parents):
        return repo_root
    return None


def run(args, repo_root: Path) -> int:
    if not KEY_ID.match(args.id):
        raise UsageError(f"--id {args.id!r} must match {KEY_ID.pattern}")
    out = Path(os.path.abspath(os.path.expanduser(args.out)))
    holder = _repository_holding(Path(os.path.realpath(out.parent)), Path(os.path.realpath(repo_root)),
                                 explicit=getattr(args, "repo_root", None) is not None)
    if holder is not None:
        raise UsageError(f"--out {args.out} lies inside the repository {holder}; a private key never belongs there "
                         "(write it elsewhere and store it as a CI secret of the trusted runner)")
    key = Ed25519PrivateKey.generate()
    try:
        descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"--out {args.out} exists; refusing to overwrite a key") from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(private_key_text(key) + "\n")
    print(f"private key written to {out} (keep it on the trusted runner only: {KEY_ENV} or "
          f"{KEY_ENV}_FILE, with {KEY_ID_ENV}={args.id})")
    print("add the public half to .design-gates/policy.yaml (read at the base of every change):\n")
    print("attestation:\n  keys:\n"
          f"    - {{id: {args.id}, public_key: \"{public_key_text(key.public_key())}\"}}")
    return 0
