"""How fast can a kernel that only reads a shape's KV bytes be, under the benchmark's timing?

The benchmark's "read us" column times one read kernel over exactly a shape's KV
bytes. This probe times the read kernel in 32 shapes (elements per load, loads per
program, warps) on the same bytes, the same way (graph replay; cold L2 for shapes of
64 MB and more), checks every sum, and reports the fastest against the kernel's first
shape (64 K elements per program, 8 warps): a floor that a decode kernel, which must
read every one of those bytes, is measured against, and the evidence for the shape
the benchmark reads with (`read_kernel.STREAM_READ`).

    python -m validation.bench.read_floor --out read-floor.json
    python -m validation.bench.read_floor --out read-floor.json --shapes llama8b-b1-32k llama70b-tp8-b4-32k
"""

from __future__ import annotations

import sys
import time

from .read_kernel import BLOCK, TILES_PER_PROGRAM
from .recorded_run import probe_command

DEFAULT_READ = (BLOCK, TILES_PER_PROGRAM, 8)
READ_SHAPES: tuple[tuple[int, int, int], ...] = tuple(
    (block, tiles, warps)
    for block in (2048, 4096, 8192)
    for tiles in (2, 4, 16, 64)
    for warps in (4, 8, 16)
    if block // (32 * warps) >= 8  # at least one 16-byte load per thread
)
"""(elements per load, loads per program, warps) tried on every shape; the default among them."""


def label(read_shape: tuple[int, int, int]) -> str:
    block, tiles, warps = read_shape
    return f"b{block}-t{tiles}-w{warps}"


def run(shapes, read_shapes, rows: list[dict], write) -> None:
    from .read_kernel import ReadPass
    from .timing import time_call

    for shape in shapes:
        for read_shape in read_shapes:
            block, tiles, warps = read_shape
            row = {"shape": shape.name, "kv_bytes": shape.kv_bytes, "read": label(read_shape),
                   "default": read_shape == DEFAULT_READ, "cold_l2": not shape.warm_l2}
            try:
                reader = ReadPass(shape.kv_bytes, block=block, tiles=tiles, num_warps=warps)
                timing = time_call(reader, cold_l2=not shape.warm_l2)
                reader.check()
                row["median_us"] = timing.median_us
                row["method"] = timing.method
                del reader
            except Exception as exc:  # a config the compiler refuses is recorded, not fatal
                row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            rows.append(row)
            print(f"[read-floor {time.strftime('%H:%M:%S')}] {shape.name} {row['read']} "
                  f"{row.get('median_us', float('nan')):.2f} us {row.get('error', '')}", file=sys.stderr, flush=True)
            write()


def table(rows: list[dict]) -> str:
    """Per shape: the default read kernel's time, the fastest read found, and their ratio."""
    lines = ["| shape | KV MB | default read us | fastest read us | config | fastest / default |",
             "|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["shape"] for r in rows):
        timed = [r for r in rows if r["shape"] == name and "median_us" in r]
        default = next((r["median_us"] for r in timed if r["default"]), None)
        best = min(timed, key=lambda r: r["median_us"], default=None)
        kv_mb = next(r["kv_bytes"] for r in rows if r["shape"] == name) / 1e6
        if best is None:
            lines.append(f"| {name} | {kv_mb:.1f} | - | - | - | - |")
            continue
        ratio = "-" if default is None else f"{best['median_us'] / default:.3f}"
        lines.append(f"| {name} | {kv_mb:.1f} | {'-' if default is None else f'{default:.2f}'} | "
                     f"{best['median_us']:.2f} | {best['read']} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from .shapes import select

    def add_options(parser):
        parser.add_argument("--shapes", nargs="*", default=None, help="shape names (default: the whole matrix)")

    def prepare(args):
        shapes = select(args.shapes)
        return lambda rows, write: run(shapes, READ_SHAPES, rows, write)

    return probe_command(argv, prog="python -m validation.bench.read_floor", description=__doc__.splitlines()[0],
                         kind="read floor", add_options=add_options, prepare=prepare, table=table)


if __name__ == "__main__":
    sys.exit(main())
