"""Time the committed KV loop or the rotated one (`rotated.py`) on bench and model-matrix shapes.

    python lab/rotated_loop/measure.py --variant committed --out committed.json
    python lab/rotated_loop/measure.py --variant rotated --out rotated.json
    python lab/rotated_loop/measure.py --compare committed.json rotated.json

One variant per process: the loop is swapped before the first compile. Per shape it runs the
layer's route (split-KV at the layer's count, or the single pass where that count is 1) and,
for comparison, split-KV at half and twice that count, contiguous and paged; every output is
checked against the fp64 oracle, hashed (so two variants' bits can be compared), then timed
by CUDA-graph replay as the benchmark times it. The same-size read pass is timed once per shape.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHAPES = ("h24kv4d256-b1-20k", "h24kv4d256-b1-20k-r16", "llama70b-tp8-b4-32k", "llama8b-b1-32k",
          "llama8b-b1-4k", "llama8b-b8-8k", "llama8b-b64-2k", "Llama-3.2-1B-tp1-b1-32k",
          "Qwen2.5-0.5B-tp1-b1-32k", "Llama-3.1-405B-tp8-b1-32k")


def _digest(t) -> str:
    return hashlib.sha256(t.contiguous().view(-1).view(__import__("torch").uint8).cpu().numpy()).hexdigest()[:16]


def run(variant: str, out: Path, seed: int) -> None:
    if variant == "rotated":
        import rotated
        rotated.install()
    import torch

    from kernels.decode_attention import (attention_decode, attention_decode_paged, attention_decode_paged_splitkv,
                                          attention_decode_splitkv)
    from kernels.decode_layer import layer_num_splits
    from validation.bench import correctness, fixtures
    from validation.bench.explore import _shape
    from validation.bench.read_kernel import STREAM_READ, ReadPass
    from validation.bench.timing import time_call

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    result = {"variant": variant, "device": torch.cuda.get_device_name(0), "sms": sms, "rows": []}
    for name in SHAPES:
        (shape,) = _shape(name)
        x = fixtures.make_inputs(shape, seed=seed)
        ref = correctness._dense_fp64(x.q, x.k, x.v, x.visible_tokens)
        layer = layer_num_splits(shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.batch, shape.rows,
                                 shape.context, num_sms=sms)
        reader = ReadPass(shape.kv_bytes, **STREAM_READ)
        read_us = time_call(reader, cold_l2=not shape.warm_l2).median_us
        del reader
        for splits in sorted({max(1, layer // 2), layer, min(128, layer * 2)}):
            for paged in (False, True):
                if splits == 1:
                    fn = (lambda: attention_decode_paged(x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens)) \
                        if paged else (lambda: attention_decode(x.q, x.k, x.v, x.visible_tokens))
                elif paged:
                    fn = lambda s=splits: attention_decode_paged_splitkv(  # noqa: E731
                        x.q, x.k_paged, x.v_paged, x.block_table, x.visible_tokens, num_splits=s)
                else:
                    fn = lambda s=splits: attention_decode_splitkv(x.q, x.k, x.v, x.visible_tokens, num_splits=s)  # noqa: E731
                row = {"shape": name, "splits": splits, "layer_splits": layer, "paged": paged, "read_us": read_us}
                try:
                    o = fn()
                    check = correctness.compare(o, ref)
                    row.update(rel_l2=check["rel_l2"], passed=check["passed"], bits=_digest(o))
                    if check["passed"]:
                        row["median_us"] = time_call(fn, cold_l2=not shape.warm_l2).median_us
                except Exception as exc:  # recorded, not fatal
                    row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                result["rows"].append(row)
                print(f"[{variant} {time.strftime('%H:%M:%S')}] {name} s{splits}{' paged' if paged else ''} "
                      f"{row.get('median_us', float('nan')):.2f} us (read {read_us:.2f}) {row.get('error', '')}",
                      file=sys.stderr, flush=True)
                out.write_text(json.dumps(result, indent=1))
        del x, ref
        torch.cuda.empty_cache()


def compare(a_path: Path, b_path: Path) -> int:
    a, b = (json.loads(Path(p).read_text()) for p in (a_path, b_path))
    key = lambda r: (r["shape"], r["splits"], r["paged"])  # noqa: E731
    b_rows = {key(r): r for r in b["rows"]}
    print(f"{a['variant']} ({a['device']}) against {b['variant']} ({b['device']}); x read = time / same-size read pass")
    print(f"| shape | splits | paged | {a['variant']} us | {b['variant']} us | ratio | x read ({a['variant']}) "
          f"| x read ({b['variant']}) | same bits |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in a["rows"]:
        s = b_rows.get(key(r), {})
        ua, ub = r.get("median_us"), s.get("median_us")
        ratio = f"{ub / ua:.3f}" if ua and ub else "-"
        xa = f"{ua / r['read_us']:.3f}" if ua else "-"
        xb = f"{ub / s['read_us']:.3f}" if ub else "-"
        mark = "*" if r["splits"] == r["layer_splits"] else ""
        print(f"| {r['shape']} | {r['splits']}{mark} | {'yes' if r['paged'] else ''} | {ua or '-'} | {ub or '-'} | "
              f"{ratio} | {xa} | {xb} | {r.get('bits') == s.get('bits')} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("committed", "rotated"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    run(args.variant, args.out, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
