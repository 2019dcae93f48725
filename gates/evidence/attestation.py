"""Attested evidence: an Ed25519 signature over an artifact, made on a trusted runner.

The signed bytes are the artifact's canonical form: the artifact object without its
`attestation` member, serialised as JSON with sorted keys, `separators=(",", ":")`
and `ensure_ascii=False`, encoded as UTF-8 (`canonical_bytes`). The signature block:

    "attestation": {"key_id": "h200-runner", "algorithm": "ed25519", "signature": "<base64>"}

The public keys and which evidence kinds must be attested come from the policy at
the change's base (`attestation.keys`, `attestation.required`); a record's level is
the highest policy level among the existing files its `covers` globs match. The
private key exists only on the runner: `signing_key_from_environment` reads it from
`DESIGN_GATES_SIGNING_KEY` (base64 of the 32 raw bytes, or PEM) or from the file named
by `DESIGN_GATES_SIGNING_KEY_FILE`, never from the repository.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gates.model.policy import LEVELS

ALGORITHM = "ed25519"
KEY_ENV = "DESIGN_GATES_SIGNING_KEY"
KEY_FILE_ENV = "DESIGN_GATES_SIGNING_KEY_FILE"
KEY_ID_ENV = "DESIGN_GATES_SIGNING_KEY_ID"


class UnreadableKeyError(ValueError):
    """A key that cannot be read (wrong length, not base64, not Ed25519)."""


def canonical_bytes(artifact: dict) -> bytes:
    """The bytes a signature covers: the artifact without `attestation`, canonical JSON, UTF-8."""
    body = {key: value for key, value in artifact.items() if key != "attestation"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _decode_key_text(text: str) -> bytes | None:
    """Raw bytes of a base64 key, or None for PEM text."""
    text = text.strip()
    if text.startswith("-----BEGIN"):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise UnreadableKeyError("the key is neither base64 nor PEM") from None


def load_public_key(text: str) -> Ed25519PublicKey:
    """An Ed25519 public key from base64 of its 32 raw bytes, or from a PEM block; it must be a point of the
    curve's prime-order subgroup (`prime_order_problem`)."""
    key = _load_key(text, "public", lambda pem: serialization.load_pem_public_key(pem), Ed25519PublicKey,
                    Ed25519PublicKey.from_public_bytes, (ValueError, UnicodeEncodeError))
    problem = prime_order_problem(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    if problem:
        raise UnreadableKeyError(problem)
    return key


def prime_order_problem(raw: bytes) -> str | None:
    """Why 32 bytes are not an Ed25519 public key a signature can be trusted under; None when they are.

    A key must encode, canonically, a point of the curve's subgroup of prime order. A point of small
    order (the all-zero key, the identity, and the other torsion points) has no secret behind it:
    signatures "verify" under it for messages nobody signed. libsodium's check (through PyNaCl)
    decides: on the curve, canonical, not of small order, in the prime-order subgroup.
    """
    try:
        from nacl.bindings import crypto_core_ed25519_is_valid_point
    except ImportError:
        return "PyNaCl, which checks that a key is a point of prime order, is not installed: pip install pynacl"
    if not crypto_core_ed25519_is_valid_point(bytes(raw)):
        return ("it is not a point of the Ed25519 prime-order subgroup (a small-order, non-canonical or mixed-order "
                "encoding such as the all-zero key): signatures under it can be forged without a private key")
    return None


def load_private_key(text: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from base64 of its 32 raw bytes, or from an unencrypted PEM block."""
    return _load_key(text, "private", lambda pem: serialization.load_pem_private_key(pem, password=None),
                     Ed25519PrivateKey, Ed25519PrivateKey.from_private_bytes, (ValueError, TypeError, UnicodeEncodeError))


def _load_key(text: str, kind: str, load_pem, key_type, from_raw, errors):
    """An Ed25519 key of `kind` ("public" or "private"), from base64 of its 32 raw bytes or from PEM."""
    raw = _decode_key_text(text)
    try:
        if raw is None:
            key = load_pem(text.strip().encode("ascii"))
            if not isinstance(key, key_type):
                raise UnreadableKeyError(f"the PEM key is {type(key).__name__}, not Ed25519")
            return key
        if len(raw) != 32:
            raise UnreadableKeyError(f"an Ed25519 {kind} key is 32 bytes, this one is {len(raw)}")
        return from_raw(raw)
    except errors as exc:
        if isinstance(exc, UnreadableKeyError):
            raise
        raise UnreadableKeyError(f"not a readable {kind} key: {exc}") from None


def public_key_text(key: Ed25519PublicKey) -> str:
    """Base64 of the 32 raw public bytes: the form to paste into the policy."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def private_key_text(key: Ed25519PrivateKey) -> str:
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    return base64.b64encode(raw).decode("ascii")


def signing_key_from_environment(environ=None) -> tuple[str, Ed25519PrivateKey] | None:
    """(key id, private key) from the runner's environment, None when no key is set there.

    Raises `UnreadableKeyError` when a key is set but unreadable or has no key id.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(KEY_ENV)
    if not text and environ.get(KEY_FILE_ENV):
        try:
            with open(environ[KEY_FILE_ENV], encoding="ascii") as handle:
                text = handle.read(64 * 1024)
        except (OSError, UnicodeDecodeError) as exc:
            raise UnreadableKeyError(f"{KEY_FILE_ENV}: cannot read {environ[KEY_FILE_ENV]}: {exc}") from None
    if not text:
        return None
    key_id = environ.get(KEY_ID_ENV, "").strip()
    if not key_id:
        raise UnreadableKeyError(f"a signing key is set but {KEY_ID_ENV} (the key's id in the policy) is not")
    return key_id, load_private_key(text)


def sign(artifact: dict, key_id: str, private_key: Ed25519PrivateKey) -> dict:
    """A copy of `artifact` carrying an attestation over its canonical form."""
    signature = private_key.sign(canonical_bytes(artifact))
    body = {key: value for key, value in artifact.items() if key != "attestation"}
    body["attestation"] = {"key_id": key_id, "algorithm": ALGORITHM,
                           "signature": base64.b64encode(signature).decode("ascii")}
    return body


@dataclass(frozen=True)
class TrustedKeys:
    """The policy's `attestation` section: public keys by id and required kinds per level."""

    keys: dict  # key id -> public key text
    required: dict  # level -> list of kinds

    @classmethod
    def from_section(cls, section: dict) -> "TrustedKeys":
        keys = {item["id"]: item["public_key"] for item in section.get("keys") or [] if isinstance(item, dict)}
        return cls(keys, dict(section.get("required") or {}))

    def required_kinds(self, level: str) -> set[str]:
        """Kinds that must be attested at `level`: those listed for it or for any lower level."""
        kinds: set[str] = set()
        for name in LEVELS[: LEVELS.index(level) + 1] if level in LEVELS else ():
            kinds.update(self.required.get(name) or [])
        return kinds

    def describe(self) -> str:
        return ", ".join(sorted(self.keys)) or "none: the policy lists no attestation.keys"


def verification_problem(artifact: dict, trusted: TrustedKeys) -> str | None:
    """Why `artifact`'s attestation does not hold against the trusted keys; None when it does."""
    block = artifact.get("attestation")
    if not isinstance(block, dict):
        return f"is not attested; it must be signed by a trusted runner key ({trusted.describe()})"
    key_id = block.get("key_id")
    if block.get("algorithm") != ALGORITHM:
        return f"is signed with {block.get('algorithm')!r}, not {ALGORITHM}"
    if key_id not in trusted.keys:
        return f"is signed by key {key_id!r}, which the policy does not trust (trusted: {trusted.describe()})"
    try:
        public_key = load_public_key(trusted.keys[key_id])
    except UnreadableKeyError as exc:
        return f"cannot be checked: the policy's key {key_id!r} is unreadable ({exc})"
    try:
        signature = base64.b64decode(str(block.get("signature", "")), validate=True)
        public_key.verify(signature, canonical_bytes(artifact))
    except (binascii.Error, ValueError, InvalidSignature):
        return f"has a signature that does not verify with key {key_id!r}: the artifact was changed after signing or signed by another key"
    return None
