"""G7's reading of sentences, and how G1/G7 compare quoted numbers with measured ones.

The corpus under `claims_corpus/` holds the texts G7 must report (`claims/`) and must not
(`not_claims/`); each `=== name` case there is one test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gates.checks.claim_detection import find_claims_in_text as detect
from gates.checks.g7_claims import find_claims, find_claims_in_text
from gates.checks.quoted_numbers import matches, numbers_with_units, parse_quoted
from gates.model.markdown_prose import prose_blocks
from gates.model.record import parse_record


def claims_in(body: str) -> list[str]:
    record = parse_record(f"---\nid: x\n---\n{body}\n", "docs/design/x.md", Path("/repo"))
    return [term for _, _, term in find_claims(record)]


@pytest.mark.parametrize("sentence, term", [
    ("Split-KV S8 gives +22.6% DFlash E2E at 21.5K context.", "E2E"),
    ("Median decode is 72.9 tok/s.", "tok/s"),
    ("This lowers TTFT for long prompts.", "TTFT"),
    ("We expect a clear throughput gain in serving.", "throughput gain"),
    ("The end-to-end latency drops.", "end-to-end"),
    ("改动后端到端吞吐明显提升。", "端到端"),
    ("首字延迟下降。", "首字延迟"),
    ("它不仅提升了吞吐，也降低了延迟。", "吞吐"),
], ids=["e2e", "tok-s", "ttft", "throughput-gain", "end-to-end", "zh-e2e", "zh-first-token", "zh-not-only"])
def test_claims(sentence, term):
    assert claims_in(sentence) == [term]


@pytest.mark.parametrize("sentence", [
    "Kernel-level numbers must not be written as TTFT/TPOT.",
    "This record does not claim any end-to-end gain.",
    "No E2E measurement was made.",
    "不声称任何端到端收益；kernel 级数字不得写成 TTFT/TPOT（G7）。",
    "未测量首字延迟。",
    "DRAM / L2 吞吐 0.44% / 0.96%。",
    "The metric is called `TPOT` in the serving dashboard.",
    "```\nvllm bench serve --request-rate 8 --goodput ttft:500\n```",
    "The DRAM throughput is 0.44%.",
], ids=["must-not", "does-not-claim", "no-measurement", "zh-forbid", "zh-not-measured", "zh-memory-throughput",
        "code-span", "command-in-code-block", "memory-throughput"])
def test_not_claims(sentence):
    assert claims_in(sentence) == []


@pytest.mark.parametrize("text", [
    "We did not run the benchmark. TPOT improves by 10%.",
    "There is no regression, and TPOT drops by 10%.",
    "这里没有回退，但首字延迟下降了 10%。",
], ids=["next-sentence", "and-clause", "zh-but-clause"])
def test_negation_reaches_only_its_own_clause(text):
    assert len(claims_in(text)) == 1


@pytest.mark.parametrize("quoted, unit, measured, expected", [
    ("8.33", "%", 8.3312, True),
    ("8.33", "%", 0.083312, True),
    ("8.33", "%", 8.34, False),
    ("8.33", "", 0.0833, False),
    ("2.486e-4", "", 2.4861e-4, True),
    ("2.486e-4", "", 2.49e-4, False),
    ("39", "", 39.4, True),
    ("39", "", 39.6, False),
    ("4.20", "x", 4.2, True),
    ("1,536", "", 1536, True),
    ("0.5", "", float("nan"), False),
], ids=["pct", "pct-as-fraction", "pct-off", "fraction-needs-pct", "sci", "sci-off", "int-rounds", "int-off",
        "trailing-zero", "thousands", "nan"])
def test_numbers_compare_at_quoted_precision(quoted, unit, measured, expected):
    assert matches(parse_quoted(quoted, unit), measured) is expected


def test_numbers_with_units_skip_versions_and_section_numbers():
    found = numbers_with_units("6.8854 ms, +22.6%, 16.79x slower, §10.2, v3.6.0, 48.2 tok/s, 4.8 TB/s, 9.8 µs")
    assert [(q.text, q.unit) for q in found] == [
        ("6.8854", "ms"), ("+22.6", "%"), ("16.79", "x"), ("48.2", "tok/s"), ("4.8", "TB/s"), ("9.8", "µs")]


def test_a_pr_description_is_read_like_a_record_body():
    text = "## Why\n\nKernel numbers must not be written as TPOT.\n\nThis lowers TTFT by half.\n"
    assert list(find_claims_in_text(text)) == [(5, 13, "TTFT")]
    assert [line for line, _, _ in find_claims_in_text(text, first_line=40)] == [44]


CORPUS = Path(__file__).parent / "claims_corpus"


def corpus_cases(kind: str):
    """(id, first line, text) of every `=== name` case in `claims_corpus/<kind>/*.md`."""
    cases = []
    for path in sorted((CORPUS / kind).glob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        starts = [i for i, line in enumerate(lines) if line.startswith("=== ")]
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else len(lines)
            name = lines[start][4:].strip()
            cases.append(pytest.param(start + 2, "\n".join(lines[start + 1:end]), id=f"{path.stem}/{name}"))
    return cases


def test_the_corpus_has_cases_of_both_kinds():
    assert len(corpus_cases("claims")) >= 42 and len(corpus_cases("not_claims")) >= 30


@pytest.mark.parametrize("first_line, text", corpus_cases("claims"))
def test_corpus_claim_is_reported_on_its_own_lines(first_line, text):
    found = list(find_claims_in_text(text, first_line))
    assert found, f"no claim found in:\n{text}"
    last_line = first_line + text.count("\n")
    assert all(first_line <= line <= last_line for line, _, _ in found), found


@pytest.mark.parametrize("first_line, text", corpus_cases("not_claims"))
def test_corpus_non_claim_is_not_reported(first_line, text):
    assert list(find_claims_in_text(text, first_line)) == []


@pytest.mark.parametrize("text, position, term", [
    ("Intro.\n\nThe kernel is faster.\nUsers see TTFT drop.\n", (4, 11), "TTFT"),
    ("T**T**FT improves.\n", (1, 1), "TTFT"),
    ("A win for the end-to-\nend latency.\n", (1, 15), "end-to-end"),
    ("| metric | change |\n|---|---|\n| kernel | 4x |\n| `x` | TPOT -30% |\n", (4, 9), "TPOT"),
    ("- one\n- two\n  > three and TTFT drops\n", (3, 15), "TTFT"),
    ("<!-- a\nnote --> then TPOT drops\n", (2, 15), "TPOT"),
    ("```x``` TTFT drops\n", (1, 9), "TTFT"),
    ("TT&#70;T drops\n", (1, 1), "TTFT"),
    ("首先，\n首字时间缩短。\n", (2, 1), "首字时间"),
], ids=["paragraph-second-line", "emphasis", "hyphen-break", "table-cell", "nested-quote", "after-comment",
        "after-fake-fence", "entity", "zh"])
def test_a_claim_reports_the_source_line_and_column_of_its_first_character(text, position, term):
    assert list(find_claims_in_text(text)) == [(*position, term)]
    assert [(line - 99, col) for line, col, _ in find_claims_in_text(text, first_line=100)] == [position]


def test_a_record_claim_reports_its_line_in_the_file():
    record = parse_record("---\nid: x\n---\n# Title\n\n## §7 Results\n\nServing throughput rises 1.3x.\n",
                          "docs/design/x.md", Path("/repo"))
    assert list(find_claims(record)) == [(8, 1, "Serving throughput")]


def test_one_finding_per_clause_and_one_per_claiming_clause():
    assert [term for _, _, term in find_claims_in_text("TTFT and TPOT drop. TPOT drops; ITL drops.")] == [
        "TTFT", "TPOT", "ITL"]


def test_extra_terms_extend_the_vocabulary():
    text = "Median page-render rate rises 2x."
    assert list(detect(text)) == []
    assert list(detect(text, extra_terms=["page render rate"])) == [(1, 8, "page-render rate")]
    extra = ["page render rate"]
    assert list(detect("We do not claim any page render rate gain.", extra_terms=extra)) == []


def test_rendered_prose_reads_code_spans_and_excludes_comments_commands_and_configuration():
    text = ("A `code` span, <!-- hidden --> seen,\nnext line &amp; T**T**FT.\n\n"
            "```\n$ python bench.py --rate 8\nmax_num_seqs: 256\nMean TTFT (ms): 182.4\n```\n")
    assert [(block.kind, block.text) for block in prose_blocks(text)] == [
        ("paragraph", "A  code  span,  seen, next line & TTFT."), ("config line", "max num seqs: 256"),
        ("code output", "Mean TTFT (ms): 182.4")]


@pytest.mark.parametrize("text", [
    "```\nTPOT 12 ms\n```",
    "~~~text\nTTFT improves 2x\n~~~",
    "Output of the harness:\n\n    TTFT 812 ms -> 540 ms",
    "```\nmean_ttft_ms: 412.3 -> 288.1\n```",
    "```\n$ vllm bench serve --model m  # main: 4100 tok/s, this PR: 5700 tok/s\n```",
    "```\nmetric            main     this PR\nMean TTFT (ms)    412.3    288.1\n```",
], ids=["fenced", "tilde-fence", "indented", "config-that-compares", "comment-after-a-command", "columns"])
def test_results_pasted_in_a_code_block_are_read(text):
    assert list(find_claims_in_text(text))


def test_a_text_nested_deeper_than_the_parser_reads_is_still_read():
    assert [term for _, _, term in find_claims_in_text(">" * 40 + " TTFT drops by half.")] == ["TTFT"]
    nested_lists = "".join("  " * depth + "- x\n" for depth in range(40)) + "TTFT drops."
    assert [term for _, _, term in find_claims_in_text(nested_lists)] == ["TTFT"]


@pytest.mark.parametrize("text, line", [
    ('!!! note "Serving"\n    TTFT drops 30% on the replayed trace.\n', 2),
    ("??? tip\n    Completions arrive 30% sooner for long outputs.\n", 2),
    ('???+ info "Measured"\n    Serving handles 12.5 req/s now, up from 10.\n', 2),
    ('=== "Results"\n\n    Decode reaches 45 t/s, up from 38.\n', 3),
    ('=== "A"\n    !!! warning\n        吞吐提升 1.4 倍。\n', 3),
    ("<details><summary>Numbers</summary>\n\nTTFT drops 30% on the trace.\n\n</details>\n", 3),
    ('<input placeholder="TTFT drops 30% with this flag">\n', 1),
    ('<button value="2x faster generation">Try</button>\n', 1),
], ids=["admonition", "details", "open-details", "tab", "nested", "html-details", "placeholder", "button-value"])
def test_prose_the_site_renders_is_read(text, line):
    assert [found_line for found_line, _, _ in find_claims_in_text(text)] == [line]


@pytest.mark.parametrize("text", [
    '!!! note "Scope"\n    TTFT and TPOT will be measured in stage D.\n',
    '=== "Config"\n\n        ttft_p99_ms: 500\n        max_num_seqs: 256\n',
    "!!! note\n    The kernel is 1.8x faster than the reference.\n",
], ids=["admonition-plan", "config-in-tab", "admonition-kernel"])
def test_what_the_site_renders_as_no_claim_stays_no_claim(text):
    assert list(find_claims_in_text(text)) == []


def test_kernel_terms_make_a_clause_about_the_teams_kernel_kernel_level():
    sentence = "End to end, fused_moe is 1.8x faster on H100."
    assert [term for _, _, term in detect(sentence)] == ["End to end"]
    assert list(detect(sentence, kernel_terms=["fused_moe"])) == []


@pytest.mark.parametrize("text", ["1," * 5000, "9.*" * 4000, "| x | 12 |\n" * 500, "吞吐提升" * 2500],
                         ids=["digit-run", "emphasis-run", "long-table", "cjk-run"])
def test_hostile_text_is_read_without_catastrophic_backtracking(text):
    # Not a speed target (benchmarks measure those): a pattern that backtracks
    # catastrophically takes hours on inputs of a few thousand repeats, far past this
    # generous bound, while a loaded 2-core CI machine reads each in under a second.
    import time

    started = time.process_time()
    list(find_claims_in_text("| a | TTFT (ms) |\n|---|---|\n" + text))
    assert time.process_time() - started < 60.0


@pytest.mark.parametrize("head, unit, tail, repeats", [
    ("TTFT ", "1,", "", 500),  # a pasted array after a metric
    ("users ", "11", " ms", 500),  # a digit run after a serving subject
    ("", "吞吐", "", 250),  # one CJK clause of thousands of terms
    ("The kernel in isolation processes ", "1,", " tok/s", 500),  # thousands of rates in one clause
], ids=["array-after-metric", "digits-after-subject", "cjk-terms", "kernel-rates"])
def test_hostile_text_takes_time_in_proportion_to_its_length(head, unit, tail, repeats):
    # Four times the text may take about four times as long, not sixteen: a rule that looks at the whole clause
    # once per word in it, or a number pattern that starts again inside a run of digits, grows with the square.
    import time

    def seconds(repeats: int) -> float:
        text = head + unit * repeats + tail
        started = time.process_time()
        list(find_claims_in_text(text))
        return time.process_time() - started

    seconds(50)  # compiles the patterns
    short, long = min(seconds(repeats) for _ in range(2)), min(seconds(4 * repeats) for _ in range(2))
    assert long < 9 * max(short, 0.005), f"4x the text took {long / max(short, 0.005):.1f}x the time ({short:.3f} s, {long:.3f} s)"


@pytest.mark.parametrize("text, line", [
    ("We benchmarked TTFT on 8xH100. It dropped by about 30%.", 1),
    ("TTFT (p50)\n\n- main: 410 ms\n- this PR: 290 ms\n", 3),
    ("首字延迟：\n\n- 优化前 420 ms\n- 优化后 300 ms\n", 3),
], ids=["pronoun", "label-then-items", "zh-label-then-items"])
def test_a_result_given_to_a_metric_named_just_before_is_a_claim(text, line):
    assert [(found_line, term) for found_line, _, term in find_claims_in_text(text)][:1] == [
        (line, "TTFT" if "TTFT" in text else "首字延迟")]


@pytest.mark.parametrize("text", [
    "We benchmarked TTFT on 8xH100. The kernel itself is 2x faster.",
    "## TTFT\n\nThe decode kernel takes 12 us, down from 17 us.\n",
    "We looked at TTFT too. It is dominated by prefill for long prompts.",
], ids=["another-subject", "kernel-under-a-label", "pronoun-without-result"])
def test_a_later_sentence_about_something_else_gives_no_result(text):
    assert list(find_claims_in_text(text)) == []


def test_a_negated_mention_labels_no_paragraph_after_it():
    # a real pull request's disclaimer, then a sentence of its own about the kernel path
    assert list(find_claims_in_text("This change makes no end-to-end claim.\n\n"
                                    "This is a prerequisite for the 2x faster MoE path.\n")) == []


@pytest.mark.parametrize("text, line", [
    ("We do not report TTFT here. It dropped by 30%.", 1),      # a pronoun still takes the metric up
    ("TTFT (not claimed)\n\n- main: 410 ms\n- this PR: 290 ms\n", 3),  # a label with a remark is still a label
    ("No end-to-end claim.\n\nTTFT dropped 30%.\n", 3),        # a metric named again is judged on its own
], ids=["pronoun-after-negation", "remark-in-a-label", "metric-named-again"])
def test_values_after_a_negated_mention_that_name_their_metric_are_still_claims(text, line):
    assert [found_line for found_line, _, _ in find_claims_in_text(text)][:1] == [line]
