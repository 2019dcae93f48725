"""`python -m lab.quantized.measure_variants --variants SPEC[,SPEC...] [measure options]`: the harness of
`lab.quantized.measure` over a chosen list of lab variant specs, tile overrides included
(`cvt16,cvt16:w8,cvt16:n64,cvt16:n256:s2`), in place of its default `LAB_VARIANTS`. Each 8-bit format times the specs
it takes. `measure.py` itself stays as the committed profile artifact measured it.
"""

from __future__ import annotations

import argparse
import sys

from . import measure
from .lab_route import variant


def chosen_variants(specs: list[str]) -> dict[str, tuple[str, ...]]:
    """The lab routes per 8-bit format: the specs that format takes, in the order given."""
    return {fmt: tuple(spec for spec in specs if fmt in variant(spec).formats) for fmt in measure.LAB_VARIANTS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", required=True, type=lambda s: [x for x in s.split(",") if x],
                        help="lab variant specs, e.g. cvt16,cvt16:w8,cvt16:n64")
    args, rest = parser.parse_known_args(argv)
    measure.LAB_VARIANTS = chosen_variants(args.variants)
    return measure.main(rest)


if __name__ == "__main__":
    sys.exit(main())
