"""Regenerate the golden examples: evidence artifacts, fingerprints and records.

    python tests/examples/make_examples.py

This folder is a small repository of its own (the examples' repository root):
`examplepkg/` is the code under review, `suites/` its validation suites,
`evidence/` the artifacts, `docs/design/` a record others stack on, and
`G<n>/{positive,negative}/` the example records. Each negative record says on its
second line which gate must fail and on which line (`# expect: G1 line 40`).
Run this after changing `examplepkg/` or the suites: artifact hashes and the
records' pins are recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SOURCE = "examplepkg/ops.py"
COVERS = ["examplepkg/**"]
COVERED = ("examplepkg/__init__.py", SOURCE)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_json(rel: str, data: dict) -> None:
    (ROOT / rel).write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def artifact(id_, kind, results, *, backend="cuda", device="NVIDIA H200", sources=None, fixtures=None, command=None):
    return {
        "schema_version": 1,
        "id": id_,
        "kind": kind,
        "created": "2026-11-29T12:00:00Z",
        "command": command or f"python -m validation.run {kind} --out evidence/{id_}.json",
        "environment": {"backend": backend, "device": device, "driver": "580.159.04", "torch": "2.11.0+cu130",
                        "triton": "3.6.0", "python": "3.12.3"},
        "commit": None,
        "sources": sources if sources is not None else {rel: sha((ROOT / rel).read_bytes()) for rel in COVERED},
        "fixtures": fixtures if fixtures is not None else {"rows-16x1001-seed20261129": "0" * 64},
        "results": results,
    }


def run_suite(suite: str, out: str) -> dict:
    env = dict(os.environ, DESIGN_GATES_EVIDENCE_OUT=str(ROOT / out), DESIGN_GATES_COVERS=json.dumps(COVERS))
    subprocess.run([sys.executable, "-m", "pytest", suite, "-q", "-p", "no:cacheprovider"], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    data = json.loads((ROOT / out).read_text(encoding="utf-8"))
    data["created"] = "2026-11-29T12:00:00Z"
    data["command"] = f"python -m pytest {suite}"
    data["environment"] = {"backend": "cpu", "device": "x86_64", "python": "3.12.3"}
    write_json(out, data)
    return data


def make_evidence() -> None:
    (ROOT / "evidence").mkdir(exist_ok=True)
    numeric = run_suite("suites/suite_numeric.py", "evidence/numeric-cpu.json")
    bitwise = run_suite("suites/suite_bitwise.py", "evidence/bitwise-cpu.json")
    write_json("fingerprints.json", {"cpu": {
        "splits1": bitwise["results"]["fingerprints"]["splits1"],
        "splits4": SPLITS4_BEFORE,
    }})
    metrics = {"grid_blocks": 14, "sm__warps_active": 8.33, "registers": 39, "smem_bytes": 928,
               "dram__throughput": 0.44, "long_scoreboard_stall": 45.8}
    units = {"sm__warps_active": "%", "dram__throughput": "%", "long_scoreboard_stall": "%", "smem_bytes": "byte"}
    write_json("evidence/ncu-single-pass.json", artifact(
        "ncu-single-pass", "profile", {"tool": "ncu", "kernel": "single_pass_sum", "metrics": metrics, "units": units}))
    write_json("evidence/ncu-stale.json", artifact(
        "ncu-stale", "profile", {"tool": "ncu", "kernel": "single_pass_sum", "metrics": metrics, "units": units},
        sources=dict(artifact("x", "profile", {})["sources"], **{SOURCE: sha(b"ops.py as it was before")})))
    write_json("evidence/bench-h200.json", artifact("bench-h200", "benchmark", {
        "rows": [{"visible_tokens": 2048, "single_pass_us": 41.2, "splitkv_s8_us": 9.8, "speedup": 4.2},
                 {"visible_tokens": 16384, "single_pass_us": 310.5, "splitkv_s8_us": 44.1, "speedup": 7.04}],
        "ceilings": {"hbm_tb_s": 4.8}}))
    capture = {"captured": True, "allocations": 0, "host_syncs": 0, "replay_equals_eager": True}
    write_json("evidence/capture-h200.json", artifact("capture-h200", "capture", capture))
    write_json("evidence/capture-cpu.json", artifact("capture-cpu", "capture", capture, backend="cpu", device="x86_64"))
    write_json("evidence/capture-allocs.json", artifact("capture-allocs", "capture", dict(capture, allocations=2)))
    cpu_torch = artifact("capture-cpu-torch", "capture", capture)
    cpu_torch["environment"]["torch"] = "2.13.0+cpu"
    write_json("evidence/capture-cpu-torch.json", cpu_torch)
    make_e2e_evidence()
    stale = dict(numeric, id="numeric-stale", sources=dict(numeric["sources"], **{SOURCE: sha(b"ops.py as it was before")}))
    write_json("evidence/numeric-stale.json", stale)
    failed = json.loads(json.dumps(numeric))
    failed.update(id="numeric-failed")
    failed["results"]["passed"] = False
    write_json("evidence/numeric-failed.json", failed)
    broken = json.loads(json.dumps(bitwise))
    broken.update(id="bitwise-anchor-failed")
    broken["results"]["anchors"]["A1-splits1-vs-single-pass"]["passed"] = False
    broken["results"]["passed"] = False
    write_json("evidence/bitwise-anchor-failed.json", broken)
    empty = json.loads(json.dumps(bitwise))
    empty.update(id="bitwise-zero-cases")
    empty["results"]["anchors"]["A1-splits1-vs-single-pass"]["cases"] = 0
    write_json("evidence/bitwise-zero-cases.json", empty)


def runner_key():
    """The examples' runner key: fixed, so that the examples' attested artifacts stay byte-identical."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(sha(b"design-gates golden examples runner").encode()[:32])


def make_policy() -> None:
    """The examples' policy: it trusts the examples' runner key (end-to-end claims need attested evidence)."""
    from gates.evidence.attestation import public_key_text

    (ROOT / ".design-gates").mkdir(exist_ok=True)
    (ROOT / ".design-gates" / "policy.yaml").write_text(
        "schema_version: 1\ndefault_level: L1\nrules: []\nattestation:\n  keys:\n"
        f"    - {{id: examples-runner, public_key: \"{public_key_text(runner_key().public_key())}\"}}\n",
        encoding="utf-8")


def make_e2e_evidence() -> None:
    """End-to-end artifacts as `python -m gates.ab` writes them, signed by the examples' runner key."""
    from gates.evidence.attestation import sign

    fixtures = {"prompt-21550-tokens": sha(b"prompt"), "target-weights": sha(b"weights")}
    measured = {"metric": "tokens_per_s", "unit": "tok/s", "higher_is_better": True,
                "variable": {"kind": "env", "name": "EXAMPLEPKG_SPLIT"}}
    write_json("evidence/e2e-ok.json", sign(artifact("e2e-ok", "e2e", {**measured, "arms": {
        "baseline": {"value": "0", "samples": [39.3, 39.3, 39.3], "fresh_process": True, "median": 39.3,
                     "pids": [101, 103, 105], "warmup_discarded": 1},
        "split-kv": {"value": "1", "samples": [48.3, 48.2, 48.2], "fresh_process": True, "median": 48.2,
                     "pids": [102, 104, 106], "warmup_discarded": 1}}}, fixtures=fixtures),
        "examples-runner", runner_key()))
    write_json("evidence/e2e-two-samples.json", sign(artifact("e2e-two-samples", "e2e", {**measured, "arms": {
        "baseline": {"value": "0", "samples": [39.3, 39.3], "fresh_process": True, "median": 39.3, "pids": [101, 103],
                     "warmup_discarded": 1},
        "split-kv": {"value": "1", "samples": [48.3, 48.2], "fresh_process": True, "median": 48.25,
                     "pids": [102, 104], "warmup_discarded": 1}}}, fixtures=fixtures),
        "examples-runner", runner_key()))


def pin(evidence_id: str) -> str:
    return sha((ROOT / "evidence" / f"{evidence_id}.json").read_bytes())


SPLITS4_BEFORE = sha(b"splits4 output before the split-KV change")


def splits4_after() -> str:
    """The splits4 fingerprint the bitwise suite produces now: the value question Q3 accepts."""
    data = json.loads((ROOT / "evidence" / "bitwise-cpu.json").read_text(encoding="utf-8"))
    return data["results"]["fingerprints"]["splits4"]


def accepted_change() -> str:
    return f"      - {{key: splits4, question: Q3, from: {SPLITS4_BEFORE}, to: {splits4_after()}}}"


def evidence_line(evidence_id: str, kind: str) -> str:
    return (f"  - {{id: {evidence_id}, path: evidence/{evidence_id}.json, sha256: {pin(evidence_id)}, "
            f"kind: {kind}}}")


def stage_d_record() -> str:
    evidence = "\n".join(evidence_line(*pair) for pair in [
        ("ncu-single-pass", "profile"), ("numeric-cpu", "numeric"), ("bitwise-cpu", "bitwise"),
        ("capture-h200", "capture"), ("bench-h200", "benchmark")])
    return f"""---
schema_version: 1
id: ID
title: Split sums for long rows (example, stage D)
risk: L3
record_status: approved
stage: D
stacked_on: [base-record]
lang: en
authors:
  - {{name: Ada Author, email: ada@example.com}}
reviewers:
  - {{name: Rex Reviewer, email: rex@example.com, decision: approved}}
covers: ["examplepkg/**"]
questions:
  - {{id: Q1, question: Combine in a separate step?, recommendation: Yes; it keeps the partial pass simple., decision: accepted, blast_radius: low}}
  - {{id: Q3, question: Accept the changed splits4 fingerprint?, recommendation: Accept; the sum order changed on purpose and stays within tolerance., decision: accepted, blast_radius: high}}
unknowns:
  - {{id: U1, question: Which num_splits is best per row length?, closes_at: D, status: closed, evidence: [bench-h200]}}
numeric_contract:
  oracle: math:fsum
  suite: suites/suite_numeric.py
  tolerances:
    - {{metric: rel_l2, dtype: fp32, max: 1.0e-6}}
    - {{metric: min_cosine, dtype: fp32, min: 0.9999}}
bitwise:
  suite: suites/suite_bitwise.py
  anchors:
    - {{id: A1, check: "split_sum(num_splits=1) == single_pass_sum, byte for byte"}}
  fingerprints:
    path: fingerprints.json
    accepted_changes:
{accepted_change()}
api:
  packages: [examplepkg]
  adds: [split_sum]
  default_route_unchanged: true
capture: {{required: true, due: C, evidence: capture-h200}}
claim_level: kernel
evidence:
{evidence}
independence: {{defect: false}}
self_check: {{G0: pass, G1: pass, G2: pass, G3: pass, G4: pass, G5: pass, G6: pass, G7: pass, G8: pass}}
---

# Split sums for long rows

## §1 Why / diagnosis

The single pass runs one program per row, so a long row leaves most of the device idle. The profile
([ncu-single-pass](../../evidence/ncu-single-pass.json)) shows it:

| metric | value | reading |
|---|---|---|
| grid_blocks | 14 | one program per row |
| sm__warps_active (achieved occupancy) | 8.33% | most SMs idle |
| registers / smem_bytes | 39 / 928 | neither limits occupancy |
| dram__throughput | 0.44% | no resource is saturated |

Latency bound from too little parallelism: long_scoreboard_stall = 45.8%.

## §2 Unknowns

U1 (closes at D): the best num_splits per row length, closed by the
[benchmark](../../evidence/bench-h200.json).

## §3 Design

Split each row into num_splits chunks, sum each chunk in one program, then combine the partial sums in a
second step. num_splits is a host parameter, so the launch shape is fixed when a graph is captured.

## §4 Numeric contract

fp32 results stay within rel_l2 ≤ 1.0e-6 and min_cosine ≥ 0.9999 of the fp64 oracle (math.fsum); the suite is
`suites/suite_numeric.py`.

## §5 Bitwise anchor

A1: with num_splits = 1 the split sum adds the same numbers in the same order as the single pass, so the two
are byte-identical. Q3 accepts the changed `splits4` fingerprint.

## §6 API

Adds `split_sum`; nothing is removed or changed, and the default route is unchanged.

## §7 Validation and results

Numeric ([numeric-cpu](../../evidence/numeric-cpu.json)), bitwise ([bitwise-cpu](../../evidence/bitwise-cpu.json))
and capture ([capture-h200](../../evidence/capture-h200.json)) all pass.

| fp32 metric | measured `numeric-cpu:per_dtype.fp32.{{row}}` | limit |
|---|---|---|
| rel_l2 | 5.02e-7 | 1.0e-6 |
| max_abs | 1.96e-5 | n/a |

Kernel time ([bench-h200](../../evidence/bench-h200.json)):

| visible tokens | single pass `bench-h200:rows[visible_tokens={{row}}].single_pass_us` | split, 8 splits `bench-h200:rows[visible_tokens={{row}}].splitkv_s8_us` | speedup `bench-h200:rows[visible_tokens={{row}}].speedup` |
|---|---|---|---|
| 2048 | 41.2 µs | 9.8 µs | 4.20x |
| 16384 | 310.5 µs | 44.1 µs | 7.04x |

At 2048 visible tokens the split route takes 9.8 µs (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`).
These are kernel-level numbers; they must not be read as TPOT or tok/s.

## §8 Limitations

Measured on one device model only.

## §9 Follow-ups

Turning the new route on by default is a separate decision.

## §10 Self-check

Every gate passes; the front matter's self_check holds the per-gate claims.
"""


def stage_a_record_zh() -> str:
    return f"""---
schema_version: 1
id: ID
title: 长行的分段求和（示例，A 阶段）
risk: L3
record_status: in-review
stage: A
stacked_on: [base-record]
lang: zh
authors:
  - {{name: 林作者, email: lin@example.com}}
reviewers:
  - {{name: 周审阅, email: zhou@example.com, decision: pending}}
covers: ["examplepkg/**"]
questions:
  - {{id: Q1, question: 合并用独立步骤还是单步归约？, recommendation: 独立步骤，partial 保持简单。, decision: null, blast_radius: low}}
  - {{id: Q3, question: num_splits > 1 改变 splits4 指纹，是否接受？, recommendation: 接受；求和顺序有意改变，仍在容差内。, decision: null, blast_radius: high}}
unknowns:
  - {{id: U1, question: 各行长下 num_splits 的最优值, closes_at: D, status: open, evidence: []}}
numeric_contract:
  oracle: math:fsum
  suite: suites/suite_numeric.py
  tolerances:
    - {{metric: rel_l2, dtype: fp32, max: 1.0e-6}}
bitwise:
  suite: suites/suite_bitwise.py
  anchors:
    - {{id: A1, check: "num_splits = 1 时与单遍逐位相同"}}
  fingerprints:
    path: fingerprints.json
    accepted_changes:
{accepted_change()}
api:
  packages: [examplepkg]
  adds: [split_sum]
  default_route_unchanged: true
capture: {{required: true, due: C, evidence: null}}
claim_level: kernel
evidence:
{evidence_line("ncu-single-pass", "profile")}
independence: {{defect: true, note: 本记录由实现者本人编写，合并前需第二方复核。}}
self_check: {{G0: pass, G1: pass, G2: pass, G3: n/a, G4: n/a, G5: pass, G6: n/a, G7: pass, G8: pass}}
---

# 长行的分段求和

## §1 为什么（诊断，非猜测）

profiler 数据推翻了"修 V 访问"的猜测。[ncu 单遍 profile](../../evidence/ncu-single-pass.json)：

| 指标 | 值 | 读数 |
|---|---|---|
| grid_blocks | 14 | 一行一个 program |
| sm__warps_active（achieved occupancy） | 8.33% | 大多数 SM 空闲 |
| registers / smem_bytes | 39 / 928 | 都不是限制因素 |
| dram__throughput | 0.44% | 没有任何资源饱和 |

结论：并行度不足导致的延迟受限。

## §2 未知项

U1：各行长下 num_splits 的最优值，由 D 阶段实测关闭。

## §3 设计

每行切成 num_splits 段，各段独立求和，再由合并步骤相加。num_splits 是 host 参数。

## §4 数值契约

fp32 下相对 fp64 oracle（math.fsum）的 rel_l2 ≤ 1.0e-6。

## §5 逐位锚点

num_splits = 1 时与单遍逐位相同，从而把重构风险与数值改动分开。

## §6 接口

只增不改：新增 `split_sum`，默认路由不变。

## §7 验证与结果

本 PR 只改文档。未运行任何 kernel 改动、测试与性能实验（本 PR 不产生代码与数字）。

## §8 限制

本记录由实现者本人编写，独立性缺陷已在 front matter 中声明。不声称任何端到端收益；kernel 级数字不得写成 TTFT/TPOT（G7）。

## §9 后续

批准后：B（kernel + 测试）→ C（开关与路由）→ D（benchmark 与结果报告）。

## §10 自检

G0–G8 自检见 front matter 的 self_check。
"""


def base_record() -> str:
    text = stage_a_record_zh().replace("stacked_on: [base-record]", "stacked_on: []")
    return text.replace("id: ID", "id: base-record")


E2E_CLAIM = ("End to end, decode reaches 48.2 tok/s (`e2e-ok:arms.split-kv.median`) against 39.3 tok/s "
             "(`e2e-ok:arms.baseline.median`) "
             "([e2e-ok](../../evidence/e2e-ok.json), three fresh processes per arm).")


def e2e_record(evidence_id: str) -> str:
    text = stage_d_record().replace("claim_level: kernel", "claim_level: e2e")
    text = text.replace("independence: {defect: false}", evidence_line(evidence_id, "e2e") + "\nindependence: {defect: false}")
    return text.replace("These are kernel-level numbers; they must not be read as TPOT or tok/s.",
                        E2E_CLAIM.replace("e2e-ok", evidence_id))


D, A = stage_d_record, stage_a_record_zh

# (gate, kind, name, base, [(old, new)], marker whose line is expected)
EXAMPLES = [
    ("G0", "positive", "form-complete-en", D, [], None),
    ("G0", "positive", "form-complete-zh", A, [], None),
    ("G0", "negative", "missing-section", D, [("## §8 Limitations\n\nMeasured on one device model only.\n\n", "")], "## §9"),
    ("G0", "negative", "placeholder-left", D, [("Measured on one device model only.", "[[fill: limitations]]")], "[[fill"),
    ("G0", "negative", "unknown-stacked-on", D, [("stacked_on: [base-record]", "stacked_on: [no-such-record]")], "stacked_on:"),
    ("G0", "negative", "schema-bad-risk", D, [("risk: L3", "risk: L7")], "risk:"),
    ("G0", "negative", "schema-unknown-key", D, [("lang: en\n", "lang: en\nowner: ada\n")], "owner:"),
    ("G0", "negative", "broken-link", D, [("is a separate decision.", "is a separate decision ([plan](../../docs/plan.md)).")], "plan.md"),
    ("G0", "negative", "evidence-file-missing", D, [("path: evidence/bench-h200.json", "path: evidence/bench-h100.json")], "bench-h100"),
    ("G0", "negative", "undeclared-evidence-ref", D, [("evidence: [bench-h200]}", "evidence: [bench-h100]}")], "id: U1"),
    ("G1", "positive", "diagnosis-table-and-inline", D, [], None),
    ("G1", "positive", "diagnosis-zh-stage-a", A, [], None),
    ("G1", "negative", "no-citation", D, [("The profile\n([ncu-single-pass](../../evidence/ncu-single-pass.json)) shows it:", "The profile shows it:")], "## §1"),
    ("G1", "negative", "misquoted-table-value", D, [("| 8.33% |", "| 12.5% |")], "12.5%"),
    ("G1", "negative", "misquoted-pair", D, [("| 39 / 928 |", "| 39 / 1024 |")], "39 / 1024"),
    ("G1", "negative", "misquoted-inline", D, [("long_scoreboard_stall = 45.8%", "long_scoreboard_stall = 54.8%")], "54.8%"),
    ("G1", "positive", "diagnosis-name-forms", D, [("long_scoreboard_stall = 45.8%.", "long_scoreboard_stall = 45.8%. The grid: grid_blocks ≈ 14, **registers** = 39, `smem_bytes` is 928, dram__throughput: 0.44 %.")], None),
    ("G1", "negative", "percentage-times-100", D, [("| 0.44% |", "| 44% |")], "| 44% |"),
    ("G1", "negative", "misquoted-approx", D, [("long_scoreboard_stall = 45.8%.", "long_scoreboard_stall = 45.8%. The grid: grid_blocks ≈ 200.")], "grid_blocks ≈ 200"),
    ("G1", "negative", "misquoted-is", D, [("long_scoreboard_stall = 45.8%.", "long_scoreboard_stall = 45.8%. The grid: grid_blocks is 200.")], "grid_blocks is 200"),
    ("G1", "negative", "misquoted-bold-name", D, [("long_scoreboard_stall = 45.8%.", "long_scoreboard_stall = 45.8%. Registers: **registers** = 255.")], "**registers** = 255"),
    ("G1", "negative", "misquoted-later-cell", D, [("| grid_blocks | 14 | one program per row |", "| grid_blocks | one program per row | 200 |")], "| grid_blocks |"),
    ("G1", "negative", "stale-profile-at-stage-a", A, [("ncu-single-pass", "ncu-stale")], "id: ncu-stale"),
    ("G2", "positive", "unknowns-closed-at-d", D, [], None),
    ("G2", "positive", "decisions-pending-at-a", A, [], None),
    ("G2", "negative", "unknown-open-at-closing-stage", D, [("status: closed, evidence: [bench-h200]", "status: open, evidence: []")], "id: U1"),
    ("G2", "negative", "question-undecided-at-d", D, [("decision: accepted, blast_radius: low", "decision: null, blast_radius: low")], "id: Q1"),
    ("G2", "negative", "question-without-recommendation", A, [("recommendation: 独立步骤，partial 保持简单。", "recommendation: null")], "id: Q1"),
    ("G2", "negative", "closed-without-evidence", A, [("status: open, evidence: []", "status: closed, evidence: []")], "id: U1"),
    ("G2", "negative", "in-review-past-stage-a", D, [("record_status: approved", "record_status: in-review")], "record_status:"),
    ("G3", "positive", "numeric-within-tolerance", D, [], None),
    ("G3", "positive", "numeric-not-due-at-a", A, [], None),
    ("G3", "negative", "out-of-tolerance", D, [("max: 1.0e-6}", "max: 1.0e-7}")], "metric: rel_l2"),
    ("G3", "negative", "stale-numeric-evidence", D, [("numeric-cpu", "numeric-stale")], "id: numeric-stale"),
    ("G3", "negative", "pin-mismatch", D, [], "id: numeric-cpu"),
    ("G3", "negative", "suite-reported-failure", D, [("numeric-cpu", "numeric-failed")], "numeric_contract:"),
    ("G3", "negative", "no-numeric-evidence", D, [("numeric-cpu", "numeric-cpu", "drop-evidence")], "numeric_contract:"),
    ("G3", "negative", "unbounded-tolerance", D, [("max: 1.0e-6}", "max: .inf}")], "metric: rel_l2"),
    ("G3", "negative", "cosine-bound-below-zero", D, [("min: 0.9999}", "min: -1.0}")], "metric: min_cosine"),
    ("G4", "positive", "accepted-fingerprint-change", D, [], None),
    ("G4", "negative", "anchor-zero-cases", D, [("bitwise-cpu", "bitwise-zero-cases")], "id: A1"),
    ("G4", "negative", "fingerprint-change-rejected", D, [("Accept; the sum order changed on purpose and stays within tolerance., decision: accepted", "Accept; the sum order changed on purpose and stays within tolerance., decision: rejected")], "key: splits4"),
    ("G4", "negative", "fingerprint-change-undeclared", D, [(lambda: f"    accepted_changes:\n{accepted_change()}\n", "")], "path: fingerprints.json"),
    ("G4", "negative", "fingerprint-accepted-for-another-value", D, [(splits4_after, sha(b"splits4 output of an earlier change"))], "key: splits4"),
    ("G4", "negative", "fingerprint-acceptance-without-value", D, [(lambda: f", from: {SPLITS4_BEFORE}, to: {splits4_after()}", "")], "key: splits4"),
    ("G4", "negative", "anchor-failed", D, [("bitwise-cpu", "bitwise-anchor-failed")], "id: A1"),
    ("G5", "positive", "api-only-grows", D, [], None),
    ("G5", "positive", "default-route-change-accepted-at-d", D, [("  default_route_unchanged: true", "  default_route_unchanged: false\n  default_route_question: Q1")], None),
    ("G5", "negative", "removes-public-name", D, [("  adds: [split_sum]", "  adds: [split_sum]\n  removes: [single_pass_sum]")], "removes:"),
    ("G5", "negative", "default-route-change-before-d", A, [("  default_route_unchanged: true", "  default_route_unchanged: false\n  default_route_question: Q1")], "default_route_unchanged:"),
    ("G5", "negative", "added-name-not-exported", D, [("adds: [split_sum]", "adds: [split_sum, fused_sum]")], "adds:"),
    ("G6", "positive", "capture-on-device", D, [], None),
    ("G6", "positive", "capture-not-due-at-a", A, [], None),
    ("G6", "negative", "capture-on-cpu", D, [("capture-h200", "capture-cpu")], "capture: {required"),
    ("G6", "negative", "capture-cpu-torch-build", D, [("capture-h200", "capture-cpu-torch")], "capture: {required"),
    ("G6", "negative", "capture-allocates", D, [("capture-h200", "capture-allocs")], "capture: {required"),
    ("G6", "negative", "capture-evidence-missing", D, [("due: C, evidence: capture-h200}", "due: C, evidence: null}")], "capture: {required"),
    ("G7", "positive", "negated-claims-zh", A, [], None),
    ("G7", "positive", "e2e-claim-with-evidence", lambda: e2e_record("e2e-ok"), [("Measured on one device model only.", "Measured on one device model only. End to end, split-kv decodes 1.23x faster than the baseline.")], None),
    ("G7", "negative", "tpot-claim-at-kernel-level", D, [("Measured on one device model only.", "Measured on one device model only. The split route cuts TPOT as well.")], "cuts TPOT"),
    ("G7", "negative", "throughput-claim-zh", A, [("结论：并行度不足导致的延迟受限。", "结论：并行度不足导致的延迟受限。改动后端到端吞吐明显提升。")], "端到端吞吐"),
    ("G7", "negative", "e2e-too-few-samples", lambda: e2e_record("e2e-two-samples"), [], "End to end, decode"),
    ("G7", "negative", "e2e-misquoted-value", lambda: e2e_record("e2e-ok"), [("Measured on one device model only.", "Measured on one device model only. End to end, split-kv decodes 1.5x faster than the baseline.")], "1.5x faster"),
    ("G7", "negative", "stage-a-measured-result", A, [("本 PR 只改文档。", "本 PR 只改文档。预估 split 比单遍快 4.20x。")], "4.20x"),
    ("G7", "negative", "untraced-result", D, [("| 9.8 µs |", "| 9.1 µs |")], "9.1 µs"),
    ("G7", "negative", "value-from-another-row", D, [("| 9.8 µs |", "| 44.1 µs |")], "44.1 µs"),
    ("G7", "negative", "untied-number-in-prose", D, [("These are kernel-level numbers;", "At 16384 tokens the split is 4.20x faster. These are kernel-level numbers;")], "4.20x faster"),
    ("G7", "negative", "reference-names-another-key", D, [("takes 9.8 µs (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`)", "takes 9.8 µs (`bench-h200:rows[visible_tokens=2048].single_pass_us`)")], "takes 9.8 µs"),
    ("G7", "negative", "reference-to-a-missing-key", D, [("takes 9.8 µs (`bench-h200:rows[visible_tokens=2048].splitkv_s8_us`)", "takes 9.8 µs (`bench-h200:rows[visible_tokens=2048].split_us`)")], "takes 9.8 µs"),
    ("G8", "positive", "independent-approval", D, [], None),
    ("G8", "positive", "in-review-with-declared-defect", A, [], None),
    ("G8", "negative", "self-approval-only", D, [("{name: Rex Reviewer, email: rex@example.com, decision: approved}", "{name: Ada Author, email: ada@example.com, decision: approved}")], "reviewers:"),
    ("G8", "negative", "same-email-other-name", D, [("{name: Rex Reviewer, email: rex@example.com, decision: approved}", "{name: A. Author, email: ADA@example.com, decision: approved}")], "reviewers:"),
    ("G8", "negative", "zero-width-alias", D, [("{name: Rex Reviewer, email: rex@example.com, decision: approved}", '{name: "A\\u200bda Author", email: "ada\\u200b@example.com", decision: approved}')], "reviewers:"),
    ("G8", "negative", "plus-tag-alias", D, [("{name: Rex Reviewer, email: rex@example.com, decision: approved}", "{name: Ada A., email: ada+review@example.com, decision: approved}")], "reviewers:"),
    ("G8", "negative", "approved-with-defect", D, [("independence: {defect: false}", "independence: {defect: true, note: written by the implementer}")], "independence:"),
    ("G8", "negative", "lying-self-check", A, [("record_status: in-review", "record_status: approved")], "self_check:"),
]


def build(base, edits, name) -> str:
    text = base()
    for edit in edits:
        if len(edit) == 3:
            text = "\n".join(line for line in text.split("\n") if not line.startswith("  - {id: numeric-cpu,"))
            continue
        old, new = edit
        old = old() if callable(old) else old
        if old not in text:
            raise SystemExit(f"{name}: {old!r} is not in the base record")
        text = text.replace(old, new)
    def repin(match):
        if not (ROOT / "evidence" / f"{match.group(2)}.json").exists():
            return match.group(0)
        return f"{{id: {match.group(1)}, path: evidence/{match.group(2)}.json, sha256: {pin(match.group(2))}"

    text = re.sub(r"\{id: ([a-z0-9-]+), path: evidence/([a-z0-9-]+)\.json, sha256: [0-9a-f]{64}", repin, text)
    if name == "pin-mismatch":
        good = pin("numeric-cpu")
        text = text.replace(good, good[:-4] + ("0000" if not good.endswith("0000") else "1111"))
    return text.replace("id: ID", f"id: {name}", 1)


def expected_line(text: str, marker: str) -> int:
    lines = text.split("\n")
    if marker == "@body":
        closing = lines.index("---", 1)
        return closing + 2
    for number, line in enumerate(lines, start=1):
        if marker in line:
            return number
    raise SystemExit(f"marker {marker!r} not found")


def make_records() -> None:
    for gate in [f"G{i}" for i in range(9)]:
        shutil.rmtree(ROOT / gate, ignore_errors=True)
    (ROOT / "docs" / "design").mkdir(parents=True, exist_ok=True)
    (ROOT / "docs" / "design" / "base-record.md").write_text(base_record(), encoding="utf-8")
    for gate, kind, name, base, edits, marker in EXAMPLES:
        text = build(base, edits, name)
        if kind == "negative":
            text = text.replace("---\n", "---\n# expect: GATE line N\n", 1)
            text = text.replace("# expect: GATE line N", f"# expect: {gate} line {expected_line(text, marker)}")
        folder = ROOT / gate / kind
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    make_policy()
    make_evidence()
    make_records()
