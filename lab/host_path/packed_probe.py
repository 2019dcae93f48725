"""One H200 call: what a packed launch costs on the host, and whether a decode call fits in 10 µs.

    python -m lab.host_path.packed_probe --out $OUT/packed.json [--shapes N]

The prototype of the `decode-host-path` record's Q2 (`packed_launch.py`) measured beside the
shipped path, on the serving issue's shapes and three more, in one process. Per shape:
1. host microseconds per call (`validation.bench.host_overhead.host_time_us`: 300 calls
   without synchronization, median of 15 rounds) of every entry point and `DecodeAttention`:
   - `replay`: as shipped (plan key, recorded launcher replay);
   - `packed`: the shipped plan key, each kernel through its packed launch;
   - `guard+packed`: plans by scalars, tensors admitted by `TensorGuards` (Q1), kernels packed;
   - `one-call`: plans by scalars, admitted and launched by one C++ call (`packed_path.py`),
     the layer calling those entry points (`one_call_layer`), and the layer whose route and
     packed call are found by one lookup (`layer_one_lookup`, `packed_path.PackedLayer`);
   and torch SDPA;
2. every variant's output against the shipped path's, bit for bit (NaN-poisoned outputs);
3. per plan the launch path its kernels take, and why one was not packed;
4. the parameter words of a packed partial launch against the words Triton's launcher is
   handed for the same call with another output tensor (recorded through the launcher swap);
5. CUDA-graph capture (U2): the one-call split and the packed layer captured and replayed,
   their outputs against eager's, bit for bit; graph and eager times;
6. the host cost of the one-call plan's launches alone (a C++ loop of 200 launches, median of 25).
With `--light` (for more shapes per call, `--shape B,HQ,HKV,D,S` repeated): host time and bits
of the shipped, packed and one-call variants, the plans' launch paths and the words only.
Table last; JSON after every shape.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from kernels.decode_attention import api, launcher
from lab.host_path import packed_launch
from lab.host_path.guarded_path import GuardedPath
from lab.host_path.launch_probe import SHAPES, entry_calls, host_us, inputs
from lab.host_path.packed_path import PackedLayer, PackedPath, launch_tensors

ENTRIES = ("split", "paged_split", "single", "paged_single")
# (label, call, packed launches on); `one_call_layer` is the layer over the one-call entry points
VARIANTS = ([(name, name, False) for name in ENTRIES + ("layer",)]
            + [(f"packed_{name}", name, True) for name in ENTRIES + ("layer",)]
            + [(f"guard_packed_{name}", f"g_{name}", True) for name in ENTRIES]
            + [(f"one_call_{name}", f"f_{name}", True) for name in ENTRIES]
            + [("one_call_layer", "layer", True), ("layer_one_lookup", "pl_layer", True), ("sdpa", "sdpa", True)])
LIGHT = {"split", "paged_split", "layer", "packed_layer", "one_call_split", "one_call_paged_split", "one_call_single",
         "one_call_paged_single", "one_call_layer", "layer_one_lookup", "sdpa"}
_LAYER_ENTRIES = ("attention_decode_splitkv", "attention_decode_paged_splitkv", "attention_decode",
                  "attention_decode_paged")


class LayerEntries:
    """Switches the names `kernels.decode_layer` calls between the shipped entry points and a `PackedPath`'s."""

    def __init__(self, path: PackedPath):
        import kernels.decode_layer as module

        self.module = module
        self.shipped = {name: getattr(module, name) for name in _LAYER_ENTRIES}
        self.one_call = dict(zip(_LAYER_ENTRIES, (path.splitkv, path.paged_splitkv, path.single, path.paged)))

    def use(self, label: str) -> None:
        chosen = self.one_call if label == "one_call_layer" else self.shipped
        for name, fn in chosen.items():
            setattr(self.module, name, fn)


def log(msg):
    print(f"[packed {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def one_call_entries(x, path: PackedPath, outs: dict) -> dict:
    q, k, v, kp, vp, table, vis, ws, n = (x[name] for name in ("q", "k", "v", "kp", "vp", "table", "visible", "ws",
                                                                 "splits"))
    o = {f"f_{name}": torch.full_like(q, float("nan")) for name in ENTRIES}
    outs.update(o)
    return {
        "f_split": lambda: path.splitkv(q, k, v, vis, num_splits=n, workspace=ws, out=o["f_split"]),
        "f_paged_split": lambda: path.paged_splitkv(q, kp, vp, table, vis, num_splits=n, workspace=ws,
                                                    out=o["f_paged_split"]),
        "f_single": lambda: path.single(q, k, v, vis, out=o["f_single"]),
        "f_paged_single": lambda: path.paged(q, kp, vp, table, vis, out=o["f_paged_single"]),
    }


def output_of(call: str) -> str:
    return call.split("_", 1)[1] if call.startswith(("g_", "f_", "pl_")) else call


def bits(calls: dict, outs: dict, layer_entries: LayerEntries, variants) -> dict:
    """Each variant's output against the shipped path's, both written into NaN-poisoned buffers."""
    reference = {}
    layer_entries.use("layer")
    for name in ENTRIES + ("layer",):
        packed_launch.ENABLED["packed"] = False
        outs[name].fill_(float("nan"))
        calls[name]()
        torch.cuda.synchronize()
        reference[name] = outs[name].clone()
    packed_launch.ENABLED["packed"] = True
    result = {}
    for label, call, packed in variants:
        if call == "sdpa" or not packed:
            continue
        layer_entries.use(label)
        outs[call].fill_(float("nan"))
        calls[call]()
        torch.cuda.synchronize()
        result[label] = bool(torch.equal(outs[call], reference[output_of(call)]))
    layer_entries.use("layer")
    return result


def plan_paths() -> list:
    rows = []
    for plan in api._PLANS.values():
        row = {"paged": plan.paged, "single_pass": plan.finalize,
               "partial": packed_launch.path_of(plan.partial),
               "combine": None if plan.combine is None else packed_launch.path_of(plan.combine)}
        refusals = [kl.__dict__.get("_packed_refusal") for kl in (plan.partial, plan.combine) if kl is not None]
        row["refusals"] = [r for r in refusals if r]
        rows.append(row)
    return rows


def words_against_triton(x) -> dict:
    """The packed partial launch's words for a call with a fresh output, against Triton's recorded call."""
    q, k, v, vis, ws, n = x["q"], x["k"], x["v"], x["visible"], x["ws"], x["splits"]
    out = torch.empty_like(q)  # the split entry's plan (same signature), another pointer
    plan = api._PLANS.get(api._plan_key(api._SPLIT, q, k, v, None, vis, out, ws, n, None, None, None))
    if plan is None:
        return {"compared": False, "reason": "no plan of the split entry"}
    kl = plan.partial
    if kl.__dict__.get("_packed") is None:
        return {"compared": False, "reason": kl.__dict__.get("_packed_refusal", "not packed")}
    tensors = launch_tensors(api._SPLIT, q, k, v, None, vis, out, ws)
    args = [tensors[i] for i in kl.picks] + list(kl.scalars)
    options = {**kl.options, **{name: tensors[i] for name, i in kl.keyword_tensors.items()}}
    compiled = packed_launch._compiled_for(kl.kernel, packed_launch._closure(kl.direct)["function"])
    recorded = launcher._record(kl.kernel, kl.grid, args, options, compiled)
    if recorded is None:
        return {"compared": False, "reason": "Triton's call could not be recorded"}
    kernel_args = recorded[0][9:]
    expected = [packed_launch.parameter_word(kind, value)
                for kind, value in zip(compiled.src.signature.values(), kernel_args) if kind != "constexpr"] + [0, 0]
    kl._packed(tensors, False)
    torch.cuda.synchronize()
    got = list(kl._packed.words(0))
    return {"compared": True, "equal": got == expected, "words": len(expected),
            "differing": [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]}


def captured_bits(fn, out) -> bool:
    """`fn` captured into a CUDA graph and replayed gives eager's bits."""
    out.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    eager = out.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    return bool(torch.equal(out, eager))


def launch_loop_us(path: PackedPath) -> list:
    """Host µs of each one-call plan's launches alone, a C++ loop of 200 (median of 25 rounds)."""
    result = []
    for call in path.calls():
        samples = []
        for _ in range(25):
            torch.cuda.synchronize()
            samples.append(call.time_launches(200) / 1e3)
        torch.cuda.synchronize()
        result.append(statistics.median(samples))
    return result


def measure(shape, *, light: bool = False, calls_per_round: int = 300, rounds: int = 15, passes: int = 1) -> dict:
    from validation.bench.timing import time_eager, time_graph_replay

    api._PLANS.clear()
    x = inputs(shape)
    guarded, path = GuardedPath(), PackedPath()
    layer_entries = LayerEntries(path)
    variants = [v for v in VARIANTS if not light or v[0] in LIGHT]
    outs: dict = {}
    calls = entry_calls(x, guarded, outs)
    calls.update(one_call_entries(x, path, outs))
    packed_layer = PackedLayer(x["layer"])
    outs["pl_layer"] = torch.full_like(x["q"], float("nan"))
    calls["pl_layer"] = lambda: packed_layer(x["q"], x["k"], x["v"], x["visible"], max_visible_tokens=x["tokens"],
                                             out=outs["pl_layer"])
    for flag in (False, True, True):  # plans, direct launches, packed launches
        packed_launch.ENABLED["packed"] = flag
        for label in ("layer", "one_call_layer"):
            layer_entries.use(label)
            calls["layer"]()
        for name, fn in calls.items():
            if name != "layer" and (not light or not name.startswith("g_")):
                fn()
    layer_entries.use("layer")
    torch.cuda.synchronize()
    row = {"shape": list(shape), "route": x["route"].path, "num_splits": x["splits"], "light": light, "host_us": {}}
    row["bits_equal_shipped"] = bits(calls, outs, layer_entries, variants)
    row["plans"] = plan_paths()
    row["one_call"] = {"stats": dict(path.stats), "refusals": list(path.refusals) + list(packed_layer.refusals)}
    row["words_against_triton"] = words_against_triton(x)
    row["host_us_passes"] = []
    for index in range(passes):  # every other pass in reverse order, so that no variant always runs first
        timed = {}
        for label, call, packed in (variants if index % 2 == 0 else variants[::-1]):
            packed_launch.ENABLED["packed"] = packed
            layer_entries.use(label)
            timed[label] = host_us(calls[call], calls=calls_per_round, rounds=rounds)
        row["host_us_passes"].append(timed)
    row["host_us"] = {label: max(timed[label] for timed in row["host_us_passes"]) for label, _, _ in variants}
    layer_entries.use("layer")
    packed_launch.ENABLED["packed"] = True
    if light:
        del x, calls, outs
        torch.cuda.empty_cache()
        return row
    row["one_call"]["launch_loop_us"] = launch_loop_us(path)
    row["graph_bits_equal_eager"] = {"one_call_split": captured_bits(calls["f_split"], outs["f_split"]),
                                     "packed_layer": captured_bits(calls["layer"], outs["layer"])}
    row["eager_us"], row["graph_us"] = {}, {}
    for label, call, packed in (("layer", "layer", False), ("packed_layer", "layer", True),
                                ("one_call_split", "f_split", True), ("sdpa", "sdpa", True)):
        packed_launch.ENABLED["packed"] = packed
        row["eager_us"][label] = statistics.median(time_eager(calls[call]).samples_us)
        row["graph_us"][label] = statistics.median(time_graph_replay(calls[call], flush_l2=False).samples_us)
    packed_launch.ENABLED["packed"] = True
    del x, calls, outs
    torch.cuda.empty_cache()
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="the report to write (required unless --from-report)")
    p.add_argument("--shapes", type=int, default=len(SHAPES), help="the first N shapes only")
    p.add_argument("--shape", action="append", default=[], metavar="B,HQ,HKV,D,S",
                   help="measure these shapes instead of the built-in ones")
    p.add_argument("--light", action="store_true",
                   help="host time and bits of the shipped, packed and one-call variants only")
    p.add_argument("--calls", type=int, default=300, help="calls per timed round (default 300)")
    p.add_argument("--rounds", type=int, default=15, help="timed rounds; the median is kept (default 15)")
    p.add_argument("--passes", type=int, default=1,
                   help="timing passes over the variants, every other one reversed; the slowest pass is kept")
    p.add_argument("--from-report", nargs="+", metavar="NAME=REPORT",
                   help="finished reports: only write --evidence from them")
    p.add_argument("--evidence", type=Path, help="the profile artifact to write from --from-report")
    args = p.parse_args(argv)
    if args.from_report:
        if args.evidence is None:
            p.error("--from-report needs --evidence")
        reports = {}
        for item in args.from_report:
            name, sep, path = item.partition("=")
            if not sep or not name or not path:
                p.error(f"--from-report takes NAME=REPORT, got {item!r}")
            reports[name] = json.loads(Path(path).read_text())
        write_evidence(reports, args.evidence)
        return 0
    if args.out is None:
        p.error("--out is required")
    shapes = [tuple(int(v) for v in text.split(",")) for text in args.shape] or SHAPES[:args.shapes]
    import triton

    started = time.perf_counter()
    packed_launch.extension()
    packed_launch.install()
    report = {"torch": torch.__version__, "triton": triton.__version__, "device": torch.cuda.get_device_name(),
              "extension_build_s": round(time.perf_counter() - started, 1),
              "timing": {"calls_per_round": args.calls, "rounds": args.rounds, "passes": args.passes}, "shapes": []}
    log(f"extension built in {report['extension_build_s']} s")
    for shape in shapes:
        row = measure(shape, light=args.light, calls_per_round=args.calls, rounds=args.rounds, passes=args.passes)
        report["shapes"].append(row)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
        log(f"{shape}: {json.dumps({k: round(v, 1) for k, v in row['host_us'].items()})}")
    print_table(report)
    return 0


def print_table(report: dict) -> None:
    groups = (("replay", ""), ("packed", "packed_"), ("guard+packed", "guard_packed_"), ("one-call", "one_call_"))
    for row in report["shapes"]:
        print(f"{row['shape']} {row['route']}:{row['num_splits']}  bits {all(row['bits_equal_shipped'].values())}"
              f"  graph bits {all(row.get('graph_bits_equal_eager', {}).values())}  words {row['words_against_triton']}")
        for title, prefix in groups:
            cells = [f"{row['host_us'].get(prefix + name, float('nan')):6.1f}" for name in ENTRIES + ("layer",)]
            print(f"   {title:13s} " + " ".join(cells))
        if "layer_one_lookup" in row["host_us"]:
            print(f"   layer, one lookup {row['host_us']['layer_one_lookup']:.1f}")
        print(f"   sdpa {row['host_us']['sdpa']:.1f}", end="")
        if not row["light"]:
            print(f"  launch loop {[round(v, 2) for v in row['one_call']['launch_loop_us']]}"
                  f"  eager {json.dumps({k: round(v, 1) for k, v in row['eager_us'].items()})}"
                  f"  graph {json.dumps({k: round(v, 1) for k, v in row['graph_us'].items()})}", end="")
        print()
        for plan in row["plans"]:
            if plan["refusals"] or plan["partial"] != "packed" or plan["combine"] not in (None, "packed"):
                print(f"   plan {plan}")


ONE_CALL_ENTRIES = tuple(f"one_call_{name}" for name in ENTRIES)


def write_evidence(reports: dict, path: Path) -> None:
    """The profile artifact `decode-host-path-packed`: per run and shape what the table prints, and each run's worst.

    `runs.<run>.shapes.<row>.host_us.<variant>` (µs per call; the slowest pass where a run made several),
    `runs.<run>.shapes.<row>.one_call_worst_entry_us` (the slowest one-call entry point of the row) and
    `runs.<run>.worst.<variant>` (the slowest row), beside each run's device, versions and timing method.
    """
    import hashlib

    import validation.bench.host_overhead  # noqa: F401 - bound as the measuring process bound them
    import validation.bench.timing  # noqa: F401
    from validation.artifacts import build_artifact

    runs = {}
    for name, report in reports.items():
        shapes = {}
        for row in report["shapes"]:
            entry = dict(row)
            entry["one_call_worst_entry_us"] = max(row["host_us"][label] for label in ONE_CALL_ENTRIES)
            entry["bits_equal_shipped_all"] = all(row["bits_equal_shipped"].values())
            shapes["b{}-hq{}-hkv{}-d{}-s{}".format(*row["shape"])] = entry
        labels = {label for row in shapes.values() for label in row["host_us"]} | {"one_call_worst_entry_us"}
        worst = {label: max(row["host_us"][label] if label in row["host_us"] else row[label]
                            for row in shapes.values() if label in row["host_us"] or label in row)
                 for label in sorted(labels)}
        runs[name] = {key: report.get(key) for key in ("device", "torch", "triton", "timing", "extension_build_s")}
        runs[name].update(shapes=shapes, worst=worst, rows=len(shapes),
                          bits_equal_shipped_everywhere=all(r["bits_equal_shipped_all"] for r in shapes.values()),
                          words_equal_triton_everywhere=all(r["words_against_triton"].get("equal") is True
                                                            for r in shapes.values()))
    metrics = {f"{name}.worst.{label}": us for name, run in runs.items() for label, us in run["worst"].items()}
    results = {"tool": "time.perf_counter_ns around host loops, cuda events, cuda-graph replay", "metrics": metrics,
               "method": "host_us: median over rounds of back-to-back calls without synchronization (calls and "
                         "rounds per run under timing; the slowest pass where there were several); bits: outputs "
                         "written into NaN-poisoned buffers, compared with the shipped path's by torch.equal",
               "runs": runs}
    fixtures = {"shapes": hashlib.sha256(json.dumps(sorted(
        (name, sorted(run["shapes"])) for name, run in runs.items())).encode()).hexdigest()}
    artifact = build_artifact(artifact_id="decode-host-path-packed", kind="profile", results=results,
                              fixtures=fixtures, covers=["lab/host_path/packed_launch.cpp"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(artifact, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
