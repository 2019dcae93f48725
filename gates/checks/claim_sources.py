"""Numbers whose source is not this change: another system's published value, another change's history.

A sentence that gives such a number states no result of the change, as long as it names no arm of
the change and, for a value of another system, states no relative result:

| where the number comes from | English | Chinese |
|---|---|---|
| another system or paper gives it | "TensorRT-LLM lists around 11k tok/s for Llama-3-8B …; we're at 8.5k on main" | "Megatron-LM 论文里 175B 的 MFU 是 52%，我们这边 main 上还差得远" |
| another, numbered change's history | "Before #6021, Llama-3-70B ran at 1.1k tok/s; that PR regressed it to 0.9k" | "#5120 合入之前 TTFT 是 1.9 s" |

What the sentence's "we" says must be of the base arm (main): "SGLang lists 11k tok/s and we get 12k"
stays a claim, and so does a sentence that names the change ("with this PR", "now", "after").
"""

from __future__ import annotations

import re

from gates.checks.claim_mood import Mood, names_the_change_arm, states_relative_result

_I = re.IGNORECASE
# "TensorRT-LLM lists", "The vLLM README reports", "FlashInfer's docs quote", "Megatron-LM 论文里": a named system or its
# document at the start of the clause, giving the value; "This", "The", "Our" and the like name no system
_NAMED_SOURCE = re.compile(
    r"^\W*(?:the\s+)?(?!(?:This|That|These|The|Our|We|It|PR|Main|Master|Baseline|Before|After|With|On|In|For)\b)"
    r"(?P<name>[A-Z][\w\-.]*[\w])(?:['’]s)?"
    r"(?:\s+(?i:paper|readme|blog(?:\s+post)?|docs?|release\s+notes?|(?:perf(?:ormance)?\s+)?(?:table|page|overview)))?"
    r"\s+(?i:lists|list|publishes|published|quotes|quoted|advertises|advertised|reports|reported|claims|claimed|shows)\b"
    r"|^\W*(?P<zh>[A-Za-z][\w\-.]*)\s*(?:的)?\s*(?:论文|官方(?:数据|博客|文档)?|博客|文档|README)\s*(?:里|中|上|称|给出)", )
_WE = re.compile(r"\b(?:we|our|us|ours|i)\b|['’]re\b|我们|咱们", _I)
_BASE = re.compile(r"\b(?:main|master|baseline)\b|基线|主干", _I)
# "Before #6021, …", "#5120 合入之前": the time before another, numbered change; "that PR regressed it to 0.9k"
_OTHER_CHANGE = re.compile(r"^\W*(?:before|until|prior\s+to|since)\s+(?:pr\s*)?#\d+\b"
                           r"|^\W*(?:pr\s*)?#\d+\s*(?:合入|合并|上线)?\s*(?:之前|以前|前|之后|以后|后)", _I)
_NOW = re.compile(r"\bnow\b|\btoday\b|现在|目前|如今", _I)
# "MFU 是 52%", "utilization is 71%": a level in percent, not a change by a percent ("30% higher", "提升 30%")
_LEVEL_PERCENT = re.compile(r"(?:是|为|\bis\b|\bwas\b|=|:)\s*[~≈约]?\s*\d+(?:\.\d+)?\s*%"
                            r"(?!\s*(?:higher|lower|faster|slower|more|less|better|worse|up|down|over|above|below)\b)"
                            r"(?!\s*(?:更|高|低|快|慢|提升|提高|增加|降低|减少))", _I)


def another_sources_value(clause: str, sentence: str) -> Mood | None:
    """The clause gives a value that another system or paper publishes, or a value from another change's history,
    and its sentence names no arm of this change: a number from elsewhere."""
    if names_the_change_arm(sentence) or _NOW.search(sentence):
        return None
    other = _OTHER_CHANGE.search(sentence)
    if other:
        return Mood("a number from elsewhere", other.group(0))
    source = _NAMED_SOURCE.search(clause)
    if source is None or states_relative_result(_LEVEL_PERCENT.sub(" ", clause)):
        return None
    if _WE.search(sentence) and not _BASE.search(sentence):
        return None  # "SGLang lists 11k tok/s and we get 12k": our own number beside it
    return Mood("a number from elsewhere", source.group(0))
