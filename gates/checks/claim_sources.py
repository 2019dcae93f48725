"""Numbers whose source is not this change: the base arm alone, a value attributed elsewhere and disowned, another
system's published value, another change's history.

- `baseline_alone`: "Baseline on main (before any of this work): 1,540 output tok/s", "main currently serves 14.2
  req/s", or a golden value updated ("the reference throughput in thresholds.json is lowered from 5,100 to 4,850");
  not when the sentence or the next names the change's arm.
- `disowned`: a clause that attributes its numbers elsewhere, in a sentence that disowns them ("The 20% figure is
  from the upstream README; we did not reproduce it").
- `another_sources_value`: a value another system or paper gives, or one of another numbered change's history, in a
  sentence that names no arm of this change and, for a value of another system, states no relative result:

| where the number comes from | English | Chinese |
|---|---|---|
| another system or paper gives it | "TensorRT-LLM lists around 11k tok/s for Llama-3-8B …; we're at 8.5k on main" | "Megatron-LM 论文里 175B 的 MFU 是 52%，我们这边 main 上还差得远" |
| another, numbered change's history | "Before #6021, Llama-3-70B ran at 1.1k tok/s; that PR regressed it to 0.9k" | "#5120 合入之前 TTFT 是 1.9 s" |

What the sentence's "we" says must be of the base arm (main): "SGLang lists 11k tok/s and we get 12k"
stays a claim, and so does a sentence that names the change ("with this PR", "now", "after").
"""

from __future__ import annotations

import re

from gates.checks.claim_mood import (
    ELSEWHERE, MODAL, OUR_OWN, THIS_CHANGE, Mood, first_sentence, next_sentence_values, sentence_values,
    states_a_change, states_relative_result,
)

_I = re.IGNORECASE

# What disowns a number its clause attributes elsewhere: "we did not reproduce it", "unrelated to this PR", 没复现
_DISOWNED = re.compile(
    r"\b(?:don['’]t|do\s+not)\s+have\s+(?:any\s+)?(?:comparable\s+)?(?:numbers|data|results)\b|\bno\s+comparable\s+numbers\b"
    # "any measurement will follow", "numbers will come later"
    r"|\b(?:any\s+)?(?:measurements?|numbers|benchmarks?)\s+(?:will\s+)?(?:follow|come\s+later)\b"
    # "please don't compare them with our default benchmark"
    r"|\b(?:please\s+)?(?:don['’]t|do\s+not)\s+compare\s+(?:them|those|these|it|that)\b"
    r"|\bnot\s+from\s+our\s+(?:implementation|runs?|code|setup|measurements?|benchmarks?)\b"
    r"|\bthis\s+(?:pr|change)\s+is\s+(?:only|just|purely)\s+a\s+refactor\b|\bno\s+functional\s+changes?\b"
    r"|\b(?:did\s+not|didn['’]t|have\s+not|haven['’]t|could\s+not|couldn['’]t|do\s+not|don['’]t|not)\s+(?:yet\s+)?"
    r"(?:(?:tried|try|trying)\s+to\s+)?(?:reproduce|verify|check|benchmark"
    r"|confirm|measure|validate)\w*|\b(?:isn['’]t|is\s+not|aren['’]t|are\s+not|not)\s+ours\b|\bdiffers?\s+from\s+ours"
    r"|\bfixed\s+in\s+v?\d+\.\d+|\bmentioning\s+it\s+because\b|\bthe\s+(?:figure|number)\s+[\w\s]{1,20}?keeps?\s+quoting\b"
    r"|\bnot\s+(?:\w+\s+){0,3}?(?:we\s+)?(?:reproduced|verified|confirmed|measured)\b|(?:\bnot|n['’]t)\s+comparable\b"
    r"|\bnot\s+from\s+us\b|\bnot\s+including\s+it\b|\bmeasured\s+(?:on|with)\s+a\s+different\b|\bmakes\s+no\s+claim\b"
    r"|\b(?:should\s+not|shouldn['’]t|must\s+not)\s+be\s+read\s+as\s+a\s+result\s+of\s+this\s+(?:pr|change)\b"
    r"|\bunrelated\s+to\s+this\s+(?:pr|change|patch|branch)\b|\bnot\s+(?:caused\s+by|related\s+to)\s+this\s+(?:pr|change)\b"
    r"|\bnothing\s+in\s+this\s+(?:pr|change|patch|(?:patch\s+)?release)\s+(?:changes|affects|touches)\b"
    r"|\bwe\s*(?:['’]re|\s+are)\s+not\s+there\s+yet\b|\bnot\s+compar(?:ing|ed)\s+(?:against|with|to)\s+(?:that|it|them)\b"
    r"|\bthis\s+(?:pr|change)\s+is\s+only\s+about\b|\b(?:have|got)\s+no\s+numbers\b|\bno\s+numbers\s+either\s+way\b"
    r"|\bthat['’]?s\s+future\s+work\b|\bthis\s+(?:pr|change)\s+only\s+(?:fixes|updates|renames|moves|adds|removes|touches)\b"
    r"|\b(?:have\s+not|haven['’]t|did\s+not|didn['’]t)\s+compared?\b"
    r"|\b(?:wouldn['’]t|would\s+not|don['’]t|do\s+not)\s+use\s+(?:it|that|them)\s+as\s+a\s+baseline(?:\s+for\s+this\s+(?:pr|change))?\b"
    r"|\bonly\s+contains\s+bug\s*fixes\b|\bbug\s*fixes\s+only\b|\bnot\s+(?:to|from|of|for)\s+this\s+(?:pr|change)\b"
    r"|\bno\s+(?:perf(?:ormance)?|speed)\s+(?:change|impact|effect)\s+(?:is\s+)?(?:intended|expected)\b"
    r"|\bshould\s+not\s+change\s+(?:the\s+)?(?:perf(?:ormance)?|speed|throughput|latency)\b"
    r"|\bis\s+about\s+[\w\s,]{1,30}?\bnot\s+(?:about\s+)?(?:speed|performance|perf)\b"
    r"|与本\s*PR\s*无关|请勿引用|不要引用|本\s*PR\s*(?:并)?不涉及(?:任何)?\s*(?:性能)?\s*(?:改动|变化|修改|优化)|(?:只是|仅)作为?参考"
    r"|没复现|没能复现|不是(?:这个|本)\s*(?:分支|PR)\s*测(?:出来)?的|不是我们测的|还没测|没测过|尚未测|和旧版本比的"
    r"|\bthan\s+(?:us|ours)\b|\b(?:this\s+(?:pr|change|patch)\s+)?(?:doesn['’]t|does\s+not|isn['’]t|is\s+not)\s+(?:try(?:ing)?\s+to\s+close|touch)"
    r"\s+(?:that|this|the)\s+(?:gap|path|code)\b"
    r"|\bnot\s+on\s+ours\b|\bon\s+their\s+setup\b|\bnot\s+from\s+anything\s+(?:i|we)\s+(?:measured|ran)\b|\bnowhere\s+near\s+(?:that|it|those)\b"
    r"|\bfor\s+their\s+(?:setup|config(?:uration)?|methodology|settings|hardware)\b"
    # "I'd like to compare against that once my job … finishes": a number to compare with later, not ours
    r"|\b(?:compare|measure|check)\s+(?:us\s+|ours\s+)?against\s+(?:that|it|this|those)\s+once\b"
    # "that's the bar people will compare us against", "does anyone know which flags were used for that number?"
    r"|\bthe\s+(?:bar|target|yardstick|reference\s+point)\s+(?:people|users|everyone|others|they)\s+(?:will\s+|would\s+)?"
    r"(?:compare|measure|judge)\b|\b(?:anyone|somebody|someone)\s+know\b[^.?]{0,60}\b(?:that|this|those)\s+(?:number|figure|result)s?\b"
    r"|没有复现|未复现|未验证|没有验证|未测", _I)
# "…, and with this change we now match it", "this PR gets it for us", "porting it here gave us the same 2x",
# "我们接入后也达到了": the sentence gives the attributed number to this change after all
_OWN_REACH = re.compile(r"\b(?:this\s+(?:pr|change|patch|fix|branch)|we|i|our\s+[\w\-]+)\b[^.;]{0,40}?\b(?:reach|match|get|gets|got"
                        r"|achiev|hit|see|saw|deliver|bring|brings|brought|made|makes|gave|gives|clears?|cleared|beats?"
                        r"|exceed|surpass|reproduc|(?:is|are|were|['’]re)\s+(?:now\s+)?at\b)\w*"
                        r"|\b(?:this\s+(?:pr|change|patch|fix|branch)|we|i|our\s+[\w\-]+)\b[^.;]{0,40}?\b(?:does|do|did)\b(?![n'’])"
                        r"|\bours\s+(?:is|was|are|were)\b|\bthis\s+(?:pr|branch)\s*:\s*[~≈]?\d|\bbefore\s+this\s+(?:pr|change)\b"
                        r"|\b(?:it|that|this\s+number)\s+(?:comes?|came)\s+from\s+(?:this|our)\b"
                        r"|\bgave\s+us\b|\bgives\s+us\b|我们[^。；]{0,12}?(?:达到|做到|也有|实现)", _I)
_RELEASE_AT_START = re.compile(r"\W*(?:in|with|on|for)\s+v?\d+\.\d+(?:\.\d+)?\b", _I)
_AGREES = re.compile(r"\b(?:agree|agrees|agreed|consistent)\b|\bthat\s+match(?:es|ed)\b|一致|吻合", _I)


# "Baseline on main (before any of this work): 1,540 output tok/s", "当前 main … 约为 3,200 tok/s，这是 … 基线": the base arm
# alone; "the reference throughput in thresholds.json is lowered from 5,100 to 4,850": a golden value updated
# "（未合入本 PR）", "(patch not applied yet)", "without this PR": the change named only to say it is not in
_NOT_APPLIED = re.compile(r"(?:本\s*)?PR\s*(?:分支)?\s*的?\s*数据[^。；]{0,24}?(?:再补|稍后|之后补|后续补)|未(?:合入|应用|打)\s*(?:本\s*PR|任何(?:修改|改动|补丁))|\b(?:patch|pr|change)\s+not\s+(?:yet\s+)?applied\b"
                          r"|\bwithout\s+this\s+(?:pr|patch|change)\b|\bno\s+(?:changes|patches)\s+applied\b|\bbefore\s+this\s+(?:pr|patch|change)\s+is\s+applied\b"
                          r"|\b(?:not|un)\s*(?:changed|affected|touched)\s+by\s+this\s+(?:pr|patch|change)\b"
                          # the change named only as not measured yet: "我们这个 PR 暂时还没有做对比测试", "nothing from this PR applied"
                          r"|(?:本|这个)\s*PR\s*(?:暂时|目前)?\s*还?没(?:有)?\s*(?:做|跑)?\s*(?:对比|性能)?\s*(?:测试|测)"
                          r"|\bthis\s+(?:pr|change|patch)\s+(?:has\s+not|hasn['’]t)\s+been\s+(?:benchmarked|measured|compared)\b"
                          r"|\bnothing\s+from\s+this\s+(?:pr|patch|change)\s+(?:is\s+)?(?:applied|yet)\b", _I)
_BASELINE_LEAD = re.compile(r"^\W*(?:we|i)\s+(?:get|see|measure|have)\s+[~≈]?\d[\d.,]*\s*[kKM]?\s*\S*\s+on\s+(?:current\s+)?main\b"
                            r"|^\W*(?:(?:for\s+(?:context|reference|comparison)|fyi|as\s+a\s+reference|note\s*:\s*)\s*,?\s*)?"
                            r"(?:baseline(?:\s+on\s+main)?|on\s+(?:current\s+)?main(?:\s+today)?|main\s+today|current\s+main"
                            r"|main(?:\s+branch)?\s+(?:currently|still|as\s+of\s+today|baseline)|the\s+base\s+branch\s+currently)\b"
                            r"|(?:当前|目前|现在的?)\s*main|^\W*基线\s*[（(]?\s*(?:main|主干|master)|^\W*基线(?:数据|数字)\s*[（(:：]"
                            r"|主干(?:上)?的?基线|^\W*(?:main|master|主干)\s*(?:分支)?\s*(?:上)?\s*的?\s*基线", _I)
_BASELINE_NAMED = re.compile(r"这是[^。；]{0,16}基线|(?:\b(?:is|as)|['’]s)\s+(?:the|our)\s+baseline\b"
                             r"|\bthat['’]?s\s+the\s+(?:number|figure|bar)\s+(?:we|to)\b|\bbase[\s\-]branch\s+(?:run|numbers?)\s+only\b", _I)
_CHANGE_ARM_IN = re.compile(r"\bthis\s+(?:pr|change|branch|patch)\b|\bwith\s+(?:the\s+)?(?:pr|patch|change|fix)\b|\bpatched\b"
                            r"|\bafter\b|本\s*PR|改动后|合入后|\bthe\s+branch\b|\bwith\s+it\b|本分支|这个\s*(?:分支|PR)"
                            # "that's the baseline, and the gap is 31%", "这个分支高出 31%": a comparison with the base
                            # (not where the gap is, a question: "we can compare and see where the gap is", 看看差距在哪里)
                            r"|(?<!where\sthe\s)\b(?:gap|difference|above\s+it|below\s+it|ahead\s+of\s+it)\b"
                            r"|差距(?!\s*(?:在哪|从哪|来自哪|是什么|有多大))|高出|低于它", _I)
_REFERENCE_UPDATE = re.compile(r"\b(?:reference|golden|expected|threshold)\s+(?:values?|throughput|latency|numbers?|thresholds?)?"
                               r"(?:[^.;]|\.(?=\S)){0,80}?\b(?:lowered|raised|updated|bumped|adjusted|relaxed|tightened)\b", _I)


# "Baseline on main: 1,540 output tok/s. With these commits: 1,940.", "… On this branch, 41.", "拆分 KV 打开：18 ms": the next
# sentence gives another arm its number
_OTHER_ARM_NEXT = re.compile(r"^\W*(?:(?:with|on|after|in)\s+(?:these|the|this)\s+(?:commits|changes?|branch|pr|patch)|the\s+split\s+route"
                            r"|split[\w\-]*\s+(?:lands|gives|does|reaches|is|sits|gets)|(?:after\s+the\s+)?"
                            r"split[\w\-]*\s+(?:on|enabled|build|switch)|(?:the\s+)?(?:new|patched|candidate)\s+\w+|cand(?:idate)?\s*="
                            r"|本分支|本\s*PR|这个分支|(?:打开|开启)[^，。；:：]{0,16}|[^，。；:：]{0,16}(?:打开|开启)|改动后|合入后)[^.;。；]{0,40}?\d", _I)


_NOW_REACHES = re.compile(r"\bnow\s+(?:clears|reaches|hits|does|gets|meets|beats)\b", _I)


# The change's arm by any of its names: "with our patch", "the new kernel", "PR head", "split-KV", "once this lands", 本次修改
_ARM_WORD = re.compile(r"\bwith\s+(?:our|my|the\s+(?:new|patch|fix|change)|these|this|it)\b|\bthis\s+one\b"
                       r"|\bthe\s+present\s+(?:change|pr|patch)\b"
                       r"|\b(?:our|my)\s+(?:version|build|branch|patch|fix|kernel|change|code|implementation|port)\b"
                       r"|\bafter\s+(?:this|the\s+(?:patch|fix|change)|applying|enabling)\b|\bonce\b"
                       r"|\b(?:new|fused|patched|rebuilt|rebased|ported|patch(?:es)?|fix(?:es)?|head|pr|commits?"
                       r"|build|revision|v\d+(?![.\d])|ours|mine|enabled?|path|route)\b|(?<!main\s)(?<!master\s)\bbranch\b|\bsplit[\w\-]*"
                       r"|本次|补丁|修改|新的?\s*(?:kernel|内核|实现|版本|算子|路径|调度)|之后|以后|后为|后是|改动"
                       r"|(?<!main\s)(?<!main)(?<!master\s)(?<!master)(?<!主干)分支|打开|开启|修复", _I)
_SEGMENT = re.compile(r"[^;；]+")
# Where our side may speak in a sentence: between semicolons, and in Chinese between commas too (a comma before a
# Chinese clause often joins two sentences: "SGLang 的博客给出 6000 tok/s，我们可以对比看看差距在哪里")
_SPEAKER_SEGMENT = re.compile(r"(?:[^;；,，]|[,，](?!\s*[\u3400-\u9fff]))+")
_PART = re.compile(r"[;；,，]")  # the parts of a sentence, between its commas and semicolons
# "…; we're at 410 ms on main and at 262 ms with chunked prefill": a second value brought in for another arm
_SECOND_ARM = re.compile(r"\band\s+(?:at\s+|is\s+|was\s+)?[~≈]?\d[\d.,]*\s*[kKM%x]?\s*\S*\s+(?:with|using|via|under)\b", _I)


# "We match that now", "Same here", "We're back to where we were", "本 PR 也一样": the number before, taken for ours
_ADOPTS = re.compile(r"\b(?:same|reproduc\w*|match(?:es|ed)?|beat\w*|there\s+(?:now|plus)|back\s+to|restor\w*|identical"
                     r"|likewise|keeps?\s+(?:it|that|this)|up\s+(?:to|from)|within\s+a\s+percent"
                     r"|(?:brings?|brought|gets?|got|puts?)\s+(?:it|that|this|them)\s+back)\b"
                     r"|也一样|一样|同样|这么多|回到|持平", _I)
# Our side: "we", "ours", "here", "now", "this revision", "the final code", 本 PR, 我们, 这次
_OUR_SIDE = re.compile(r"\b(?:we|our|ours|us|here|now|this\s+(?:pr|branch|revision|patch|change|one|attempt)"
                       r"|the\s+final\s+code)\b|we['’]re\b|本\s*PR|我们|这次|现在|本分支", _I)


def gives_our_side(text: str) -> bool:
    """The text gives the change's side a result of its own: it names our side or the change's arm with a value, a
    relative result, or words that take the number before for ours ("We match that now", "Split-KV: about a quarter
    more", "本 PR 也一样")."""
    if not (_OUR_SIDE.search(text) or _ARM_WORD.search(text)):
        return False
    return bool(sentence_values(text) or states_a_change(text) or (_ADOPTS.search(text) and not MODAL.search(text))
                or any(not MODAL.search(reach.group(0)) for reach in _OWN_REACH.finditer(text)))  # "We now clear it."


def names_an_arm(text: str) -> bool:
    """The text names the change's arm by any of its names ("split-KV: 10.9k", "with our patch", 本次修改)."""
    return _ARM_WORD.search(text) is not None


def _values_elsewhere(segments: list[str]) -> bool:
    """A part of the sentence gives a value and names the change's arm by any name ("10.9k with the new kernel",
    "split-KV serves 18.5", "本次修改之后为 18.5")."""
    return any(sentence_values(segment) and (_ARM_WORD.search(segment) or _SECOND_ARM.search(segment))
               for segment in segments)


def _gives_a_result(part: str) -> bool:
    """The part gives a value or states a change ("gets 1,940", "improves it", 提升)."""
    return bool(sentence_values(part) or states_a_change(part))


def _next_sentence_is_ours(following: str) -> bool:
    """The next sentence of the block gives a value, or gives our side a result ("Split-KV: 1,940.", "We reproduce
    it.")."""
    return next_sentence_values(following) or gives_our_side(first_sentence(following))


def baseline_alone(clause: str, sentence: str, following: str = "") -> Mood | None:
    """The base arm's numbers alone, or a golden value updated: no result of the change. `following` is the next
    sentence, which may give another arm its number. No part of the sentence may give a value beside a name of the
    change's arm ("main currently serves 14.2 req/s; split-KV serves 18.5" is a claim), and the next sentence gives
    no value ("Baseline on main: 1,540 output tok/s. Split-KV: 1,940.")."""
    clause, sentence = _NOT_APPLIED.sub(" ", clause), _NOT_APPLIED.sub(" ", sentence)
    # "…; this PR is a first step toward removing the overhead": the change named beside the base, with no result
    named = [segment for segment in _SEGMENT.findall(sentence) if _CHANGE_ARM_IN.search(segment)]
    if _CHANGE_ARM_IN.search(clause) or any(_gives_a_result(segment) or segment in clause for segment in named) \
            or _OTHER_ARM_NEXT.match(following):
        return None
    lead = _BASELINE_LEAD.search(clause) or _BASELINE_NAMED.search(sentence)
    if lead:
        if _values_elsewhere(_SEGMENT.findall(sentence)) or _next_sentence_is_ours(following):
            return None
        return Mood("the base arm alone", lead.group(0))
    update = _REFERENCE_UPDATE.search(clause)
    if update and not THIS_CHANGE.search(sentence) and not _NOW_REACHES.search(sentence):
        return Mood("a reference value updated", update.group(0)[:40])
    return None


def disowned(clause: str, sentence: str) -> Mood | None:
    """A clause that attributes its numbers elsewhere, in a sentence that disowns them: "The 20% figure is from the
    upstream README; we did not reproduce it", "The paper reports 1.8x …, though we didn't check it", "来自上游，我们没有复现".
    A clause that does not name where its number comes from is not excused by a disowning elsewhere in its sentence."""
    lead = sentence[:max(0, sentence.find(clause))]  # "From the 0.4.0 release notes, quoted for context: "…""
    elsewhere = ELSEWHERE.search(clause) or (ELSEWHERE.search(lead) if lead.rstrip().endswith((":", "：")) else None)
    disowning = _DISOWNED.search(sentence)
    own = THIS_CHANGE if _RELEASE_AT_START.match(clause) else OUR_OWN  # "In v0.5.0 we got …": the release's own run
    if elsewhere and disowning and not own.search(_DISOWNED.sub(" ", clause)) and not _AGREES.search(sentence) \
            and not any(not MODAL.search(reach.group(0))
                        for reach in _OWN_REACH.finditer(_DISOWNED.sub(" ", sentence.replace(clause, " ")))):
        return Mood("a number from elsewhere, disowned", f"{elsewhere.group(0)} … {disowning.group(0)}")
    return None


def _names_the_change_arm(text: str) -> bool:
    """The text names this change's arm or compares with the base ("with the patch", "after", 改动后, "the gap")."""
    return _CHANGE_ARM_IN.search(text) is not None or THIS_CHANGE.search(text) is not None


# "TensorRT-LLM lists", "The vLLM README reports", "FlashInfer's docs quote", "Megatron-LM 论文里": a named system or its
# document at the start of the clause, giving the value; "This", "The", "Our" and the like name no system
_DOCUMENT = (r"(?i:paper|readme|blog(?:\s+post)?|docs?|release\s+notes?|(?:perf(?:ormance)?\s+)?(?:table|page|overview)"
             r"|(?:published|official|public)\s+(?:numbers|figures|results|benchmarks?))")
_NAMED_SOURCE = re.compile(
    r"^\W*(?:(?i:fyi|for\s+(?:context|reference)|note)\s*[,:]\s*)?(?:(?i:per|according\s+to|from)\s+)?(?:[Tt]he\s+)?"
    r"(?!(?:This|That|These|The|Our|We|It|PR|Main|Master|Baseline|Before|After|With|On|In|For|Per|From"
    r"|README|Readme|Paper|Docs?|Blog|Table|Page|Overview)\b)"
    r"(?P<name>[A-Z][\w\-.]*[\w]|[a-z]+[A-Z][\w\-.]*[\w])(?:['’]s)?"
    # "TensorRT-LLM lists", "SGLang's blog reports", or a document named as the lead: "Per the X perf overview, …"
    rf"(?:(?:\s+{_DOCUMENT})?\s+(?i:lists|list|publish(?:es|ed)?|quotes?|quoted|advertis(?:es|ed|e)|reports?|reported"
    r"|claims?|claimed|shows|show)\b"
    rf"|\s+{_DOCUMENT}\s*,)"
    # "SGLang 的博客里", "SGLang 在他们的博客里给出"
    r"|^\W*(?P<zh>[A-Za-z][\w\-.]*)\s*(?:在\s*(?:他们|它们|其|自己)?\s*)?(?:的)?\s*(?:论文|官方(?:数据|博客|文档)?|博客|文档|README)"
    r"\s*(?:里|中|上|称|给出)", )
# What another project publishes (a relative result it states is its own): "The TensorRT-LLM docs report ~4x …",
# "LMDeploy's README shows around 1.8x req/s compared to vLLM"; a dashboard or a table may show this change's run
_PUBLICATION = re.compile(r"\b(?:paper|readme|blog|docs|release\s+notes?)\b|论文|博客|文档|README|官方", _I)
# "though I haven't benchmarked it": a "we" that only says it did not measure
_WE_UNMEASURED = re.compile(r"\b(?:we|i)\s+(?:have\s+not|haven['’]t|did\s+not|didn['’]t|do\s+not|don['’]t)\s+(?:yet\s+)?"
                            r"(?:benchmark|measure|test|run|check|compare)\w*(?:\s+(?:it|this|that|them))?", _I)
_WE = re.compile(r"\b(?:we|our|us|ours|i)\b|['’]re\b|我们|咱们", _I)
_BASE = re.compile(r"\b(?:main|master|baseline)\b|基线|主干", _I)
# "Before #6021, …", "#5120 合入之前": the time before another, numbered change; "that PR regressed it to 0.9k"
_OTHER_CHANGE = re.compile(r"^\W*(?:before|until|prior\s+to|since)\s+(?:pr\s*)?#\d+\b"
                           # "A previous attempt in #4519 showed …", "Follow-up to #6634, which improved …", "之前的 #4519"
                           r"|^\W*(?:(?:a|an|the|our)\s+)?(?:previous|earlier|prior|original|first)\s+(?:attempt|pr|change"
                           r"|version|try|patch|implementation)\s+(?:in\s+|at\s+|from\s+|was\s+)?(?:pr\s*)?#\d+\b"
                           r"|^\W*follow-?up\s+(?:to|on)\s+(?:pr\s*)?#\d+\b|^\W*(?:之前|此前|先前)的?\s*(?:PR\s*)?#\d+"
                           # "Related: #8123 measured …", "相关工作：SGLang 的 #2345 …", "Closing since #10231 already landed …"
                           r"|^\W*(?:related(?:\s+work)?|see\s+also|相关工作|相关)\s*[:：]\s*(?:[A-Za-z][\w\-.]*\s*(?:的|['’]s)?\s*)?"
                           r"(?:pr\s*)?#\d+|^\W*(?:closing|superseded|obsolete|duplicate)\b[^.;]{0,30}?\b(?:by|since|as|because)\s+"
                           r"(?:pr\s*)?#\d+"
                           r"|^\W*(?:pr\s*)?#\d+\s*(?:合入|合并|上线)?\s*(?:之前|以前|前|之后|以后|后)", _I)
_NOW = re.compile(r"\bnow\b|\btoday\b|现在|目前|如今", _I)
# "MFU 是 52%", "utilization is 71%": a level in percent, not a change by a percent ("30% higher", "提升 30%")
_LEVEL_PERCENT = re.compile(r"\d+(?:\.\d+)?\s*%\s+(?=MFU|HFU|utili[sz]ation|occupancy|hit\s+rate|accuracy)"
                            r"|(?:是|为|\bis\b|\bwas\b|=|:)\s*[~≈约]?\s*\d+(?:\.\d+)?\s*%"
                            r"(?!\s*(?:higher|lower|faster|slower|more|less|better|worse|up|down|over|above|below)\b)"
                            r"(?!\s*(?:更|高|低|快|慢|提升|提高|增加|降低|减少))", _I)


_PR_NUMBER = re.compile(r"#(\d+)")
_THAT_CHANGE = re.compile(r"\b(?:that|the\s+same)\s+(?:pr|change|commit|patch)\b"
                          r"|\ban?\s+(?:equivalent|similar|earlier|previous|other)\s+(?:fix|change|patch|pr)\b"
                          r"|类似的?改动|同样的改动|那个\s*PR|该\s*PR", _I)


def another_sources_value(clause: str, sentence: str, following: str = "") -> Mood | None:
    """The clause gives a value that another system or paper publishes, or a value from another change's history,
    and its sentence names no arm of this change by any name, nor does the next sentence give a value: a number
    from elsewhere. `following`: the text after the sentence, in its block."""
    sentence = _NOT_APPLIED.sub(" ", sentence)  # "(baseline, not changed by this PR)"
    if _NOW.search(sentence) or _next_sentence_is_ours(following):
        return None
    other = _OTHER_CHANGE.search(sentence)
    if other:
        # "…; 本 PR 只重写了 kernel": the change named beside another's history, with no result of its own
        named = [part for part in _PART.split(sentence) if _names_the_change_arm(part)]
        others = _PART.split(_THAT_CHANGE.sub(" ", sentence))  # "that PR", "an equivalent fix": the other change
        if _WE.search(_WE_UNMEASURED.sub(" ", sentence)) or len(_PR_NUMBER.findall(sentence)) > 1 \
                or any(map(_gives_a_result, named)) \
                or any(gives_our_side(part) for part in others[1:]) or _values_elsewhere(others[1:]):
            return None  # "…, and our patch takes it to 1.3k", "#6188 raises it to 1.2k" (the change by its number?)
        return Mood("a number from elsewhere", other.group(0))
    if _names_the_change_arm(sentence):
        return None
    source = _NAMED_SOURCE.search(clause)
    if source is None or (states_relative_result(_LEVEL_PERCENT.sub(" ", clause))
                          and not _PUBLICATION.search(source.group(0))):
        return None
    segments = _SEGMENT.findall(sentence)
    if any(_WE.search(segment) and not _BASE.search(segment) and gives_our_side(segment)
           for segment in _SPEAKER_SEGMENT.findall(sentence)) \
            or _values_elsewhere(segments) \
            or _ARM_WORD.search(first_sentence(following)):
        return None  # "SGLang lists 11k tok/s and we get 12k", "…; we're at 8.5k on main, 10.9k with the new kernel"
    return Mood("a number from elsewhere", source.group(0))
