"""The claims engine: which sentences of a Markdown text assert an end-to-end result.

One engine reads records (G7), pull-request descriptions (`gate-check lint-pr`) and results
pages, so a sentence gets the same verdict and the same explanation wherever it stands.

A **claim** asserts a result of this change at the level of a model, a server, a user or a
training run. The text is read as it renders (`gates.model.markdown_prose`, with the
attributes a reader sees from `gates.model.shown_text`), split into clauses, and each clause
is judged in four steps:

1. **What it is about** (`gates.checks.claim_vocabulary`): an end-to-end metric (TTFT, tok/s,
   req/s, E2EL, tg128, iteration time, 首字延迟, 每秒请求数 ...), a scope word (end-to-end,
   e2e, 端到端), or a serving subject or measure (users, the model, Llama-3-8B, in production;
   latency, throughput). A measure or scope word about a kernel, memory, route or pass is
   kernel-level (`gates.checks.claim_subject`).
2. **Whether it states a result**: a quantity (30%, 2x, 1.4 倍, 12 ms, four-fold), a comparative
   (faster, 更快), a change (improves, drops, 提升, 降低) or a gain noun (speedup, regression), or a
   value given for the metric ("TTFT: 120", "| Mean TTFT (ms) | 120.5 |"). A clause that only
   names a metric is a mention.
3. **Its mood** (`gates.checks.claim_mood`, and `gates.checks.claim_headings` for what a heading or lead-in above it
   makes of it): a question, a request, a target or SLO, a plan, a
   negated result, a condition, a possibility, a definition or a pointer asserts nothing.
4. **Negations and scope markers that govern the term** (`gates.checks.claim_excuses`, rules
   E1-E4): "we do not claim any TTFT gain", "TTFT is out of scope", "Follow-up: measure TTFT".

What the blocks around a clause's block make of it (a lead-in above a table or a code block's
output, a reply under a quotation, the paragraph after an excused number) is read by
`gates.checks.claim_context`.

Every judged clause is a `Verdict`: a claim names the words that made it one (the metric and
the result); an excused clause says why (`gate-check lint-pr --explain`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import accumulate
from typing import Iterable

from gates.checks.claim_excuses import (
    TERM_MARK, is_excused, is_generic_measure, is_kernel_metric, is_lead_in_heading, quantity_follows,
)
from gates.checks.claim_context import (
    CODE_KINDS, GIVEN_ELSEWHERE, LeadIn, change_named_after, fences_with_two_arms, is_list_item, is_quoted,
    lines_of_the_base_named_after, names_both_arms, not_read_alone, number_given_to_the_change, reply_doubts_the_quote,
    rows_of_kernel_rate_tables,
)
from gates.checks.claim_headings import is_plan_label, planned_item
from gates.checks.claim_mood import (
    ARM_VALUE, EXPECTATION, POSSIBILITY, USUAL_VALUE, arm_values, confirmed_after, mood_of, not_seen, only_if,
    names_another_arm, quotation, states_relative_result, taken_back, target_carried, unmeasured_expectation,
)
from gates.checks.claim_sources import another_sources_value, baseline_alone, disowned
from gates.checks.claim_subject import Subjects
from gates.checks.claim_vocabulary import (
    ARM_NAMES, LATIN_WORD_START, METRIC_TERMS, NUMBER, RESULTS, SCOPE_TERMS, SERVING_MEASURES, SERVING_SUBJECTS,
    SETTING_COMPARISONS, PICKED_COMPARATIVES, SETUP_LEAD, VALUE_AFTER, extra_pattern, is_setting,
)
from gates.checks.term_pattern import Prefiltered, TermPattern, sharing_assertion
from gates.model.markdown_prose import ProseBlock, normalise_char, prose_blocks
from gates.model.shown_text import shown_attributes

_I = re.IGNORECASE
_SENTENCE_END = re.compile(r"[.](?=\s|$)|[;!?。！？；]")
_PERIOD = re.compile(r"[.](?=\s|$)|[!?。！？]|\n\s*\n")
_CLAUSE_END = re.compile(
    r"[.](?=\s|$)|[;!?。！？；]"
    r"|,\s*(?:but|and|while|whereas|yet|so|although|though|because)\b|\b(?:but|however|whereas|although)\b"
    r"|,\s*(?:但|而|并且|且|同时|可是|不过)|但是|然而|不过",
    _I,
)
_RESULT = re.compile(RESULTS, _I)
_SUBJECT = Prefiltered(re.compile(sharing_assertion(SERVING_SUBJECTS, LATIN_WORD_START), _I))
_MEASURE = Prefiltered(re.compile(sharing_assertion(SERVING_MEASURES, LATIN_WORD_START), _I))
_SETTING_COMPARISON = re.compile(SETTING_COMPARISONS, _I)
# What serves or trains, named as a measure ("the model is …", "decode is 30% faster"): its clause, not the words just
# before it, decides whether it is a kernel's ("Kernel 2x, model 1.4x" is about the model)
_ENTITY = re.compile(r"(?:model|system|stack|app(?:lication)?|build|branch|training|fine[\s\-]?tuning|pre[\s\-]?training"
                     r"|decode|decoding|prefill|streaming(?:\s+output)?|inference|requests?|quer(?:y|ies)|prompts?|jobs?|tasks?"
                     r"|agents?|clients?|callers?|customers?|waits?\b.*|(?:整个|整体)?模型)", _I)
_PICKED_COMPARATIVES = tuple(re.compile(pattern, _I) for pattern in PICKED_COMPARATIVES)
MENTION = "a mention: the clause states no result"
# "This change makes no end-to-end claim.": a mention a negation or scope marker governs. A later sentence's pronoun
# may still take it up ("We do not report TTFT here. It dropped 30%."), but it labels no block after it
NEGATED_MENTION = "a mention under a negation or scope marker: the clause states no result"
_MENTIONS = frozenset({MENTION, NEGATED_MENTION})
# An arm's value that takes up a metric named before it: "Main took 410 ms", "The branch wins by 120 ms",
# "- before: 410 ms", "Achieved: 290 ms", "290 ms, not 310 ms.", "实测降低了 31%"
_ARM_VALUE_START = (
    r"main|baseline|the\s+(?:branch|pr|patch|patched\s+[\w\-]+)|(?:(?:for|with|on|in)\s+)?this\s+(?:pr|change|branch|patch)"
    # "and phase 1 (this PR) measured 1.3x": an arm named by what it is, with the change in brackets
    r"|(?:and\s+)?(?:[\w\-]+\s+){1,3}\(\s*this\s+(?:pr|change|patch)\s*\)"
    r"|[\w\-]+(?:\s+the\s+change)?\s*:\s*(?=[+\-−~≈]?\d)|(?:measured|results?|done|achieved|after|before)\s*:"
    r"|(?=[+\-−~≈]?\d[\d.,]*\s*(?:%|x|×|ms|s|us|µs|μs|tok|req)?(?:[^.;]|\.\d){0,40}(?:[.;](?!\d)|$))|实测|结果\s*[:：]"
    r"|(?:在|用|有)?\s*(?:本\s*PR|本分支|改动[前后]|合入(?:本\s*PR)?\s*[前后]|这个\s*(?:分支|PR))"
    r"|(?=(?:roughly|about|around|approximately|almost|nearly)\s+[+\-−~≈]?\d[\d.,]*\s*(?:%|x|×))"
    # "The PR arm came in at 288", "Arm B: 26% ahead", "Compared with main: 26% more", "With these commits: 1,940",
    # "After the split-KV switch: 1,940", "Cand = HEAD …", "Now 601 s", "和 main 比：多 26%", "打开拆分 KV 开关后：288 ms"
    r"|the\s+pr\s+arm|this\s+pr['’]s\s+arm|arm\s+[ab](?![a-z])|the\s+(?:first|second|other)\s+arm|compared\s+(?:with|to)\s+(?:main|the\s+previous\s+build)"
    r"|(?:result|gain)\s+vs\.?\s+main|versus\s+the\s+previous\s+build|(?:with|on|after)\s+(?:these|the)\s+(?:commits|changes?)"
    r"|(?:after\s+the\s+)?split[\w\-]*\s+(?:on|enabled|build|switch)|cand(?:idate)?\s*=|now\s+(?=[~≈]?\d)"
    r"|本\s*PR\s*那一组|和\s*main\s*比|相比\s*main|相对上一个版本|现在\s*(?=[\d.])|打开|开启")
# What takes up a metric named in an earlier block, when that block is more than a short label: an arm's value only
_ARM_TAKE_UP = re.compile(rf"[\s(\-*]*(?:{_ARM_VALUE_START})(?![A-Za-z])", _I)
# What takes up a metric named earlier in the block: a pronoun, "ours", an answer, the change's new figure, or an arm
_PRONOUN = re.compile(
    r"[\s(\-*]*(?:(?:for\s+the\s+record\s*,?\s*)?(?:in\s+practice|in\s+reality|actually|in\s+our\s+runs?|on\s+(?:our|the|my)\s+[\w\s\-]{1,24}?)\s*,?\s*"
    r"|for\s+the\s+record\s*,?\s*|顺带一提\s*[，,]?\s*(?:在[^，。；]{0,12}[，,]?\s*)?)?"
    r"(?:it|they|this|that|these|those|both|which|ours|yes|because|here|now\s*:"
    r"|we\s+(?:claim|measured|saw|got|see|observed)|the\s+(?:change|new\s+[\w\-]+)"
    r"|the\s+(?:real|correct|actual|right|new)\s+(?:figure|number|value)|the\s+(?:remaining|rest)|它们?|其|该指标|这一指标|实际|两者"
    rf"|{_ARM_VALUE_START})(?![A-Za-z])", _I)
# "… from 410 ms down to 290 ms. Done.", "Status: done": the clause before, excused as a plan or request, was carried out
_CONFIRMS_PREVIOUS = re.compile(r"\W*(?:status\s*:\s*)?(?:done|achieved|met|shipped|delivered)\b|\W*(?:已完成|完成了|做到了|已达成)"
                                r"|\W*(?:that['’]?s|that\s+is)\s+what\s+(?:i|we)\s+(?:see|saw|measured|got|get)\b", _I)
# "the quick run has it 30% lower", "快速测试中它已经降低了 30%": the pronoun a few words in
_PRONOUN_INSIDE = re.compile(r"^\W*(?:[\w\-/]+\s+){0,5}?(?:it|them)\b(?=[^.;]*\d)|^[^，。；]{0,10}它"
                             # "Split-KV lifts that number by 19%", "takes a third off that wait", "这个数 / 这段等待"
                             r"|^\W*(?!that\s+(?:said|being|aside)\b)(?:[\w\-/]+\s+){0,6}?(?:that(?!\s+(?:said|being|aside)\b)|(?:that|this|the)\s+"
                             r"(?:number|figure|wait|gap|metric|value|count|curve))\b(?=[^.;]*(?:\d|faster|slower|quicker|sooner|third|quarter"
                             r"|half|fifth))|^[^，。；]{0,16}(?:这个|这段|该)\s*(?:数|数字|等待|指标|延迟|时间)"
                             # "Re-running their script on this branch prints 24 ms again": the change's own figure
                             r"|^\W*(?:[\w\-/]+\s+){0,5}?(?:on|with)\s+this\s+(?:branch|pr|change|patch)\b(?=[^.;]*\d)", _I)
# "Quick check already shows 290 ms vs 410 ms on main", "均值从 410 ms 降到 290 ms": a clause that sets two arms side by side
_COMPARES_ARMS = re.compile(r"\d[^.;]{0,40}?\b(?:vs\.?|versus|against|instead\s+of|than)\b[^.;]{0,30}?\b(?:main|baseline|before|master)\b"
                            r"|\bfrom\s+[\d.,]+\s*\S*\s+to\s+\d|从\s*[\d.,]+[^，。；]{0,12}?到\s*[\d.,]|\d\s*(?:->|→)\s*\d", _I)
# A table row under arms ("| main | this PR |" above "| 12.1 | 19.4 |"): its numbers are the arms' values
_ARM_HEADER = re.compile(rf"\b(?:{ARM_NAMES}|branch)\b|(?<![A-Za-z])w/o?(?=\s)"
                         r"|本\s*PR|改动[前后]|合入[前后]", _I)
# A row that is an arm's own, under a header of metric columns ("| before | 0.071 | 0.00712 |" under "| | prefill
# latency (s) | decode latency (s) |"): its numbers are that arm's values
_ARM_ROW = re.compile(rf"\s*(?:{ARM_NAMES}|branch|ours|old|new|本\s*PR|本分支|改动[前后]|合入[前后])\s*(?:\([^)|]{{0,30}}\))?"
                      r"\s*\|", _I)
_KERNEL_UNIT_HEADER = re.compile(r"\((?:µs|μs|us|ns|cycles|GB/s|TB/s|TFLOPS)\)", _I)
# "on 4 x A100 at the throughput main needed 8 x A100 for": device counts of two arms side by side are results
_DEVICE_COUNT = re.compile(r"\b\d+\s*[x×]\s*(?:[A-Z]{1,3}\d{2,4}[A-Za-z]*|GPUs?)\b|(?:Ascend\s+)?910[A-Z]?\s*[x×]\s*\d+")
_DEVICES_COMPARED = re.compile(r"\b(?:main|baseline|before|previously|was|instead\s+of|vs\.?|versus|needed|from|than)\b|需要|之前|改动前",
                               _I)
# "| TPOT population CV | 0.148% | 0.827% |": a row whose label is a spread gives no result
_SPREAD_ROW = re.compile(r"\s*[^|]*\b(?:CV|coefficient\s+of\s+variation|std(?:dev)?|standard\s+deviation|variance|stdev)\b[^|]*\|",
                         _I)
_SERVING_RATE_BEFORE = re.compile(r"\b(?:output|request|serving|generation|total|e2e|end-to-end|decode|prefill)\s*$", _I)
_RATE_WORD = re.compile(r"tok(?:en)?s?\s*/\s*s|\bt/s\b|tokens?\s+per\s+sec|throughput|吞吐|每秒", _I)
# "…, and so is the model's decode step", "so did Llama-3-8B decode", "decode is too": the result of the clause before
_SO_TOO = re.compile(r"^\W*(?:and\s+)?(?:so\s+(?:is|was|are|were|does|did|do|has)\b|the\s+same\s+(?:holds|goes|is\s+true)\s+for\b"
                     r"|as\s+(?:is|does|did)\b)|\b(?:is|are|was|were|does|did)\s+too\b|\bas\s+well\b|也一样|同样", _I)
_QUANTITY_RESULT = re.compile(r"[+\-−~≈]?\d")
# "decode batches from 1 to 256", "contexts from 2k to 128k": the range a run covers, not a change
_RANGE_SETTING = re.compile(r"\b(?:batch(?:es)?|batch\s+sizes?|sizes?|contexts?|context\s+lengths?|lengths?|seq(?:uence)?s?"
                            r"|prompts?|shapes?|heads?|ranks?|gpus?)\s+(?:of\s+)?from\s+[\d.,]+\s*[kKM]?\s+to\s+[\d.,]+", _I)
# "so improving mean TPOT alone does not always shorten the iteration": a gerund after a conjunction or preposition
# names an action, not a result
_ACTION_GERUND = re.compile(r"(?:improv|reduc|increas|cutt|lower|rais|boost|decreas|dropp|shorten)ing", _I)
_BEFORE_AN_ACTION = re.compile(r"(?:^|\b(?:so|by|of|for|from|without|when|while|on|about|to|and|or|that|thus)\s+)$", _I)
# "光看算子加速不太好判断收益": a gain noun that is the object of judging or measuring names what is judged, not a result
_ZH_JUDGED_GAIN = re.compile(r"(?:收益|提升|加速|改善)")
# "- Improvements to the process output step in the vLLM engine (#104)": a gain noun that names a change, with no number
# "improve the efficiency of the review process": a change of something that is no performance
_NOT_PERFORMANCE_AFTER = re.compile(r"\s+(?:the\s+)?(?:efficiency|quality|readability|maintainability|clarity|robustness"
                                    r"|usability)\s+of\s+(?:the\s+|our\s+)?(?:review|code|docs?|documentation|process|tests?"
                                    r"|codebase)\b", _I)
_NAMED_CHANGE = re.compile(r"(?:improvements?|optimi[sz]ations?|enhancements?)\s+(?:to|in|for|of)\s", _I)
_ZH_JUDGING = re.compile(r"(?:判断|评估|衡量|看出|估算|量化|确认)\s*(?:一下)?\s*(?:的)?\s*$")
# "We do not claim any TTFT gain beyond the 30% we measured": a negation does not take back a result the author measured
# "Set `--goodput ttft:500 tpot:40`", "SLOs such as ttft:300 tpot:40": a metric that is the key of a key:value argument
# (after a command-line flag, or in a list of lower-case configuration keys) is a setting
_KEY_VALUE = re.compile(r"[:=]\d")
_KEY_VALUE_LIST = re.compile(r"[:=]\d[\d.]*\s+[a-z_]+[:=]\d|\s?=\s?\d[\d.]*\s*,\s*"
                             r"(?!(?:main|baseline|master|before|after|pr|this\s+pr|old|new)\b)[a-z_]+(?:\s[a-z_]+)?\s?=\s?\d")
# "ISL = 1000, …, rps = 64, max concurrency = 64": settings written as assignments
_KEY_VALUE_AFTER = re.compile(r"(?:[a-z_]+[:=]\d[\d.]*\s+|[a-z_]+\s?=\s?\d[\d.]*\s*,\s*(?:…\s*,?\s*)?)$")
_FLAG_ARGUMENT = re.compile(r"(?<![\w-])--[A-Za-z][\w\-]*(?:[=\s]+[\w:./\-]+)*?[=\s]+$")
# "The decode throughput of the MLA kernel, …": a metric that names the kernel it is measured on
_OF_A_KERNEL = re.compile(r"\s+(?:of|for)\s+(?:the|this|our|a|each)\s+(?:[\w\-+]+\s+){0,3}?(?:kernels?|ops?|operators?"
                          r"|GEMMs?|GEMVs?)(?:\s+(?:alone|itself|only|in\s+isolation))?"
                          r"(?=\s*(?:[,(:;]|$|\b(?:is|was|reaches|reached|hits|peaks|runs|improves|improved|at|on|in|vs)\b))", _I)
_MEASURED_BY_AUTHOR = re.compile(r"\b(?:we|i)\s+(?:have\s+)?(?:measured|saw|got|observed|found|recorded)\b|\bshowed\b", _I)
# "不是模型推理", "not the model": a model-level word named to be denied
_DENIED_BEFORE = re.compile(r"(?:\bnot\s+(?:the\s+|a\s+)?|不是\s*\S{0,3}|并非\s*\S{0,3}|而非\s*\S{0,3})\s*$", _I)
_MODEL_LEVEL = TermPattern(f"{METRIC_TERMS}|{SERVING_SUBJECTS}", _I)


def _in_identifier(text: str, start: int, end: int) -> bool:
    """The match is part of an identifier (`test_serving_throughput_regression`): a name, not words."""
    return (start > 0 and text[start - 1] == "_") or (end < len(text) and text[end] == "_")


def normalise_text(text: str) -> str:
    return "".join(normalise_char(char) for char in text)


@dataclass(frozen=True)
class Vocabulary:
    """The claim vocabulary with a configuration's additions (`g7.extra_terms`, `g7.kernel_terms`)."""

    extra_terms: tuple[str, ...] = ()
    kernel_terms: tuple[str, ...] = ()

    def __post_init__(self):
        extra = extra_pattern(self.extra_terms, normalise_text)
        object.__setattr__(self, "metrics", TermPattern(METRIC_TERMS + (f"|{extra}" if extra else ""), _I))
        object.__setattr__(self, "scopes", TermPattern(SCOPE_TERMS, _I))
        object.__setattr__(self, "subjects", Subjects(self.kernel_terms))


def vocabulary(extra_terms: Iterable[str] = (), kernel_terms: Iterable[str] = ()) -> Vocabulary:
    key = (tuple(extra_terms), tuple(kernel_terms))
    if key not in _VOCABULARIES:
        _VOCABULARIES[key] = Vocabulary(*key)
    return _VOCABULARIES[key]


_VOCABULARIES: dict[tuple, Vocabulary] = {}


def vocabulary_of(settings) -> Vocabulary:
    """The vocabulary a configuration asks for (`g7.extra_terms`, `g7.kernel_terms`)."""
    return vocabulary(settings.g7_extra_terms, getattr(settings, "g7_kernel_terms", ()))


@dataclass(frozen=True)
class Verdict:
    """One judged clause: `claim` with the words that made it one, else the `reason` it was excused."""

    line: int
    col: int
    words: str
    claim: bool
    result: str = ""
    reason: str = ""
    clause: str = ""

    def explain(self) -> str:
        if self.claim:
            return f"claim: {self.words!r} with the result {self.result!r}"
        return f"not a claim: {self.words!r} is {self.reason}"


def clauses(text: str):
    """(start, end) of each clause of a rendered block; a clause ends at a sentence end or a contrastive joint."""
    start = 0
    for match in _CLAUSE_END.finditer(text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


class _InTextOrder:
    """Matches in text order, found by the span they start in."""

    def __init__(self, matches: Iterable[re.Match]):
        self.matches = list(matches)
        self.starts = [match.start() for match in self.matches]

    def within(self, start: int, end: int) -> list[re.Match]:
        return self.matches[bisect_left(self.starts, start):bisect_left(self.starts, end)]


def _masked(text: str, start: int, end: int, terms: list[re.Match], blanks=()) -> tuple[str, list[int]]:
    """The clause text[start:end] with every term as one mark (and the `blanks` spans as spaces),
    and the index of each term in it."""
    chars = list(text[start:end])
    for blank_start, blank_end in blanks:
        for index in range(max(blank_start, start), min(blank_end, end)):
            chars[index - start] = " "
    pieces, kept, marks, length = [], start, [], 0
    for match in terms:
        pieces.append("".join(chars[kept - start:match.start() - start]))
        length += match.start() - kept
        marks.append(length)
        pieces.append(TERM_MARK)
        length += 1
        kept = match.end()
    pieces.append("".join(chars[kept - start:]))
    return "".join(pieces), marks


_ANY_WORD = re.compile(r"[^\W_]")


class _Block:
    """One prose block with everything the clause judgements need, found once."""

    def __init__(self, block: ProseBlock, words: Vocabulary, kernel_rates: bool = False, kernel_context: bool = False,
                 arm_columns: bool = False):
        self.row_start = 0
        # an output line under a lead-in that names both arms, or naming them itself: its numbers are the arms' values
        self.arm_columns = block.kind == "code output" and (arm_columns or names_both_arms(block.text))
        if block.kind == "table row" and block.header:
            block, self.row_start = _under_its_header(block)
        self.block, self.words, text = block, words, block.text
        self.text = text
        self.under_lead_in = is_lead_in_heading(block.heading)
        if not _ANY_WORD.search(text):  # no letter, digit or CJK character: no term and no result to find
            self.terms = self.concepts = self.results = _InTextOrder([])
            self.kinds, self.sentence_ends = {}, [len(text)]
            self.spans = list(clauses(text))
            self.span_starts = [start for start, _ in self.spans]
            return
        self.spans = spans = list(clauses(text))
        self.span_starts = span_starts = [start for start, _ in spans]
        kernel_clauses: dict[int, bool] = {}

        def in_kernel_clause(index: int) -> bool:
            start, end = spans[bisect_right(span_starts, index) - 1]
            if start not in kernel_clauses:
                kernel_clauses[start] = words.subjects.clause_is_kernel_level(text[start:end]) is not None
            return kernel_clauses[start]

        def kernel_rate(index: int) -> bool:
            start, end = spans[bisect_right(span_starts, index) - 1]
            return words.subjects.rate_of_a_kernel(text[start:index], text[start:end])

        metrics = [(m, "metric") for m in words.metrics.finditer(text)
                   if not (kernel_rates and _RATE_WORD.search(m.group(0))
                           and not _SERVING_RATE_BEFORE.search(text, max(0, m.start() - 16), m.start()))
                   and not is_kernel_metric(m.group(0), text[max(0, m.start() - 16):m.start()], text[m.end():m.end() + 8])
                   and not kernel_rate(m.start())
                   and not (_FLAG_ARGUMENT.search(text, max(0, m.start() - 60), m.start()) and _KEY_VALUE.match(text, m.end()))
                   and not _in_identifier(text, m.start(), m.end())
                   and not (m.group(0).islower() and block.kind not in CODE_KINDS and (_KEY_VALUE_LIST.match(text, m.end())
                                                      or _KEY_VALUE_AFTER.search(text, max(0, m.start() - 24), m.start())))
                   and not _OF_A_KERNEL.match(text, m.end())
                   and not (is_generic_measure(m.group(0))
                            and (kernel_context or words.subjects.measure_is_kernel_level(text, m.start(), m.end())
                                 or in_kernel_clause(m.start())))]
        scopes = [(m, "scope") for m in words.scopes.finditer(text)]
        ordered = sorted(metrics + scopes, key=lambda pair: (pair[0].start(), -pair[0].end()))
        self.terms = _InTextOrder(m for index, (m, _) in enumerate(ordered)
                                  if not index or m.start() >= ordered[index - 1][0].end())
        self.kinds = {m.start(): kind for m, kind in metrics + scopes}
        self.kernel_context = kernel_context
        self.concepts = _InTextOrder(m for m in self._serving_concepts()
                                     if not (kernel_rates and _RATE_WORD.search(m.group(0)))
                                     and not _in_identifier(text, m.start(), m.end()))
        self.sentence_ends = [match.start() for match in _SENTENCE_END.finditer(text)] + [len(text)]

    @cached_property
    def spread_row(self) -> bool:
        """A table row whose label is a spread ("| TPOT population CV | 0.148% | 0.827% |"): its numbers are no results."""
        return bool(self.row_start) and _SPREAD_ROW.match(self.text, self.row_start) is not None

    @cached_property
    def arm_table(self) -> bool:
        """A table row whose numbers are arms' values: under arm headers ("| | main | this PR |"), or an arm's own row."""
        if self.arm_columns:  # "mean_ttft_ms   412.3   288.1" under "main vs this PR:"
            return True
        return bool(self.row_start) and not self.spread_row and bool(_ARM_HEADER.search(self.text[:self.row_start])
                                                                     or _ARM_ROW.match(self.text, self.row_start))

    @cached_property
    def periods(self) -> list[re.Match]:
        """The block's sentence-ending periods (semicolons do not end a sentence here), found once."""
        return list(_PERIOD.finditer(self.text))

    @cached_property
    def results(self) -> _InTextOrder:
        """The block's results, found when a clause is first judged: most blocks name no claim word."""
        text = self.text
        choosers = [m.span() for m in _SETTING_COMPARISON.finditer(text)]
        choosers += [m.span() for m in _RANGE_SETTING.finditer(text)]
        choosers += [m.span(next(name for name, value in m.groupdict().items() if value))
                     for pattern in _PICKED_COMPARATIVES for m in pattern.finditer(text)]
        spread_row = self.spread_row
        found = list(_RESULT.finditer(text))
        if len(_DEVICE_COUNT.findall(text)) >= 2 and _DEVICES_COMPARED.search(text):
            found = sorted(found + list(_DEVICE_COUNT.finditer(text)), key=lambda m: m.start())
        return _InTextOrder(m for m in found
                            if not (spread_row and m.start() >= self.row_start)
                            and not any(start <= m.start() < end for start, end in choosers)
                            and not (_ACTION_GERUND.fullmatch(m.group(0))
                                     and _BEFORE_AN_ACTION.search(text, max(0, m.start() - 16), m.start()))
                            and not _NOT_PERFORMANCE_AFTER.match(text, m.end())
                            and not self._names_a_change(m)
                            and not (_ZH_JUDGED_GAIN.fullmatch(m.group(0))
                                     and _ZH_JUDGING.search(text, max(0, m.start() - 8), m.start()))
                            and not (m.group(0).lstrip("~≈+-−")[:1].isdigit() and is_setting(text, m.start(), m.end()))
                            and not _in_identifier(text, m.start(), m.end()))

    def _serving_concepts(self) -> list[re.Match]:
        text, subjects = self.text, self.words.subjects
        span_starts = self.span_starts
        measures = [m for m in _MEASURE.finditer(text)
                    if _ENTITY.fullmatch(m.group(0)) or not self.kernel_context and not subjects.measure_is_kernel_level(
                        text, m.start(), m.end(), self.spans[bisect_right(span_starts, m.start()) - 1][0])]
        found = sorted([m for m in _SUBJECT.finditer(text) if not _DENIED_BEFORE.search(text, max(0, m.start() - 16), m.start())] + measures,
                       key=lambda match: match.start())
        return [match for index, match in enumerate(found) if not index or match.start() >= found[index - 1].end()]

    def verdicts(self, label: Verdict | None = None, short_label: bool = True):
        """The verdict of each clause that names a claim word, and of each clause that gives a result to a
        metric named just before it without one: "We benchmarked TTFT. It dropped by 30%." (a pronoun), or
        the items under a label ("TTFT (p50)" above "- main: 410 ms", "- this PR: 290 ms"), `label`."""
        previous = label
        for index, (start, end) in enumerate(self.spans):
            verdict = self._judge(start, end)
            if verdict is None and previous is not None and not previous.claim \
                    and not previous.reason.startswith("kernel-level"):
                if previous is label:  # a metric named in an earlier block: its label's items, or an arm's value
                    takes_up = short_label or (index == 0 and _ARM_TAKE_UP.match(self.text, start) is not None)
                else:
                    takes_up = bool(_PRONOUN.match(self.text, start) or _PRONOUN_INSIDE.search(self.text[start:end])
                                    or _COMPARES_ARMS.search(self.text[start:end]))
                if takes_up:
                    verdict = self._continued(previous, start, end)
                if verdict is None and _CONFIRMS_PREVIOUS.match(self.text, start) and previous.result:
                    verdict = replace(previous, claim=True, reason="")  # "Bring TTFT from 410 ms down to 290 ms. Done."
            if verdict is not None:
                yield verdict
                previous = verdict

    def _continued(self, mention: Verdict, start: int, end: int) -> Verdict | None:
        """The clause [start, end) read as the result of the metric `mention` named, or None when it states none."""
        clause = self.text[start:end]
        results = [m for m in self.results.within(start, end) if _QUANTITY_RESULT.match(m.group(0))
                   or not m.group(0)[:1].isdigit()]
        if not results and arm_values(clause):
            results = list(NUMBER.finditer(self.text, start, end))[:1]  # "main 3120, this PR 4010."
        if not results and self.arm_table:
            numbers = list(NUMBER.finditer(self.text, max(start, self.row_start), end))
            own_row = _ARM_ROW.match(self.text, self.row_start) is not None  # "| this PR | 290 |": one arm's value
            results = numbers[:1] if len(numbers) >= (1 if own_row else 2) else []
        if not results or self.words.subjects.clause_is_kernel_level(clause):
            return None
        sentence_end = self.sentence_ends[bisect_left(self.sentence_ends, end)]
        ends_with = self.text[sentence_end] if sentence_end < len(self.text) else ""
        _, sentence, _, following = self._sentence_at(start)
        mood = mood_of(clause, ends_with=ends_with, results=[(m.start() - start, m.end() - start) for m in results],
                       sentence=sentence)
        if mood is None:
            mood = not_seen(clause, sentence, following) or another_sources_value(clause, sentence, following)
        result = self.text[results[0].start():max(results[0].end(), min(results[-1].end(), results[0].start() + 40))]
        at = results[0].start()
        if mood is not None:
            return self._verdict(at, mention.words, False, clause, result, mood.explain())
        return self._verdict(at, mention.words, True, clause, result)

    def _verdict(self, at: int, words: str, claim: bool, clause: str, result: str = "", reason: str = "") -> Verdict:
        line, col = self.block.position(at)
        return Verdict(line, col, words, claim, result, reason, clause.strip())

    def _judge(self, start: int, end: int) -> Verdict | None:
        """The verdict of the clause [start, end): its first claim, else why its first candidate is excused."""
        text = self.text
        terms = [m for m in self.terms.within(start, end)]
        concepts = self.concepts.within(start, end)
        if not terms and not concepts:
            return None
        clause = text[start:end]
        sentence_end = self.sentence_ends[bisect_left(self.sentence_ends, end)]
        ends_with = text[sentence_end] if sentence_end < len(text) else ""
        results = [m for m in self.results.within(start, end)]
        if SETUP_LEAD.match(clause) and not arm_values(clause):  # "Setup: 1xH100, 10 req/s": every number is a setting
            results = [m for m in results if not m.group(0)[:1].isdigit()]
        if not results and _SO_TOO.search(clause):
            results = self._results_before(start)
        if not results:
            results = self._results_after(end, sentence_end)
        first_excuse = None
        if terms:
            masked, marks = _masked(text, start, end, terms)
            for term, mark in zip(terms, marks):
                judged = self._judge_term(term, mark, masked, clause, start, end, results, ends_with, sentence_end)
                if judged.claim:
                    return judged
                first_excuse = first_excuse or judged
        # a measure right after a term is part of its phrase ("e2e latency", "端到端吞吐"): the term judges it
        concepts = _not_touching(concepts, terms)
        if concepts:
            judged = self._judge_shape(concepts, clause, start, end, results, ends_with)
            if judged is not None and (judged.claim or first_excuse is None):
                return judged
        return first_excuse

    def _mood(self, clause: str, start: int, ends_with: str, results: list[re.Match]):
        """The mood of the clause at `start`, read up to the end of the clause that holds its last result: a result
        taken from later in the sentence is read with the words around it ("TTFT is noisy, so small differences
        should not be read as wins")."""
        reach = max((m.end() for m in results), default=start)
        if reach > start + len(clause):
            clause = self.text[start:self.spans[bisect_right(self.span_starts, reach - 1) - 1][1]]
        sentence_start, sentence, period, following = self._sentence_at(start)
        mood = mood_of(clause, ends_with=ends_with, results=[(m.start() - start, m.end() - start) for m in results],
                       sentence=sentence)
        next_period = _PERIOD.search(following)
        next_sentence = following[:next_period.start()] if next_period else following
        if mood is None:
            return not_seen(clause, sentence, following) or only_if(clause, sentence) or disowned(clause, sentence + " " + next_sentence) \
                or taken_back(clause, following) or unmeasured_expectation(clause, sentence) \
                or quotation(clause, sentence + (period.group(0) if period else ""),
                             [(m.start() - start, m.end() - start) for m in results], following) \
                or target_carried(clause, self.text[sentence_start:start]) or baseline_alone(clause, sentence, following) \
                or another_sources_value(clause, sentence, following) or planned_item(clause, self.block.heading, sentence)
        if mood.name == USUAL_VALUE and names_another_arm(sentence):
            return None  # "Usually TTFT is 290 ms; on main it was 410 ms": one side of a comparison
        numeric = [m.end() for m in results if re.search(r"\d", m.group(0))] or [m.end() for m in results]
        after_results = min(numeric, default=start + len(clause))  # after the expected number: what confirms it
        if mood.name in (EXPECTATION, POSSIBILITY, "a condition") and (
                confirmed_after(self.text[after_results:sentence_start + len(sentence)]) or confirmed_after(next_sentence)):
            return None  # "预期吞吐能提升 35%，压测也是这个数", "In theory 1.4x, and our serving benchmark agrees"
        return mood

    def _sentence_at(self, start: int) -> tuple[int, str, re.Match | None, str]:
        """(where it starts, its text, the period that ends it, the block's text after it up to 240 characters) of
        the sentence that holds `start`."""
        periods = self.periods
        index = bisect_left([p.start() for p in periods], start)
        sentence_start = periods[index - 1].end() if index else 0
        period = periods[index] if index < len(periods) else None
        following = self.text[period.end():period.end() + 240] if period else ""
        return sentence_start, self.text[sentence_start:period.start() if period else len(self.text)], period, following

    def _results_before(self, start: int) -> list[re.Match]:
        """The results of the clause before, in the same sentence: what "so is the model" takes over."""
        index = bisect_right(self.span_starts, start - 1) - 1
        if index < 0:
            return []
        before_start, before_end = self.spans[index]
        if _PERIOD.search(self.text, before_end, start):
            return []
        return self.results.within(before_start, before_end)

    def _results_after(self, end: int, sentence_end: int) -> list[re.Match]:
        """The results of the rest of the sentence up to its next candidate: "TTFT 不在本 PR 范围内，但下降了两倍"."""
        later = [m.start() for m in self.terms.within(end, sentence_end) + self.concepts.within(end, sentence_end)]
        found = self.results.within(end, min(later, default=sentence_end))
        # not from a later clause about a kernel: "… for serving …, but so far I've only measured the gemv: 31 µs -> 22 µs"
        return [m for m in found if not self.words.subjects.clause_is_kernel_level(self._clause_at(m.start()))]

    def _names_a_change(self, result: re.Match) -> bool:
        """A gain noun that opens its clause and names a change, with no number or metric after it: "- Improvements
        to the process output step in the vLLM engine (#104)"."""
        if not _NAMED_CHANGE.match(self.text, result.start()):
            return False
        start, _ = self.spans[bisect_right(self.span_starts, result.start()) - 1]
        if re.search(r"[^\W_]", self.text[start:result.start()]):
            return False
        rest = self.text[result.end():self.sentence_ends[bisect_left(self.sentence_ends, result.end())]]
        return not states_relative_result(rest) and not self.words.metrics.search(rest)

    def _clause_at(self, index: int) -> str:
        start, end = self.spans[bisect_right(self.span_starts, index) - 1]
        return self.text[start:end]

    def _judge_term(self, term, mark, masked, clause, start, end, results, ends_with, sentence_end) -> Verdict:
        words, at = term.group(0), term.start()
        if self.kinds.get(at) == "scope":
            level = self.words.subjects.scope_word_level(clause, at - start, term.end() - start,
                                                         self._model_level_beside(clause, words))
            if level:
                return self._verdict(at, words, False, clause, reason=level)
        result = self._result_of(term, results)
        if result is None:
            negated = is_excused(masked, mark, quantity_follows(self.text, term.end(), sentence_end), self.under_lead_in)
            return self._verdict(at, words, False, clause, reason=NEGATED_MENTION if negated else MENTION)
        mood = self._mood(clause, start, ends_with, results)
        if mood is not None:
            return self._verdict(at, words, False, clause, result, reason=mood.explain())
        if is_excused(masked, mark, quantity_follows(self.text, term.end(), sentence_end), self.under_lead_in) \
                and not (_MEASURED_BY_AUTHOR.search(clause) and states_relative_result(clause)):
            return self._verdict(at, words, False, clause, result,
                                 reason="negated or out of scope (a negation, a scope marker or a follow-up lead-in "
                                        "governs it)")
        return self._verdict(at, words, True, clause, result)

    def _result_of(self, term: re.Match, results: list[re.Match]) -> str | None:
        """The words of the clause that state a result (the term's own, as in "throughput gain", count), or a
        value given for the term; None when there are none."""
        if results:
            return self.text[results[0].start():max(results[0].end(), min(results[-1].end(), results[0].start() + 40))]
        value = VALUE_AFTER.match(self.text, term.end()) or (
            self.block.kind in CODE_KINDS and _COLUMN_VALUE.match(self.text, term.end()))
        if value:
            return value.group(0).strip()
        clause_end = self.spans[bisect_right(self.span_starts, term.start()) - 1][1]
        arm = ARM_VALUE.search(self.text, term.end(), clause_end)
        if arm and arm_values(self.text[term.end():clause_end]):
            return arm.group(0).strip()  # "Mean TTFT (ms)  main=412.3  pr=288.1", "step_time before=1.62 after=1.14"
        if self.row_start and term.start() < self.row_start and not self.spread_row:
            cell = _NUMBER_CELL.search(self.text, self.row_start)
            if cell:
                return cell.group(1)
        if self.arm_columns:
            values = list(_COLUMN_NUMBER.finditer(self.text, term.end()))
            if len(values) >= 2:
                return values[0].group(0)  # "mean_ttft_ms   412.3   288.1" under "main vs this PR:"
        if self.arm_table:
            cells = list(_NUMBER_CELL.finditer(self.text, term.end()))
            if len(cells) >= 2:
                return cells[0].group(1)  # "| TTFT p50 (ms) | 410 | 290 |" under "| | main | this PR |"
        return None

    @staticmethod
    def _model_level_beside(clause: str, scope_words: str) -> bool:
        """A model-level metric or subject in the clause besides the scope word itself."""
        return any(match.group(0) != scope_words and not _DENIED_BEFORE.search(clause, max(0, match.start() - 16), match.start())
                   for match in _MODEL_LEVEL.finditer(clause))

    def _judge_shape(self, concepts, clause, start, end, results, ends_with) -> Verdict | None:
        """A serving subject or measure with a result: "Chat replies arrive 30% sooner", "延迟降低30%"."""
        subjects = self.words.subjects
        concepts = [c for c in concepts if not subjects.model_is_setting(clause, c.start() - start, c.end() - start)]
        changes = [m for m in results if not any(c.start() <= m.start() < c.end() for c in concepts)]
        if not concepts:
            return None
        first = concepts[0]
        if not changes and self.arm_table \
                and not subjects.clause_is_kernel_level(clause) and not _KERNEL_UNIT_HEADER.search(self.text[:self.row_start]):
            cells = list((_COLUMN_NUMBER if self.arm_columns else _NUMBER_CELL).finditer(self.text, first.end(), end))
            changes = cells[:1] if len(cells) >= 2 else []  # "| chat | 1900 | 1400 |" under "p99 before | p99 after"
        if not changes:
            return self._verdict(first.start(), first.group(0), False, clause, reason=MENTION)
        own_subjects = [m for m in _SUBJECT.finditer(clause) if not subjects.model_is_setting(clause, m.start(), m.end())]
        if (_MEASURE.fullmatch(first.group(0)) or _ENTITY.fullmatch(first.group(0))) and not own_subjects:
            level = subjects.clause_is_kernel_level(clause)
            conjunct = _conjunct(clause, first.start() - start)
            labelled = clause[:conjunct[0]].rstrip().endswith((":", "：")) \
                and subjects.clause_is_kernel_level(clause[:conjunct[0]])  # "microbenchmark: 27% lower latency …"
            if level and _COMPARISON_BASE.match(first.group(0)):
                if not _KERNEL_VALUE.search(clause) or self.words.scopes.search(clause) \
                        or self.words.metrics.search(clause):
                    # "After the kernel rewrite we measure 1.2x over the previous release", "End-to-end throughput over
                    # the previous release: 1.4x, the GEMMs now at 650 TFLOPS": the release's
                    level = None
            elif level and any(conjunct[0] <= m.start() - start < conjunct[1] for m in changes) and not labelled \
                    and not subjects.clause_is_kernel_level(clause[conjunct[0]:conjunct[1]]):
                level = None  # "The kernel is 2x faster and the model 1.4x": the model's conjunct has its own result
            if level:
                return self._verdict(first.start(), first.group(0), False, clause, changes[0].group(0), level)
        mood = self._mood(clause, start, ends_with, changes)
        if mood is not None:
            return self._verdict(first.start(), first.group(0), False, clause, changes[0].group(0), mood.explain())
        masked, marks = _masked(self.text, start, end, concepts, blanks=[change.span() for change in changes])
        sentence_end = self.sentence_ends[bisect_left(self.sentence_ends, end)]
        if is_excused(masked, marks[0], quantity_follows(self.text, first.end(), sentence_end), self.under_lead_in):
            return self._verdict(first.start(), first.group(0), False, clause, changes[0].group(0),
                                 "negated or out of scope (a negation, a scope marker or a follow-up lead-in governs it)")
        return self._verdict(first.start(), first.group(0), True, clause, changes[0].group(0))


def _not_touching(concepts: list[re.Match], terms: list[re.Match]) -> list[re.Match]:
    """The concepts that neither overlap a term nor start right after one, in one pass over the terms sorted by
    start (a clause of thousands of terms stays n log n)."""
    ordered = sorted(terms, key=lambda term: term.start())
    starts = [term.start() for term in ordered]
    reach = list(accumulate((term.end() + 1 for term in ordered), max))  # the furthest end + 1 of the first i terms

    def touches(concept: re.Match) -> bool:
        before = bisect_left(starts, concept.end())  # the terms that start before the concept ends
        return before > 0 and reach[before - 1] >= concept.start()

    return [concept for concept in concepts if not touches(concept)]


# A release or version named as what the result is compared with ("~1.2x over the previous release") is the serving
# system's, unless the clause gives a kernel's value the ratio is of ("740 TFLOPs/s in FP16, ~1.2x over the previous
# release")
_COMPARISON_BASE = re.compile(r"(?:than|over|vs\.?|versus)\s", _I)
_KERNEL_VALUE = re.compile(r"\d\s*(?:[TG]FLOP[sS]?(?:/s)?|[KMGT]i?B/s|us|µs|μs|ns)(?![A-Za-z])")
_CONJUNCTION = re.compile(r",\s*|\s+(?:and|but|while|whereas)\s+|[:;]\s*", _I)


def _conjunct(clause: str, at: int) -> tuple[int, int]:
    """The span of the conjunct of `clause` around offset `at` (between commas, "and", "but" or colons)."""
    starts = [m.end() for m in _CONJUNCTION.finditer(clause) if m.end() <= at]
    ends = [m.start() for m in _CONJUNCTION.finditer(clause) if m.start() > at]
    return (max(starts, default=0), min(ends, default=len(clause)))


# A value in a column of printed output: "P99 TTFT (ms)  540.2  [910.4]"
_COLUMN_VALUE = re.compile(r"\s*(?:(?:p\d{1,3}|mean|median)\s*)?\([^)]{0,12}\)\s{2,}[+\-]?\d")
_COLUMN_NUMBER = re.compile(r"(?<![\w.])[+\-]?\d[\d.,]*(?![\w.])")  # a value standing alone between spaces
_NUMBER_CELL = re.compile(r"(?:^|\|)\s*([+\-~≈]?\d[\d.,]*\s*(?:%|x|×|ms|s|us|µs)?)\s*(?=\||$)")


def _under_its_header(row: ProseBlock) -> tuple[ProseBlock, int]:
    """A table row read after its header row ("Mean TTFT (ms) | … | 182.4 | 121.7"), and where the row starts.

    A value in a body cell is the value of its column's header: a table of TTFT numbers claims
    what a sentence of them would. The header's characters point at the row's first character.
    """
    joined = f"{row.header} | "
    text = joined + row.text
    offsets = (row.offsets[0],) * len(joined) + row.offsets
    return replace(row, text=text, offsets=offsets), len(joined)


def judge_text(text: str, first_line: int = 1, words: Vocabulary | None = None) -> list[Verdict]:
    """The verdict of every clause of Markdown `text` (first line `first_line`) that names a claim word.

    The rendered prose and the attributes a reader sees (`gates.model.shown_text`) are read.
    """
    words = words or vocabulary()
    verdicts: list[Verdict] = []
    label = None  # a metric named with no result, whose values may follow: under a short label ("TTFT (p50)", "吞吐："),
    short = True  # any item; after a longer block, an item that takes it up ("- before: 410 ms", "It dropped 30%.")
    blocks = prose_blocks(text, first_line) + shown_attributes(text, first_line)
    kernel_rate_rows = rows_of_kernel_rate_tables(blocks)
    lead = LeadIn()  # the prose just before a code block's output or a table
    plan_label = ""  # "Roadmap:", "Next steps:" alone on a line: the list items under it are its items
    two_arms = fences_with_two_arms(blocks)
    base_named_after = lines_of_the_base_named_after(blocks)
    given_elsewhere = None  # the last verdict of a paragraph that excused a number as another's, the base's or unbacked
    quoted_claims: list[int] = []  # claims inside the blockquote just above, which a doubting reply takes back
    for index, block in enumerate(blocks):
        under_lead = block.kind in CODE_KINDS or block.kind == "table row"
        if block.kind == "paragraph" and plan_label and is_list_item(text, block):
            block = replace(block, heading=plan_label)
        else:
            plan_label = block.text if block.kind == "paragraph" and is_plan_label(block.text) else ""
        if not under_lead:
            lead = LeadIn.of(block.text)
        if not_read_alone(block, blocks[index + 1] if index + 1 < len(blocks) else None, lead) \
                and not (block.kind in CODE_KINDS and (change_named_after(blocks, index) or index in two_arms)):
            continue
        if under_lead and index in base_named_after:
            continue  # output or a table that the prose after it calls the base's: "That's main."
        if quoted_claims and block.kind == "paragraph" and not is_quoted(text, block):
            if reply_doubts_the_quote(block.text, [later.text for later in blocks[index + 1:]]):
                for position in quoted_claims:
                    verdicts[position] = replace(verdicts[position], claim=False,
                                                 reason="a quotation the reply under it doubts")
            quoted_claims = []
        if given_elsewhere is not None and block.kind == "paragraph":
            result = number_given_to_the_change(given_elsewhere.reason, block.text)
            excused_words, given_elsewhere = given_elsewhere.words, None
            if result is not None:
                line, col = block.position(0)
                verdicts.append(Verdict(line, col, excused_words, True, result, "", block.text[:200]))
                continue
        judged = list(_Block(block, words, index in kernel_rate_rows, lead.kernel_label and under_lead,
                             lead.names_two_arms and under_lead).verdicts(label, short))
        if block.kind == "paragraph" and is_quoted(text, block):
            quoted_claims.extend(len(verdicts) + i for i, verdict in enumerate(judged) if verdict.claim)
        verdicts.extend(judged)
        if judged and block.kind == "paragraph" and not judged[-1].claim and judged[-1].reason.startswith(GIVEN_ELSEWHERE):
            given_elsewhere = judged[-1]
        if judged:
            answered = judged[-1].reason.startswith("a question")  # "> How much does this help TTFT?" above its answer
            label = judged[-1] if judged[-1].reason == MENTION or answered else None
            short = _is_label(block.text) or answered
        elif block.kind == "heading":
            label = None
    return verdicts


def _is_label(text: str) -> bool:
    """A short block that names what follows: "TTFT (p50)", "Serving throughput:", "首字延迟："."""
    stripped = text.strip()
    return len(stripped.split()) <= 6 and len(stripped) <= 60 and not _SENTENCE_END.search(stripped.rstrip(":：."))


def find_claims_in_text(text: str, first_line: int = 1, extra_terms: Iterable[str] = (),
                        kernel_terms: Iterable[str] = ()):
    """(line, col, words) of every end-to-end claim in Markdown text whose first line is `first_line`."""
    for verdict in judge_text(text, first_line, vocabulary(extra_terms, kernel_terms)):
        if verdict.claim:
            yield verdict.line, verdict.col, verdict.words


def record_verdicts(record, words: Vocabulary | None = None) -> list[Verdict]:
    """The verdicts of the record's title and body.

    The title is read as one line of prose at its front-matter line: it heads the
    generated PR description and the site's page, so a claim there is a claim.
    """
    verdicts = []
    title = record.get("title")
    if isinstance(title, str) and title.strip():
        line = record.line_of("title")
        verdicts.extend(Verdict(line, v.col, v.words, v.claim, v.result, v.reason, v.clause)
                        for v in judge_text(title.replace("\n", " "), 1, words))
    verdicts.extend(judge_text(record.body, record.body_start_line, words))
    return verdicts


def find_claims(record, extra_terms: Iterable[str] = (), kernel_terms: Iterable[str] = ()):
    """(line, col, words) of every end-to-end claim in the record's title and body."""
    for verdict in record_verdicts(record, vocabulary(extra_terms, kernel_terms)):
        if verdict.claim:
            yield verdict.line, verdict.col, verdict.words
