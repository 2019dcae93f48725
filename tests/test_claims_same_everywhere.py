"""One claims engine: a sentence gets the same verdict in a record, a pull-request description and a results page.

The sentences are the examples of what G7 used to get wrong, taken as a reader would
judge them: plans, negations, targets, questions, requests, pointers, definitions and
kernel-level statements claim nothing; the units and metric names serving and training
benchmarks print, a result in brackets or in inline code, a model-level subject and CJK
text directly followed by a metric are claims.
"""

from __future__ import annotations

import pytest

from gates.checks.runner import check_records
from gates.frontends.cli import main
from test_pr_body import repo, write_record  # noqa: F401 - the fixture and the record writer are shared

NOT_CLAIMS = {
    "plan": "TTFT and TPOT will be measured in stage D, not in this PR.",
    "negated": "No end-to-end or serving-level measurement was run for this change.",
    "targets": "targets: TTFT under 1 s, ITL under 50 ms",
    "question": "how do we get to 250 tok/s on 8 GPUs?",
    "request": "improve this to 200+ tokens/s",
    "pointer": "to see the TTFT effect of prefix caching, use the serving benchmark",
    "definition": "TPOT is defined as the mean time between two output tokens of one request.",
    "kernel-end-to-end": "The kernel is end-to-end (forward + backward) 1.8x faster than the reference.",
    "kernel-table": "| shape | e2e latency (us) |\n|---|---|\n| B1-Hq14-D64 | 17.1 |\n| B8-Hq14-D64 | 65.8 |",
}
CLAIMS = {
    "TPS": "Throughput went from 1200 TPS to 1500 TPS.",
    "t/s": "Decode reaches 45 t/s on a single 4090, up from 38.",
    "t/s/u": "We now get 38 t/s/u at batch 64.",
    "req/s": "Serving handles 12.5 req/s now, up from 10.",
    "RPS": "RPS rose from 40 to 52.",
    "ms/token": "Per-token cost dropped to 21 ms/token.",
    "E2EL": "Mean E2EL is 1.9 s lower.",
    "llama.cpp-tg": "TG 128 goes from 80 t/s to 96 t/s on the M2.",
    "llama.cpp-pp": "pp512 improves from 1,204 t/s to 1,388 t/s.",
    "iteration-time": "The iteration time of a training step drops from 410 ms to 350 ms.",
    "brackets": "Serving throughput (+20%) on the staging cluster.",
    "inline-code": "Result: `TTFT -35%` on long prompts.",
    "whole-model": "The whole model runs 2x faster in production.",
    "model-name": "Llama-3-8B now generates text 30 % faster.",
    "slower-backend": "It is 15 % slower than the previous backend.",
    "cjk-ttft": "改动后TTFT下降 30%。",
    "cjk-rps": "压测下RPS提升 25%。",
    "tokens/sec": "Decode went from 40 tokens/sec to 48 tokens/sec.",
    "zh-times": "吞吐提升 1.4 倍。",
    "zh-overall": "整体推理速度提升 2 倍。",
    "zh-not-only": "不仅吞吐提升，首字延迟也降低。",
    "zh-qualitative": "端到端吞吐提升非常明显。",
    "first-token-time": "First-token time is 40% shorter for 8k prompts.",
    "completions": "Completions arrive about 30% sooner for long outputs.",
    "model-level-decode": "The model-level decode speedup is 1.22x.",
    "p99-of-requests": "The p99 of requests improved from 2.4 s to 1.7 s.",
    "zh-requests-per-second": "每秒请求数从 35 提高到 47。",
    "ja-time-to-first-token": "最初のトークンまでの時間が 30% 短縮されました。",
}
CASES = [(name, text, False) for name, text in NOT_CLAIMS.items()] + [(name, text, True) for name, text in CLAIMS.items()]


def in_a_record(repo, text: str) -> bool:  # noqa: F811
    record = write_record(repo, "splitkv", "D")
    body = record.read_text(encoding="utf-8")
    record.write_text(body.replace("## §3 Design\n", f"## §3 Design\n\n{text}\n", 1), encoding="utf-8")
    report = check_records([record], repo, gates=["G7"])
    return any("end-to-end claim" in f.message for f in report.records[0].gates["G7"].findings)


def in_a_description(repo, capsys, text: str) -> bool:  # noqa: F811
    path = repo / "pr.md"
    path.write_text(text + "\n", encoding="utf-8")
    main(["lint-pr", "--body-file", str(path), "--repo-root", str(repo)])
    return "G7 error: end-to-end claim" in capsys.readouterr().out


def on_a_results_page(repo, text: str) -> bool:  # noqa: F811
    record = write_record(repo, "splitkv", "D")
    body = record.read_text(encoding="utf-8")
    record.write_text(body.replace("## §3 Design\n", "## §3 Design\n\nNotes: [results](../results/notes.md).\n", 1),
                      encoding="utf-8")
    (repo / "docs" / "results").mkdir(parents=True, exist_ok=True)
    (repo / "docs" / "results" / "notes.md").write_text(
        f"<!-- results-notes: earlier runs -->\n\n# Notes\n\n{text}\n", encoding="utf-8")
    report = check_records([record], repo, gates=["G7"])
    return any(f.path == "docs/results/notes.md" and "end-to-end claim" in f.message
               for f in report.records[0].gates["G7"].findings)


@pytest.mark.parametrize("name, text, is_claim", CASES, ids=[name for name, _, _ in CASES])
def test_the_verdict_is_the_same_in_a_record_a_description_and_a_results_page(repo, capsys, name, text,  # noqa: F811
                                                                              is_claim):
    assert in_a_record(repo, text) is is_claim
    assert in_a_description(repo, capsys, text) is is_claim
    assert on_a_results_page(repo, text) is is_claim
