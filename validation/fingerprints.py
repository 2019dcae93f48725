"""Output fingerprints: SHA-256 of the output bytes of seeded fixtures, keyed by backend.

`validation/fingerprints.json` holds the committed ones as {backend_key: {fixture_key: sha256}}.
A refactor that changes any output bit changes a fingerprint; accepting that change is
a decision (a design-record question), recorded by refreshing the file explicitly:

    python -m validation.fingerprints --update                 # this machine's backend
    python -m validation.fingerprints --from-artifact docs/evidence/bitwise-matrix-h200.json
    python -m validation.fingerprints                          # compare, exit 1 on a difference
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch

from .environment import backend_key, device
from .fixtures import build_fixture, tensor_sha256
from .routes import Route, run_route
from .shapes import CPU_CASES

FINGERPRINTS_PATH = Path(__file__).resolve().parent / "fingerprints.json"
FINGERPRINT_CASES = (CPU_CASES[1], CPU_CASES[3], CPU_CASES[4], CPU_CASES[6])
FINGERPRINT_ROUTES = (Route(paged=True), Route(paged=False, num_splits=5))
DTYPES = ("bf16", "fp16")


def fingerprint_targets():
    """(fixture key, case, dtype, route) of every fingerprinted output."""
    for case in FINGERPRINT_CASES:
        for dtype in DTYPES:
            for route in FINGERPRINT_ROUTES:
                yield f"{case.id}-{dtype}-{route.id}", case, dtype, route


def compute_one(case, dtype, route) -> str:
    fx = build_fixture(case, dtype, device())
    return tensor_sha256(run_route(fx, route))


def quant_fingerprint_targets():
    """(fixture key, QuantCase, route) of every fingerprinted quantized-cache output (keys end in the format)."""
    from .quantized import QUANT_CPU_CASES

    for qcase in QUANT_CPU_CASES:
        for route in FINGERPRINT_ROUTES:
            yield f"{qcase.id}-{route.id}", qcase, route


def compute_quant_one(qcase, route) -> str:
    from .quantized import build_quant_fixture, run_quant_route

    return tensor_sha256(run_quant_route(build_quant_fixture(qcase, device()), route))


def compute_fingerprints() -> dict[str, str]:
    prints = {key: compute_one(case, dtype, route) for key, case, dtype, route in fingerprint_targets()}
    prints.update((key, compute_quant_one(qcase, route)) for key, qcase, route in quant_fingerprint_targets())
    return prints


def load_committed(path: Path = FINGERPRINTS_PATH) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: expected {{backend_key: {{fixture_key: sha256}}}}")
    return data


def save_committed(data: dict, path: Path = FINGERPRINTS_PATH) -> None:
    ordered = {backend: dict(sorted(prints.items())) for backend, prints in sorted(data.items())}
    path.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.fingerprints", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--update", action="store_true", help="recompute on this backend and write fingerprints.json")
    group.add_argument("--from-artifact", metavar="PATH", help="copy results.fingerprints of a bitwise artifact")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    committed = load_committed()
    if args.from_artifact:
        artifact = json.loads(Path(args.from_artifact).read_text(encoding="utf-8"))
        results = artifact.get("results", {})
        if artifact.get("kind") != "bitwise" or "backend" not in results or "fingerprints" not in results:
            print(f"{args.from_artifact}: not a bitwise artifact with results.backend and results.fingerprints", file=sys.stderr)
            return 2
        committed[results["backend"]] = results["fingerprints"]
        save_committed(committed)
        print(f"wrote {len(results['fingerprints'])} fingerprints for {results['backend']} to {FINGERPRINTS_PATH}")
        return 0
    backend = backend_key()
    current = compute_fingerprints()
    if args.update:
        committed[backend] = current
        save_committed(committed)
        print(f"wrote {len(current)} fingerprints for {backend} to {FINGERPRINTS_PATH}")
        return 0
    expected = committed.get(backend)
    if expected is None:
        print(f"no committed fingerprints for backend {backend}; record them with --update")
        return 1
    changed = sorted(k for k in set(expected) | set(current) if expected.get(k) != current.get(k))
    for key in changed:
        print(f"{key}: committed {expected.get(key)} now {current.get(key)}")
    print(f"{backend}: {len(current) - len(changed)}/{len(current)} fingerprints unchanged")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
