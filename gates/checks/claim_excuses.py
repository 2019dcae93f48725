"""The negations and scope markers that excuse a claim term (rules E1-E4 of `gates.checks.claim_detection`).

A term is excused only when a negation or a scope marker governs the term itself:

E1. A negated claiming verb or claim noun right before it: "we do not claim any TTFT gain",
    "must not be written as TTFT/TPOT", "makes no end-to-end claim", "未测量首字延迟",
    "不声称任何端到端收益". Between the verb and the term only function words
    ("any", "as", "the", "of" ...), other terms joined by and/or/slash, and measurement
    nouns may stand.
E2. A negated term phrase: "No E2E measurement was made", "没有端到端数据": a negation, then
    the term, then a claim noun ("claim", "measurement", "numbers" ...) or a passive claim
    verb ("is claimed").
E3. A negated or out-of-scope predicate right after it: "TTFT and TPOT are out of scope",
    "TTFT is not measured", "TTFT is not in here", "End-to-end measurement: not run", "端到端测量：未运行",
    "TTFT 不在本 PR 范围内". Between the term and the predicate only other terms and
    measurement words may stand.
E4. A future-work or out-of-scope lead-in at the start of the clause ("Follow-up:",
    "TODO:", "Future work:", "Out of scope:", "后续：") followed by a planning verb
    ("measure", "run", "测量" ...) before the term, or by nothing but the term and
    measurement words. Under a heading that is such a lead-in ("## Follow-ups",
    "## Out of scope", "## 后续"), every clause reads as if it began with it.

E3 and E4 excuse nothing when a quantity (2x, 30%, 12 ms, 两倍, halves ...) follows the term in
its sentence: "TTFT: not measured directly, but estimated 2x better", "Future work: TTFT gains of 2x"
are claims. A negation elsewhere in the clause excuses nothing: "TTFT improves 2x with no code
changes" is a claim.
"""

from __future__ import annotations

import re

KERNEL_WORD = _KERNEL_WORD = (r"(?:DRAM|HBM|L1|L2|SM|smem|shared|memory|kernel|内核|算子|内存|显存|带宽|缓存|访存|存储|launch|启动"
                r"|同步|sync)")
_KERNEL_METRIC = re.compile(_KERNEL_WORD + r"[\sA-Za-z0-9_/、和与及的]{0,8}$", re.IGNORECASE)
_KERNEL_METRIC_TERMS = ("吞吐", "时延")
_BOUND = re.compile(r"^\s*(?:受限|bound)")

TERM_MARK = _T = "\x01"  # a claim term, in the masked clause the excuse rules read

_CLAIM_VERB = (
    r"(?:claim|make|made|measure|report|state|assert|quote|present|promise|impl(?:y|ie)|mean|meant|write|written"
    r"|wrote|read|run|ran|test|evaluat|call|benchmark|translat|carr(?:y|ie)|reflect|represent|indicat|show|demonstrat"
    r"|guarantee|include|cover|address|target|interpret|take|taken|mistak|understood|understand|extrapolat"
    r"|estimat|predict|project|equat|conflat|advertis|mention)[a-z]*"
)
_CLAIM_NOUN = (
    r"(?:claims?|measurements?|numbers?|figures?|results?|data|evidence|benchmarks?|benchmarking|tests?|testing"
    r"|runs?|experiments?|statements?|comparisons?|artifacts?|a/b|evaluations?|promises?|guarantees?"
    r"|assertions?|conclusions?|estimates?|projections?|statistics|stats|metrics?)"
)
_QUALIFIER = (
    r"(?:latency|latencies|throughput|speed|speed-?ups?|gains?|improvements?|performance|serving|inference"
    r"|level|wins?|benefits?)"
)
_FUNCTION_WORD = (
    r"(?:a|an|the|any|such|as|to|of|for|about|in|on|into|either|neither|its|their|our|this|that|these|those"
    r"|here|be|been|being|is|are|was|were|yet|other|similar|kind|kinds|sort|type|types|wall-clock|model|pr|record"
    r"|directly|necessarily|automatically|simply|linearly|proportionally)"
)
# A filler is a run of items that may stand between a negation (or a lead-in) and the term it governs:
# function words, measurement words, another term followed by a conjunction, brackets and slashes.
_ITEM = (rf"(?:{_T}(?:\s*(?:,|&|\band\b|\bor\b|\bnor\b))?|\b(?:{_FUNCTION_WORD}|{_QUALIFIER}|{_CLAIM_NOUN})\b"
         r"|[/&()\"'“”‘’])")
_FILL = rf"(?:\s*{_ITEM})*\s*"
_NEG = (r"(?:\bnot|\bno|\bnever|\bnor|\bwithout|\bcannot|n['’]t|\bavoid(?:s|ed|ing)?|\brefrain(?:s|ed|ing)?\s+from"
        r"|\bforbid(?:s|den)?|\bprohibit(?:s|ed)?|\bhold(?:s|ing)?\s+off(?:\s+on)?)")
_AUX = r"(?:to|be|been|being|have|has|had|yet|ever|currently|directly|explicitly|here|any|make|makes|made|a|an)"
_BE = r"(?:is|are|was|were|remains?|stays?|has\s+been|have\s+been|will\s+be|gets?|got)"
_NOT = rf"(?:\s+(?:{_BE}\s+)?(?:not|never)|\s*(?:is|are|was|were|has|have|do|does|did)n['’]t)"

_ZH_NEG = r"(?:不得|不可|不能|不应|不要|并未|并不|尚未|没有|无需|并非|禁止|避免|不|未|没|无|勿)"
_ZH_VERB = (r"(?:声称|宣称|声明|主张|承诺|暗示|报告|测量|测试|测|评估|运行|跑|写成|写作|记作|读作|当作|视为|看作|解读为"
            r"|理解为|等同于|代表|表示|涉及|包含|给出|提供|引用|换算成|换算为|意味着|对应)")
_ZH_NOUN = r"(?:声明|声称|测量|数据|数字|结论|测试|评估|结果)"
_ZH_ITEM = (rf"(?:{_T}|任何|的|和|与|及|或|、|/|这些|该|此|相关|其|各项|关于|有关|对|做|作|进行|收益|提升|改善|加速|性能"
            rf"|指标|效果|层面|级|方面|{_ZH_NOUN})")
_ZH_FILL = rf"(?:\s*{_ZH_ITEM})*\s*"
_AFTER_TERM = r"(?:\s*(?:,|&|/|\band\b|\bor\b|\bnor\b))?"  # "TTFT and ...", read from after the term
_ANY_FILL = rf"(?:\s*(?:{_ITEM}|{_ZH_ITEM}))*\s*"

_E1_VERB_BEFORE = re.compile(rf"(?:{_NEG}(?:\s+{_AUX})*\s+(?:{_CLAIM_VERB}|{_CLAIM_NOUN})\b{_FILL}"
                             rf"|{_ZH_NEG}\s*(?:被|再|会|做|作|对)?\s*{_ZH_VERB}{_ZH_FILL})$", re.IGNORECASE)
_E2_NEG_BEFORE = re.compile(rf"(?:{_NEG}\b{_FILL}|{_ZH_NEG}{_ZH_FILL})$", re.IGNORECASE)
_E2_NOUN_AFTER = re.compile(rf"^{_AFTER_TERM}(?:{_FILL}(?:\b{_CLAIM_NOUN}\b|\b{_BE}\s+(?:\w+ly\s+)?{_CLAIM_VERB}\b)"
                            rf"|{_ZH_FILL}(?:{_ZH_NOUN}|{_ZH_VERB}))", re.IGNORECASE)
# "TTFT is not in here", "... not in this profile": absent from what the text points at
_ABSENT_HERE = r"(?:in\s+)?here\b|in\s+(?:this|the)\s+(?:file|record|artifact|profile|pr|report|data)\b"
_SCOPE = r"(?:out\s+of|outside(?:\s+of)?|beyond)\s+(?:the\s+)?(?:[\w'’]+\s+){0,2}?scope\b"
_LATER = r"(?:future\s+work|follow[\s\-]?ups?|later\s+work|a\s+later\s+(?:pr|change))"
# "The 3.4% figure is kernel time, not TTFT": the term is what the clause's numbers are not ("not just TTFT" adds it)
_CONTRAST_BEFORE = re.compile(r"(?:[,;(—–]|\bbut)\s*(?:and\s+|so\s+)?(?:not|nor)\s+(?:the\s+|in\s+|on\s+|of\s+)?$",
                              re.IGNORECASE)
_CONTRAST_AFTER = re.compile(r"^\s*(?:$|[.;:)]|,?\s*(?:which|as)\b)", re.IGNORECASE)
_E3_PREDICATE_AFTER = re.compile(
    rf"^{_AFTER_TERM}(?:{_FILL}(?:"
    rf"{_NOT}\s+(?:yet\s+|currently\s+|directly\s+)?(?:been\s+|be\s+)?(?:{_CLAIM_VERB}\b|part\s+of|in\s+scope|"
    rf"a\s+(?:goal|target|claim)|the\s+goal|applicable|{_ABSENT_HERE})"
    rf"|\s*(?:\b{_BE}\s+)?{_SCOPE}"
    rf"|\s*(?:\b{_BE}\s+)?(?:left\s+)?(?:(?:for|to|as|in)\s+)?(?:a\s+)?(?:separate\s+)?{_LATER}"
    rf"|\s*[:|]\s*(?:(?:not|never)\s+(?:yet\s+)?(?:{_CLAIM_VERB}\b|in\s+scope|applicable)|n/a|none|untested|unmeasured"
    rf"|tbd|out\s+of\s+scope|future\s+work|[-—](?=\s*(?:\||$)))"
    rf"|\s*\b{_BE}\s+(?:untested|unmeasured|unclaimed|unreported|n/a)"
    rf")"
    rf"|{_ZH_FILL}[:|]?\s*(?:尚|暂|均|都|也|并|目前)?\s*(?:(?:未|没有|不)\s*(?:被|做|作|进行)?\s*{_ZH_VERB}"
    rf"|(?:不在|超出|不属于|超过)\s*(?:本|此|该|这个)?\s*(?:PR|记录|改动|变更|工作)?\s*(?:的)?\s*(?:范围|范畴)"
    rf"|(?:属于|留作|留待|作为|是)\s*(?:后续|未来)))",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(
    r"^\s*(?:\[ ?\]\s*|(?:follow[\s\-]?ups?(?:\s+work)?|future\s+work|todo|to\s*do|next\s+steps?|out\s+of\s+scope"
    r"|non[\s\-]?goals?|not\s+in\s+scope|not\s+measured|后续(?:工作)?|未来工作|待办|下一步|范围外|不在范围内|非目标)\s*[:\-—]\s*)",
    re.IGNORECASE,
)
_LEAD_IN_HEADING = re.compile(
    r"^\s*(?:follow[\s\-]?ups?(?:\s+work)?|future\s+work|todo|to\s*do|next\s+steps?|out\s+of\s+scope|non[\s\-]?goals?"
    r"|后续(?:工作)?|未来工作|待办|下一步|范围外|非目标)\s*:?\s*$",
    re.IGNORECASE,
)
_PLAN_VERB = (r"(?:\b(?:measure|run|benchmark|evaluate|quantify|test|collect|add|profile|compare|check|report"
              r"|investigate|study|track|record|validate|verify|confirm|establish|capture|assess)\b"
              r"|测量|测试|评估|运行|跑|对比|收集|补充|验证|补测|统计|记录|确认)")
_E4_PLANNED = re.compile(rf"^[^\d{_T}]{{0,40}}?{_PLAN_VERB}{_ANY_FILL}$", re.IGNORECASE)
_E4_LISTED = re.compile(rf"^{_ANY_FILL}$", re.IGNORECASE)
_E4_TAIL = re.compile(rf"^\s*(?:$|[.;:,()/]|{_T}|\b(?:in|on|for|with|at|under|across|over|using|via|from|by|of|and|or"
                      rf"|vs\.?|versus)\b|\b{_QUALIFIER}\b|\b{_CLAIM_NOUN}\b|[在中的和与及])", re.IGNORECASE)

_QUANTITY = re.compile(r"\d[\d.,]*\s*(?:x\b|×|%|倍|ms\b|µs\b|us\b|s\b|秒|毫秒|tok)|[一两二三四五六七八九十半]\s*倍"
                       r"|\bhalv|\bdoubl|一半|翻倍|减半", re.IGNORECASE)
_WINDOW = 160


def is_kernel_metric(term: str, before: str, after: str) -> bool:
    """吞吐 or 时延 of a memory or kernel ("DRAM 吞吐", "kernel 时延"), or "…受限" (bound): a kernel metric."""
    return "".join(term.split()) in _KERNEL_METRIC_TERMS and bool(_KERNEL_METRIC.search(before) or _BOUND.match(after))


_GENERIC_MEASURE = re.compile(r"吞\s*吐|时\s*延|(?:p\s*\d+(?:\.\d+)?|tail)[\s\-]+(?:[a-z]+[\s\-]+)?latenc(?:y|ies)", re.IGNORECASE)


def is_generic_measure(term: str) -> bool:
    """吞吐, 时延 and a percentile or tail latency measure anything (a kernel's too); their scope decides their level."""
    return _GENERIC_MEASURE.fullmatch(term.strip()) is not None


def quantity_follows(text: str, start: int, end: int) -> bool:
    """A quantity stands in text[start:end] (after a term, up to its sentence's end)."""
    return _QUANTITY.search(text, start, min(end, start + _WINDOW)) is not None


def is_excused(masked: str, index: int, quantity_follows: bool = False, under_lead_in: bool = False) -> bool:
    """Whether the term at `masked[index]` (masked clause: every term is one `_T`) is governed by an excuse.

    `quantity_follows`: a quantity stands after the term in its sentence, which rules out E3 and E4.
    `under_lead_in`: the clause is under a heading that is itself a lead-in ("## Follow-ups").
    """
    before = masked[max(0, index - _WINDOW):index]
    after = masked[index + 1:index + 1 + _WINDOW]
    if _E1_VERB_BEFORE.search(before):
        return True
    if _CONTRAST_BEFORE.search(before) and _CONTRAST_AFTER.match(after):
        return True
    if _E2_NEG_BEFORE.search(before) and _E2_NOUN_AFTER.match(after):
        return True
    if quantity_follows:
        return False
    if _E3_PREDICATE_AFTER.match(after):
        return True
    lead_in = _LEAD_IN.match(masked)
    lead_in_end = lead_in.end() if lead_in else 0 if under_lead_in else None
    if lead_in_end is not None and lead_in_end <= index:
        between = masked[lead_in_end:index]
        if _E4_PLANNED.match(between) or (_E4_LISTED.match(between) and _E4_TAIL.match(after)):
            return True
    return False


def is_lead_in_heading(heading: str) -> bool:
    """A heading that is itself a lead-in ("## Follow-ups", "## Out of scope", "## 后续")."""
    return bool(_LEAD_IN_HEADING.match(heading))
