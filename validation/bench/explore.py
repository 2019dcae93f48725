"""Launch-config exploration of the project's kernels on benchmark shapes.

Times the project's split-KV route (`attention_decode_splitkv`, or the single pass
at one split) with the partial kernel's (BLOCK_N, warps, stages) replaced by a
candidate, at a few split counts, each call checked against the fp64 oracle before
it is timed (the same graph-replay timing as the benchmark). It only measures: the
configuration the project runs is the one in `kernels/decode_attention/launch_config.py`,
which may depend on head dim, G x R and dtype alone.

    python -m validation.bench.explore --out explore.json
    python -m validation.bench.explore --out explore.json --plan llama8b-b1-32k:default,n64-w8-s3:32,64

Interrupted (SIGINT), it still writes what it measured and prints the table.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass

from .recorded_run import probe_command

DEFAULT = "default"

# Label options that turn one launch-config switch off: option -> field.
OFF_SWITCHES = {
    "hm": "split_major",
    "nopf": "prefetch_pages",
    "noch": "chain_pdl",
    "nosp": "scalar_pages",
    "nofc": "fused_combine",
    "nomt": "merge_trigger",
    "nopdl": "combine_pdl",
    "noum": "inner_unmasked",
}
KV_FORMATS = ("bf16", "int8", "fp8")


@dataclass(frozen=True)
class Candidate:
    """A launch config to try: `default` (launch_config.py's), or `n<BLOCK_N>-w<warps>-s<stages>`,
    either followed by options: `hm` (head-major grid instead of split-major), `t<0|1|2>`
    (where the partial kernel lets the combine start: never, at start, after the loop),
    `nopdl` (combine launched without PDL), `nopf` (paged: no page-id prefetch),
    `cw<warps>` (combine warps), `m<rows>` (BLOCK_M: query rows per program, a power of two),
    `noch` (no PDL chain into the partial kernel), `nosp` (paged look-ahead of one page id per token),
    `nofc` (a combine kernel even where the merge could be fused into the partial kernel),
    `nomt` (a launch that merges in place lets the next launch start only when it ends),
    `noum` (every tile masks its scores, also those every real row sees whole).
    For example `default-hm-nopdl` or `n64-w8-s3-t2-m32`."""

    label: str

    def fields(self) -> tuple[int, int, int] | None:
        """(BLOCK_N, warps, stages), or None to keep the default's."""
        base, _ = self._split()
        if base is None:
            return None
        try:
            parts = base.split("-")
            if len(parts) != 3 or [p[0] for p in parts] != ["n", "w", "s"]:
                raise ValueError
            block_n, warps, stages = (int(p[1:]) for p in parts)
        except ValueError:
            raise ValueError(self._error()) from None
        return block_n, warps, stages

    def options(self) -> dict:
        """The option fields the label sets (split_major, pdl_trigger, prefetch_pages, combine_pdl, combine_warps,
        block_m, chain_pdl, scalar_pages, fused_combine, merge_trigger, inner_unmasked)."""
        _, opts = self._split()
        found: dict = {}
        for opt in opts:
            if opt in OFF_SWITCHES:
                found[OFF_SWITCHES[opt]] = False
            elif opt[:1] == "t" and opt[1:] in ("0", "1", "2"):
                found["pdl_trigger"] = int(opt[1:])
            elif opt[:2] == "cw" and opt[2:].isdigit():
                found["combine_warps"] = int(opt[2:])
            elif opt[:1] == "m" and opt[1:].isdigit() and int(opt[1:]) >= 16 and int(opt[1:]) & (int(opt[1:]) - 1) == 0:
                found["block_m"] = int(opt[1:])
            else:
                raise ValueError(self._error())
        return found

    def _split(self) -> tuple[str | None, list[str]]:
        parts = self.label.split("-")
        if parts[0] == DEFAULT:
            return None, parts[1:]
        return "-".join(parts[:3]), parts[3:]

    def _error(self) -> str:
        return f"candidate must be 'default' or look like n64-w4-s3, with options {', '.join(OFF_SWITCHES)}, t0-t2, cw<n>, m<power of two>, got {self.label!r}"


# (shape, candidates, split counts), most informative first: the run may be cut short.
PLAN: tuple[tuple[str, tuple[str, ...], tuple[int, ...], bool], ...] = (
    ("seed-qwen0.5b-2k", (DEFAULT, "default-hm", "default-nopdl", "default-t2", "n128-w4-s3", "n128-w4-s2"), (8, 16, 32), False),
    ("llama8b-b1-4k", (DEFAULT, "default-hm", "default-nopdl", "default-t2", "n64-w4-s2"), (8, 16, 32), False),
    ("llama8b-b1-32k", (DEFAULT, "default-hm", "default-nopdl", "default-t2", "n128-w4-s2", "n128-w8-s2", "n64-w4-s4"), (32, 48), False),
    ("llama70b-tp8-b4-32k", (DEFAULT, "default-hm", "default-nopdl", "n64-w8-s3", "n64-w4-s4"), (32, 48, 64), False),
    ("h24kv4d256-b1-20k", (DEFAULT, "default-hm", "default-nopdl", "default-cw8"), (16, 32), True),
    ("h24kv4d256-b1-20k-r16", (DEFAULT, "default-nopdl", "default-cw8"), (8, 16), True),
    ("llama8b-b1-128k", (DEFAULT, "default-hm"), (32, 64), False),
    ("llama8b-b8-8k", (DEFAULT, "default-hm"), (4, 8), False),
    ("llama8b-b64-2k", (DEFAULT, "n64-w4-s3"), (1, 2), True),
)


def parse_plan(items: list[str]) -> tuple:
    """`shape:cand,cand:splits,splits[:paged]` items, or the built-in PLAN when empty."""
    if not items:
        return PLAN
    plan = []
    for item in items:
        parts = item.split(":")
        if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != "paged"):
            raise ValueError(f"plan item must look like shape:default,n64-w8-s3:32,64[:paged], got {item!r}")
        cands = tuple(parts[1].split(","))
        for c in cands:
            Candidate(c).fields()
            Candidate(c).options()
        plan.append((parts[0], cands, tuple(int(s) for s in parts[2].split(",")), len(parts) == 4))
    return tuple(plan)


@contextmanager
def partial_config(candidate: Candidate):
    """Replace the kernels' launch configs as the candidate says (BLOCK_M kept unless `m<rows>`) while inside."""
    from dataclasses import replace

    from kernels.decode_attention import api
    from kernels.decode_attention.launch_config import LaunchConfig

    fields = candidate.fields()
    options = candidate.options()
    original = (api.partial_launch_config, api.combine_launch_config)
    partial_fields = {k: v for k, v in options.items() if k in LaunchConfig.__dataclass_fields__}
    if fields is not None:
        partial_fields.update(block_n=fields[0], num_warps=fields[1], num_stages=fields[2])
    combine_fields = {}
    if "combine_warps" in options:
        combine_fields["num_warps"] = options["combine_warps"]
    if options.get("combine_pdl") is False:
        combine_fields["use_pdl"] = False

    def patched_partial(head_dim, group_rows, dtype, **kwargs):
        return replace(original[0](head_dim, group_rows, dtype, **kwargs), **partial_fields)

    def patched_combine(head_dim, num_splits, **kwargs):
        return replace(original[1](head_dim, num_splits, **kwargs), **combine_fields)

    api.partial_launch_config, api.combine_launch_config = patched_partial, patched_combine
    try:
        yield
    finally:
        api.partial_launch_config, api.combine_launch_config = original


def _call(shape, x, splits: int, paged: bool, cache=None):
    """The route's call on the fixture; `cache` a quantized cache (`fixtures.quantize_inputs`) or None for bf16."""
    from .impls import quantized_route_impls

    contiguous, paged_impl = quantized_route_impls(shape, x, cache, splits)
    return paged_impl.call if paged else contiguous.call


def _shape(name: str):
    """A shape of the public matrix, or else of the model matrix, by name."""
    from .shapes import select

    try:
        return select([name])
    except ValueError:
        pass
    try:
        return select([name], matrix="models")
    except ValueError:
        raise ValueError(f"unknown shape {name!r}: in neither the public nor the model matrix "
                         "(validation/bench/shapes.py)") from None


def run(plan, seed: int, rows: list[dict], write, kv_formats=("bf16",)) -> None:
    import torch

    from . import correctness, fixtures
    from .timing import time_call

    for name, cands, split_counts, with_paged in plan:
        (shape,) = _shape(name)
        x = fixtures.make_inputs(shape, seed=seed)
        for kv_format in kv_formats:
            cache = None if kv_format == "bf16" else fixtures.quantize_inputs(x, kv_format)
            k_ref, v_ref = (x.k, x.v) if cache is None else cache.dequantized()
            ref = correctness._dense_fp64(x.q, k_ref, v_ref, x.visible_tokens)
            del k_ref, v_ref
            for label in cands:
                for splits in split_counts:
                    for paged in ((False, True) if with_paged else (False,)):
                        row = {"shape": name, "format": kv_format, "config": label, "splits": splits, "paged": paged}
                        try:
                            with partial_config(Candidate(label)):
                                fn = _call(shape, x, splits, paged, cache)
                                check = correctness.compare(fn(), ref)
                                row["rel_l2"] = check["rel_l2"]
                                if check["passed"]:
                                    row["median_us"] = time_call(fn, cold_l2=not shape.warm_l2).median_us
                                else:
                                    row["error"] = f"correctness failed: {check}"
                        except Exception as exc:  # out of shared memory, compile error: recorded, not fatal
                            row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
                        rows.append(row)
                        print(f"[explore {time.strftime('%H:%M:%S')}] {name} {kv_format} {label} s{splits}"
                              f"{' paged' if paged else ''} {row.get('median_us', float('nan')):.2f} us "
                              f"{row.get('error', '')}", file=sys.stderr, flush=True)
                        write()
            del cache, ref
        del x
        torch.cuda.empty_cache()


def table(rows: list[dict]) -> str:
    """Per shape: each measurement, and its time over the shape's fastest contiguous default."""
    lines = ["| shape | format | config | splits | paged | us | x default best |", "|---|---|---|---|---|---|---|"]
    for name, kv_format in dict.fromkeys((r["shape"], r.get("format", "bf16")) for r in rows):
        mine = [r for r in rows if r["shape"] == name and r.get("format", "bf16") == kv_format]
        base = [r["median_us"] for r in mine if r["config"] == DEFAULT and not r["paged"] and "median_us" in r]
        best = min(base) if base else None
        for r in sorted(mine, key=lambda r: r.get("median_us", float("inf"))):
            us = r.get("median_us")
            lines.append(f"| {name} | {kv_format} | {r['config']} | {r['splits']} | {'yes' if r['paged'] else ''} | "
                         f"{'-' if us is None else f'{us:.2f}'} | "
                         f"{'-' if us is None or best is None else f'{us / best:.3f}'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    def add_options(parser):
        parser.add_argument("--plan", nargs="*", default=None, help="shape:cand,cand:splits,splits[:paged] items")
        parser.add_argument("--seed", type=int, default=20261129)
        parser.add_argument("--kv-formats", default="bf16",
                            help=f"comma-separated cache formats to run every plan item in, of {','.join(KV_FORMATS)}")

    def prepare(args):
        plan = parse_plan(args.plan or [])
        kv_formats = tuple(f.strip() for f in args.kv_formats.split(","))
        unknown = [f for f in kv_formats if f not in KV_FORMATS]
        if unknown:
            raise ValueError(f"--kv-formats takes {', '.join(KV_FORMATS)}, got {', '.join(unknown)}")
        return lambda rows, write: run(plan, args.seed, rows, write, kv_formats)

    return probe_command(argv, prog="python -m validation.bench.explore", description=__doc__.splitlines()[0],
                         kind="launch-config exploration", add_options=add_options, prepare=prepare, table=table)


if __name__ == "__main__":
    sys.exit(main())
