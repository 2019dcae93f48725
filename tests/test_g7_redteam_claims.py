"""End-to-end claims that name no vocabulary term are still claims (red-team report, H6).

A paraphrase gives a claim away by its shape: a serving subject or measure (users, replies,
inference, serving cost, latency, throughput; in any supported language) with a quantity or a
comparative in the same clause. Link titles and HTML title/alt attributes are prose: a reader
sees them. Kernel-level statements (µs, TB/s, % of the read ceiling, a kernel's or a memory's
throughput) are not claims, however they are worded.
"""

from __future__ import annotations

import pytest

from gates.checks.claim_detection import find_claims_in_text
from gates.frontends.cli import main

RECORD = "G1/positive/diagnosis-name-forms.md"
DESIGN_HEADING = "## §3 Design\n"
RESULTS_END = "## §8 Limitations"


def claims(text: str) -> list[str]:
    return [term for _, _, term in find_claims_in_text(text)]


@pytest.mark.parametrize("sentence", [
    "Chat replies now arrive 30% sooner for users.",
    "User latency drops 30%.",
    "Latency per request drops 30%.",
    "Llama-3 serves 2x more users per GPU.",
    "Each generated word now takes 12 ms less.",
    "Token generation rate rises 2x.",
    "Wall-clock generation time for a 512-token reply drops by 25%.",
    "Serving cost drops 40%.",
    "The model answers twice as fast.",
    "Users get replies in half the time.",
    "Die Antwortzeit des Modells sinkt um 30 %.",
    "La latencia de extremo a extremo baja un 30 %.",
    "Le temps de réponse baisse de 30 %.",
    "延迟降低30%。",
    "User latency drops 30٪.",
    "User latency drops ۳۰٪.",
    "模型响应速度快了一倍。",
    "用户等待时间缩短一半。",
    "推論のスループットが2倍になりました。",
], ids=["replies-sooner", "user-latency", "latency-per-request", "serves-more-users", "per-word-ms",
        "generation-rate", "wall-clock", "serving-cost", "model-twice-as-fast", "half-the-time", "de", "es", "fr",
        "zh-latency", "arabic-percent", "arabic-indic-digits", "zh-model-response", "zh-user-wait", "ja-throughput"])
def test_a_paraphrased_end_to_end_claim_is_a_claim(sentence):
    assert claims(sentence), sentence


@pytest.mark.parametrize("text", [
    '[link](https://example.com "TTFT drops 30%")',
    '![bars](bars.png "Users see replies 2x sooner")',
    'See <abbr title="latency drops 30% for every user">the note</abbr>.',
], ids=["link-title", "image-title", "html-title"])
def test_a_claim_in_a_title_or_attribute_is_a_claim(text):
    assert claims(text), text


@pytest.mark.parametrize("sentence", [
    "The split route takes 9.8 µs at 2048 visible tokens, 4.20x faster than the single pass.",
    "The read floor of 134 MB is about 32.2 µs, 91% of the 4.57 TB/s HBM bandwidth.",
    "The DRAM throughput is 0.44%.",
    "Throughput of the partial kernel: 72.8% of DRAM peak.",
    "Latency hiding needs 2x more warps.",
    "With 64 requests the grid fills the GPU and the single pass comes near the read floor.",
    "One program serves a whole GQA group, 4x fewer launches.",
    "int8 caches need half the bytes per request.",
    "内核耗时12ms。",
    "核函数加速2倍。",
    "kernel 时延 9.8 µs，比单遍快 4.2 倍。",
    "These 4.2x kernel numbers are not a serving-level result.",
    "No user-facing claim is made about the 4.2x kernel speed-up.",
    "We do not claim 30% faster replies.",
    "This record makes no claim that users see replies 2x sooner.",
    'See [the profile](profile.json "TTFT is not in here").',
], ids=["kernel-time", "read-floor", "dram-throughput", "kernel-throughput", "latency-hiding", "batch-of-requests",
        "program-serves", "bytes-per-request", "zh-kernel-time", "zh-kernel-speedup", "zh-kernel-latency",
        "serving-level-disclaimer", "user-facing-disclaimer", "negated-paraphrase", "negated-claim-that",
        "negated-title"])
def test_a_kernel_level_or_negated_statement_is_not_a_claim(sentence):
    assert claims(sentence) == [], sentence


@pytest.fixture()
def g7(examples_repo, capsys):
    """`g7(old, new)`: the example record with `old` replaced by `new`, checked with `--gate G7`."""
    path = examples_repo / RECORD
    original = path.read_text(encoding="utf-8")

    def run(old: str, new: str) -> tuple[int, str]:
        assert old in original
        path.write_text(original.replace(old, new, 1), encoding="utf-8")
        code = main([str(path), "--gate", "G7", "--repo-root", str(examples_repo)])
        return code, capsys.readouterr().out

    return run


def test_the_example_record_passes_g7(g7):
    assert g7(DESIGN_HEADING, DESIGN_HEADING)[0] == 0


@pytest.mark.parametrize("sentence, term", [
    ("Chat replies now arrive 30% sooner for users.", "Chat"),
    ("延迟降低30%。", "延迟"),
    ("The model answers twice as fast.", "model answers"),
], ids=["en", "zh", "no-number"])
def test_a_paraphrased_claim_outside_the_results_fails_g7(g7, sentence, term):
    code, out = g7(DESIGN_HEADING, f"{DESIGN_HEADING}\n{sentence}\n")
    assert code == 1 and f"end-to-end claim ({term!r}) is not backed by e2e evidence" in out


def test_a_link_title_claim_in_the_results_fails_g7(g7):
    code, out = g7(RESULTS_END, f'See [the run](https://example.com "TTFT drops 30%").\n\n{RESULTS_END}')
    assert code == 1 and "end-to-end claim ('TTFT') is not backed by e2e evidence" in out
