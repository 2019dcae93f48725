"""The mood of a clause: whether it asserts a result, or asks, plans, aims, requests, defines or points.

A claim is an assertion. A clause that names a metric and a number can still assert nothing
about this change:

| mood | English | Chinese |
|---|---|---|
| question | "how do we get to 250 tok/s on 8 GPUs?", "Does TTFT drop?" | "吞吐能提升多少？", "是否降低了首字延迟" |
| request | "improve this to 200+ tokens/s", "please get TTFT under 1 s", "we need 2x throughput" | "请把吞吐提升到…", "希望首字延迟降到…" |
| target | "targets: TTFT under 1 s", "TTFT SLO of 200 ms", "must stay below 50 ms" | "目标：首字延迟低于 1 秒" |
| plan | "TTFT will be measured in stage D", "we plan to benchmark the throughput gain" | "后续测量吞吐收益", "计划在 D 阶段测量" |
| definition | "TPOT is defined as …", "ITL means the gap between tokens" | "首字延迟指 …", "定义为" |
| pointer | "to see the TTFT effect, use the serving benchmark", "TTFT numbers are in the dashboard" | "详见", "参见" |
| conditional | "if TTFT drops by 30%, we ship it", "this could lower TTFT" | "如果吞吐提升 2 倍" |
| purpose | "separate workers to reduce interference on TPOT" | "为了降低首字延迟" |
| negated result | "this does not improve TTFT", "no TTFT regression" | "吞吐没有提升", "未见明显变化" |
| threshold | "a TPOT regression above 5% would block the release" | |
| expectation | "we expect the end-to-end gain to be small" | "理论上 … 应该会有所改善" |
| usual value | "TTFT usually sits between 280 and 320 ms" | "通常" |
| retracted number | "the 3% increase I mentioned earlier was a mistake", "Edit: ignore the 14% … I posted" | "昨天贴的 … 是误测" |
| number from elsewhere, disowned (`claim_sources`) | "the figures are from the upstream README; we did not reproduce them" | "来自上游，我们没有复现" |
| expectation, not measured | "I'd expect a visible TPOT improvement, but I haven't measured it" | |
| quotation | 'The title says "faster decoding", which reads like an end-to-end gain' | |

Each mood is recognised by the words that set it (an interrogative, an imperative or a wish
before a level to reach, a target noun, a future or planning verb, a defining verb, a pointer
verb, a condition), not by the metric it talks about. Each holds only for the result it governs:
a target is not excused when the clause says it was met ("now meets the 500 ms SLO"); a plan, a
pointer, a definition or a condition is not excused when the clause also states a relative
result (2x, 30 %): "See the results page for the 2x TTFT gain" claims the gain; a condition
excuses the results inside it, not one stated after it ("If you deploy this PR, TTFT drops by
30%"); a threshold the results inside it; a retraction the number before it; a request or an
instruction not a result its author measured ("please confirm the 30% win we measured"); a
disowning only a clause that names where its number comes from and nothing of the author's own.
Numbers whose source is not this change (the base arm alone, another system's or another change's
value, one attributed elsewhere and disowned) are read by `gates.checks.claim_sources`, with the
patterns of this module that say where a number comes from (`ELSEWHERE`, `OUR_OWN`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Mood:
    """Why a clause asserts no result: the mood's name and the words that set it."""

    name: str
    words: str

    def explain(self) -> str:
        return f"{self.name} ({self.words.strip()!r})"


_I = re.IGNORECASE
_QUESTION_MARK = "?？"
_QUESTION_START = re.compile(
    r"^\W*(?:how|what(?=\s+(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|kind|about|if|happens"
    r"|else|numbers?|gains?|speed-?ups?)\b)|why|where(?=\s+(?:do|does|did|is|are|was|were|can|could|should|would|will|has|have)\b)|which|who|whether|any\s+(?:idea|ideas|plan|plans|update|numbers)"
    r"|(?:can|could|should|shall|would|do|does|did|is|are|was|were|has|have)\s+(?:we|you|i|anyone|someone|this|it|there"
    r"|the)\b|wonder(?:ing)?\s+(?:if|whether|how)|is\s+there|are\s+there)\b",
    _I)
_QUESTION_INSIDE = re.compile(r"\b(?:whether|wonder(?:ing)?\s+(?:if|how))\b", _I)
_ZH_QUESTION = re.compile(r"(?:吗|呢|么)\s*$|如何|怎么|怎样|为什么|为何|是否|能否|能不能|可不可以|有没有|多少|何时|哪些|ですか|でしょうか")

_WISH = (r"(?:please|pls|plz|kindly|let['’]s|consider\s+(?:adding|running|measuring|benchmarking|including)|we\s+(?:would\s+|will\s+|still\s+)?(?:need|want|would\s+like|must|should)"
         r"|i['’]d\s+like|i\s+want|ideally"
         r"|(?:it\s+)?would\s+be\s+(?:nice|great|good)|can\s+(?:someone|somebody|anyone|you)|need\s+to|needs\s+to"
         r"|feature\s+request|request:|ask:|wish(?:list)?:|help\s+wanted)")
IMPERATIVE_VERBS = _IMPERATIVE = (r"(?:improve|make|get|reduce|increase|bring|push|speed\s+up|optimi[sz]e|lower|raise|cut|boost"
               r"|support|enable|reach|hit|achieve|target)")
_LEVEL_TO_REACH = (r"(?:\bto\s+(?:at\s+least\s+|over\s+|above\s+|below\s+|under\s+|around\s+|~)?[\d.,]+\s*\+?"
                   r"|\bunder\s+[\d.,]+|\bbelow\s+[\d.,]+|\bbeyond\s+[\d.,]+|\b[\d.,]+\s*\+)")
_REQUEST = re.compile(rf"^\W*(?:{_WISH}\b.*|{_IMPERATIVE}\b.*{_LEVEL_TO_REACH})", _I)
_ZH_REQUEST = re.compile(r"^\W*(?:请(?!求)|麻烦|希望|需要|建议|争取|力争|(?<!的)要求|求)")
# "Before merging, please confirm that p99 ITL stays within 45 ms": a request after a lead-in phrase
# A request that wraps a result its author measured still states it: "please confirm the 30% TTFT win we measured",
# "Please merge: this makes TTFT 30% lower", "Let's merge this 30% TTFT reduction"
_WRAPPED_RESULT = re.compile(r"\b(?:we|i)\s+(?:measured|saw|got|observed|found|recorded)\b|\b(?:showed|shows|shown)\b"
                             r"|\bthis(?:\s+(?:pr|change|patch|branch))?\s+(?:gives|gave|gets|got|makes|made|brings|delivers|yields)\b"
                             r"|\b(?:we|i)\s+(?:have\s+)?(?:won|gained)\b", _I)
_MERGE_REQUEST = re.compile(r"\b(?:merge|ship|land|approve|accept|take\s+a\s+look\s+at|review|take\s+note|note|confirm|see)\b"
                            r"|本\s*PR|本分支|\bthis\s+(?:pr|branch|change|patch)\b|\bours\b|\blike\s+it\s+does\b", _I)
# "Release checklist: verify that req/s is within 3% of the previous release": an instruction
_CHECK_THAT = re.compile(r"^\W*(?:[\w\s\-]{1,30}:\s*)?(?:please\s+)?(?:verify|check|confirm|ensure|make\s+sure|double[\s\-]?check)"
                         r"\s+(?:that|whether|if)\b", _I)
_MET = re.compile(r"\b(?:met|achieved)\b", _I)
# "must finish prefill (TTFT) within 3 s": "within" after a modal of obligation states the target, not that it is met
_OBLIGED_WITHIN = re.compile(r"\b(?:must|should|shall|needs?\s+to|has\s+to|have\s+to|is\s+required\s+to)\b[^.;]*\bwithin$", _I)
# The change itself, named: a question or a request that names it with a relative result states that result
# "Is the 12% … you mentioned from this PR, or from …?": a question about where a number comes from
_ASKS_WHICH = re.compile(r"\b(?:or|whether)\b|\byou\s+(?:mentioned|reported|saw|measured|posted|quoted)\b", _I)
THIS_CHANGE = re.compile(r"\bthis\s+(?:pr|branch|change|patch)\b|\b(?:on|with|in)\s+the\s+branch\b|本\s*PR|本分支|这个\s*(?:改动|PR|分支)|本次改动", _I)
_PAST_CHANGE = re.compile(r"\b(?:dropped|fell|rose|improved|increased|decreased|reduced|cut|grew|halved|doubled|went)\b", _I)
_PLEASE = re.compile(r"\b(?:please|kindly|pls)\s+(?:also\s+)?(?:confirm|check|verify|make\s+sure|ensure|double[\s\-]?check"
                     r"|measure|re-?run|run|add|report|share|post|attach|include|benchmark)\b", _I)

_TARGET = re.compile(
    r"(?:\b(?:targets?|goals?|objectives?|SLOs?|SLAs?|budgets?(?!\s+(?:fix|change|tuning|logic|heuristic|computation|accounting))|requirements?|thresholds?|aim(?:s|ing)?\s+(?:for|at)"
    r"|(?:success|acceptance|exit)\s+criteri(?:on|a)"
    r"|must\s+(?:stay|be|remain|not\s+exceed|complete|finish|return|respond|be\s+answered)|should\s+(?:stay|be|remain|not\s+exceed)|at\s+most|no\s+more\s+than"
    r"|not\s+to\s+exceed|needs?\s+to\s+(?:stay|be|remain)|ideally|stays?\s+(?:under|below|within)"
    r"|(?:trying|aim(?:ing)?|want|hope|hoping)\s+to\s+beat)\b"
    r"|目标|(?<!你的)(?<!您的)(?<!按你)(?<!按您)要求|预算|不超过|不得超过|上限|下限|目標"
    # "请求必须在 2 秒内完成", "首字需要在 1 秒内返回": a duty to finish within a time states the target
    r"|必须|务必|(?:需要?|应当?|应该)在[^，。；,;]{0,12}?内)", _I)
# "A TPOT regression above 5% would block the release", "fails the PR if tok/s drops more than 2%": a threshold that a
# gate acts on; without the gate ("gains above 30% were observed") it is a result
_THRESHOLD = re.compile(r"\b(?:no\s+more\s+than|at\s+most|less\s+than|under|within)\s+(?:a\s+|an\s+)?[\d.,]+\s*%?\s*"
                        r"(?:drop|regression|slow-?down|loss|increase|decrease)\b"
                        r"|\b(?:regressions?|regress(?:es)?|slow-?downs?|drops?|falls?|rises?|increases?|decreases?|grows?|gains?"
                        r"|improvements?)\s+(?:of\s+|by\s+)?(?:above|over|beyond|exceeding|more\s+than|greater\s+than"
                        r"|larger\s+than|below|under|less\s+than|at\s+least)\s+[\d.,]+", _I)
# "请求吞吐低于基线 3% 时会报警": a threshold a gate acts on, in Chinese
_ALERT_RULE_LEAD = re.compile(r"^\W*(?:告警规则|报警规则|告警条件|回滚条件|alert(?:ing)?\s+rules?|rollback\s+(?:rule|condition)s?)\s*[:：]", _I)
_ZH_THRESHOLD = re.compile(r"若[^。；]{0,40}?(?:超过|高于|低于|上涨|下降)[^。；]{0,24}?(?:则|就|即|自动)?[^。；]{0,10}?(?:回滚|报警|告警|触发|阻断)"
                           r"|(?:低于|高于|超过|下降超过|回退超过|下降|回退)[^，。；]{0,10}?\d+(?:\.\d+)?\s*(?:%|秒|毫秒|ms|s)[^，。；]{0,6}?"
                           r"(?:时|则|即)\s*(?:会|将|自动)*\s*(?:报警|告警|失败|阻止|拦截|报错|阻断|触发)")
_GATE = re.compile(r"\b(?:block(?:s|ed)?|fail(?:s|ed)?|gates?|rejects?|alerts?|pages?|flags?|triggers?|allowed|tolerated"
                   r"|acceptance|criteri(?:on|a)"
                   r"|acceptable|budget|pings?|notif(?:y|ies)|warns?|bots?)\b", _I)
# After a target, the value reached: "(now 290 ms)", "✅ 290 ms", "(split-KV: 290 ms)", "we're at 290 ms", "reached: 5,900"
_TARGET_MET = re.compile(r"✅|✔|\b(?:reached|achieved|met|hits?|now|we\s+got|we['’]re\s+at|sits?\s+at|we\s+get)\b"
                         r"|\bsplit[\w\-]*\s*[:=]?\s*[~≈]?\d|\bwith\s+(?:split[\w\-]*|this\s+pr|the\s+patch|it)\b|已达到|已达|现在", _I)
# "18% higher under the 500 ms SLO", "at the same SLO": the target is the condition of a result, not the aim
_UNDER_A_TARGET = re.compile(r"\b(?:under|at|within|with|for|against|meeting)\s+(?:the\s+|a\s+|an\s+|our\s+|same\s+)*"
                             r"(?:[\w.]+\s+){0,3}$|在[^，。,；;]{0,12}$"
                             # "goodput 提升 1.4 倍（SLO：TTFT<300ms）": the target in brackets after a result
                             r"|[（(]\s*$", _I)
# (the collectives all-reduce and reduce-scatter are no reduction)
_FINITE_CHANGE = re.compile(r"(?<!to )\b(?:improv|increas|decreas|(?<!all-)(?<!all_)(?<!all\s)(?<!all)reduc(?!e[\s_\-]?scatter)|drop|cut(?!lass|e\b|e[\s_\-]?dsl)|boost|regress(?:es|ed)\b"
                            r"|rise|rises|rose"
                            r"|fell|falls|jump|climb|lowers|lowered|raises|raised|shorten|halv|doubl)\w*"
                            r"|\bfrom\s+[\d.,]+\s*\S*\s+to\s+\d|\b(?:down|up)\s+from\s+(?:roughly\s+|about\s+|around\s+)?[~≈]?\d|[\d.]+\s*\S{0,4}\s+(?:becomes|became|turns\s+into)\s+[\d.]|[从由]\s*[\d.,]+[^，。,；;]{0,12}?(?:到|至)\s*[\d.,]", _I)
_ACHIEVED = re.compile(r"\b(?:it|which)\s+now\s+(?:does|manages|takes)\b|\bnow\s+(?:does|manages)\b"
                       r"|\b(?:now\s+)?(?:meets?|met|hits?|achieved|achieves|reached|reaches|(?<!to\s)beats?|exceeds?"
                       r"|exceeded|within|clears?|cleared|pass(?:es|ed)|satisf(?:y|ies|ied)|achieved|without\s+(?:breaching"
                       r"|exceeding|violating|missing|going\s+over))\b|达到了|已达到|满足了|达成|超过了", _I)

_FUTURE = (r"(?:\bwill\b|\bshall\b|['’]ll\b|\bgoing\s+to\b|\bplan(?:s|ned)?\s+to\b|\bto\s+be\b|\btodo\b|\bto\s*do\b"
           r"|\bnext\s+(?:step|pr|change|stage)\b|\bfollow[\s\-]?ups?\b|\blater\b|\bfuture\b|\bin\s+stage\s+[A-D]\b"
           r"|\bpending\b|\bnot\s+yet\b|\bupcoming\b|\bseparate\s+(?:pr|change)\b|\bwe\s+(?:should|need\s+to|want\s+to)\b"
           r"|后续|下一步|计划|将在|将会|稍后|之后再|待|以后|下个|随后|今後|予定)")
_PLAN_VERB = (r"(?:\b(?:measur|benchmark|evaluat|quantif|test|collect|add|profil|compar|check|report|investigat"
              r"|stud|track|record|validat|verif|confirm|establish|captur|assess|explor|publish"
              r"|revisit|attach|optimi[sz])[a-z]*\b"
              r"|测量|测试|评估|运行|跑|对比|收集|补充|验证|补测|统计|记录|确认|分析|计測|測定|評価)")
_FUTURE_RE = re.compile(_FUTURE, _I)
_PLAN_VERB_RE = re.compile(_PLAN_VERB, _I)

_DEFINITION = re.compile(
    r"\b(?:is|are)\s+(?:defined|measured|computed|calculated|reported)\s+as\b|\bmeans\b|\brefers?\s+to\b"
    r"|\bdenotes?\b|\bstands?\s+for\b|\bdefinition\b|\b(?:is|are)\s+the\s+(?:time|number|rate|latency|duration"
    r"|interval|gap|delay|count|average|mean|ratio)\b|\b(?:lower|higher)\s+(?:\w+\s+){0,5}?(?:is|are)\s+better\b(?![^.;]*\bmain\b)"
    r"|\bcounts\s+only\b"
    r"|定义为|是指|指的是|即为|表示的是|とは|越(?:低|高|小|大)越好|按[^。；]{1,60}?计算|计算方式"
    r"|(?<=[\w)）\s])指(?![标出令数向导定南针])", _I)

_POINTER = re.compile(
    r"^\W*(?:see|refer\s+to|check\s+out|look\s+at|use\s+the|run\s+the|to\s+see|to\s+reproduce|to\s+measure"
    r"|to\s+compare|for\s+(?:the\s+)?(?:numbers|results|details))\b"
    r"|\bduplicate\s+of\s+#\d+|\bwhich\s+tracks\b|\btracked\s+in\s+#\d+"
    r"|\b(?:(?:closes|fixes|resolves|addresses|part\s+of|related\s+to|refs?)\s+#\d+"
    r"|related\s*:?\s*#\d+|#\d+\s+(?:tracks|covers|is\s+about|follows\s+up)"
    r"|(?:^|[,;(]\s*|\b(?:please|and)\s+)see\s+(?:the|docs?|below|above|our|\[|https?:|§)|see\s+(?:below|above|docs?/|\[|https?:|§|#\d)"
    r"|refer\s+to|(?:is|are)\s+(?:in|on)\s+(?:the|our|this|docs/)|lives?\s+in|can\s+be\s+found|found\s+in"
    r"|available\s+(?:in|at|on)|reported\s+(?:in|by)|dashboards?|tracked\s+in)\b|详见|参见|参考|请看|见下|見る|参照", _I)

_CONDITIONAL_START = re.compile(r"^\W*(?:if|unless|assuming|suppose|supposing|provided|in\s+case|whether|once"
                                r"|如果|假如|若|假设|倘若|一旦|要是|もし)", _I)
_THEORY = r"\bin\s+theory\b|\btheoretically\b|\bon\s+paper\b|理论上"  # "In theory, …": a possibility, even with numbers
_HYPOTHETICAL = re.compile(r"\b(?:could|might|may|would|should|can|will\s+(?:probably|likely|possibly|perhaps))\s+"
                           r"(?:\w+ly\s+|also\s+)?(?:help|improv|lower|reduc"
                           r"|speed|cut|increas|boost|benefit|affect|impact|rais|shorten|hid|mask|caus|lead|skew|distort|see"
                           r"|notice|observe|get|drop|rise|fall|go\s+up|go\s+down|inflat|mislead|bring|regress|degrad|hurt|worsen"
                           r"|suffer|slow)\w*"
                           rf"|{_THEORY}|预计|预期|估计"
                           r"|\bany\s+(?:[\w\-]+\s+){0,2}?(?:regressions?|improvements?|gains?|speed-?ups?|slow-?downs?|drops?"
                           r"|changes?|differences?|wins?)\b(?=[^.;]{0,40}\b(?:should|would|could|might|may|will|can|shows?\s+up|stands?\s+out"
                           r"|easier|visible)\b)"
                           r"|\b(?:catch|spot|detect|flag|find|check\s+for|look\s+for|watch\s+for)\s+any\b"
                           # "the expected gain in end-to-end latency is below the noise floor": a gain not measured
                           r"|\b(?:expected|anticipated|projected|predicted|theoretical|potential|possible)\s+(?:[\w\-]+\s+){0,2}?"
                           r"(?:gains?|improvements?|speed-?ups?|wins?|savings?|benefits?)\b(?![^.;:]{0,40}\b(?:showed|shows|shown"
                           r"|materiali[sz]ed|held\s+up|came\s+through|measured|confirmed|observed)\b)"
                           r"|(?:可能|或许|也许|理论上|有望|应该|应当|预计|预期)[^，。,；;]{0,20}?(?:会|能)?\s*(?:有所)?\s*"
                           r"(?:提升|降低|改善|加快|减少)", _I)
# "We expect the end-to-end gain to be small": an expectation, not a measurement
_EXPECT = r"\b(?:we|i)(?:['’]d|\s+would)?\s+(?:expect|anticipate|predict)s?\s+"
_EXPECTATION = re.compile(rf"{_EXPECT}(?:an?|some)\s+(?:small|slight|modest|minor|tiny|large|big)?\s*"
                          r"(?:improvement|gain|speed-?up|regression|drop|win)\b"
                          rf"|{_EXPECT}(?:[\w\-/]+\s+){{0,5}}?to\s+(?:be|stay|remain"
                          r"|drop|fall|rise|improve|increase|decrease|shrink|grow|move|change|matter|help|show|translate"
                          r"|carry|lead|yield|give|bring|result|turn|come)\b"
                          r"|(?:预计|预期)[^。；;！？!?]{0,60}?(?:会|能|将)\s*(?:有所)?\s*(?:提升|提高|降低|改善|加快|减少)", _I)
# "I'd expect a visible TPOT improvement, but I haven't measured it": any expected gain, in a sentence that says it is
# unmeasured ("We expect a clear throughput gain in serving" alone still predicts one)
_EXPECTED_GAIN = re.compile(rf"(?:{_EXPECT}(?:an?|some|something\s+like|around|roughly|about|maybe|perhaps)\s+"
                            r"|\b(?:should|would|could|may|might)\s+(?:allow|enable|permit|lead\s+to|give|bring"
                            r"|translate\s+(?:in)?to|result\s+in|mean)\s+)"
                            r"(?:[\w\-~%.,]+\s+){0,6}?"
                            r"(?:improvement|gain|speed-?up|regression|drop|win|more|less|fewer|higher|lower|faster)s?\b", _I)
_UNMEASURED = re.compile(r"\b(?:have\s+not|haven['’]t|did\s+not|didn['’]t|not\s+yet)\s+(?:been\s+)?(?:measured|benchmarked|run|tested)\b"
                         r"|\bnot\s+a\s+measurement\b|\ban\s+estimate\b|\bestimated\s+from\b"
                         r"|\bunmeasured\b|\bno\s+numbers\s+yet\b|还没(?:有)?测|尚未测"
                         r"|\b(?:does\s+not|doesn['’]t|do\s+not|don['’]t)\s+include\s+(?:those|these|the|any)\s+"
                         r"(?:measurements|numbers|benchmarks?|results)\b", _I)
# "I wouldn't expect more than a 1-2% change in TPOT": a bound the author does not expect to exceed
_NOT_EXPECTED = re.compile(r"\b(?:we|i)\s+(?:wouldn['’]t|would\s+not|don['’]t|do\s+not)\s+expect\b", _I)
# "Did you notice that TTFT went from 410 ms to 290 ms?", "Why merge this: TTFT goes from 410 ms to 290 ms": a question
# that states its answer
_QUESTION_STATES_RESULT = re.compile(r"\bfrom\s+[\d.,]+\s*\S*\s+to\s+\d|\d\s*(?:->|→)\s*\d|^\W*why\s+[\w\s]{1,30}:"
                                     r"|[从由]\s*[\d.,]+[^，。；]{0,16}?(?:到|至)\s*[\d.]", _I)
_INVERTED_CONDITION = re.compile(r"^\W*(?:should|were|had)\s+(?:you|we|i|they|anyone)\b", _I)
# "If you run our script on this branch, you will see TTFT fall …", "If TTFT drops 30%, we ship it — and it did"
_SEE_FOR_YOURSELF = re.compile(r"\b(?:if|once|when)\s+(?:you|we)\s+(?:run|try|benchmark|deploy|use|enable|compare|measure|look"
                               r"|check)\b[^.;]*\b(?:you|we)(?:['’]ll|\s+will)\s+(?:see|get|notice|observe)\b"
                               r"|\b(?:and|which)\s+it\s+did\b", _I)
_INVERTED_AFTER_WHEN = re.compile(r"\b(?:does|do|did)\s+(?:the\s+)?[\w/\-]+\s+\w", _I)
_CONDITION_END = re.compile(r"[,:;—–，：；]|\s-\s|\bthen\b")
MODAL = re.compile(r"\b(?:will|would|could|should|might|may|can)\b|['’](?:ll|d)\b|会|将|可能|应该|或许", _I)
_SEEN = re.compile(r"\b(?:measured|saw|seen|got|observed|did|confirmed|showed|shown|shows|as\s+it\s+was|(?:was|were)\s+in"
                   r"|in\s+practice|came\s+out)\b"
                   r"|\bon\s+(?:my|our)\s+(?:box|machine|workstation|laptop|cluster|nodes?|setup|gpus?|a/b)\b|\bin\s+our\s+a/b\b"
                   r"|\bthis\s+(?:pr|change|patch)\s+(?:makes|made|gives|gave)\b|实测|测得|实际测|测出|压测结果|测试结果", _I)
# "the 28% comes from the fresh-process A/B": the author's own comparison
_A_B = re.compile(r"\bA/B\b|\bfresh[\s\-]process|\bbenchmark(?:ed)?\s+(?:it|this)\b|对比\s*main|压测", _I)
# "… fails the PR if output tok/s drops more than 2%": a result inside a condition
_CONDITION_INSIDE = re.compile(r"(?<!even )(?<!as )\b(?:if(?!\s+(?:anything|not)\b)|unless|whenever|(?:only\s+)?when"
                               r"|once\s+(?:we|you|someone|it|this|that)\s+(?:confirm|check|verify|see|know|measure)\w*"
                               r"|once\s+(?:the\s+)?(?:nightly|ci|benchmarks?|bench|runs?|dashboards?|numbers)\s+(?:shows?|confirms?|says|reports?)"
                               r"|until\s+(?:the\s+)?(?:nightly|ci|benchmarks?|dashboards?)\s+(?:shows?|confirms?))\b"
                               r"|如果|若|一旦", _I)
# A number that its sentence attributes elsewhere and disowns ("figures from the upstream README; we did not reproduce
# them"), or that the clause takes back ("The 3% increase I mentioned yesterday was a mistake")
ELSEWHERE = re.compile(
    r"\b(?:from|in|by)\s+(?:the\s+)?(?:upstream|paper|original|vendor|their|other)\b|\bupstream['’]?s?\b"
    r"|\bthe\s+(?:[\w\-.]+\s+){0,2}?paper\s+(?:reports?|says|claims|shows)|\btheir\s+(?:setup|numbers?|README|blog|paper)\b"
    r"|\bin\s+an?\s+(?:earlier|previous|older)\s+(?:release|version)\b|\bpreviously\s+reported\b"
    r"|\b(?:vendor|third[\s\-]party)\s+(?:blog|benchmark|numbers?)\b"
    r"|\b(?:blog(?:\s+post)?|paper|article|tweet|announcement)\s+(?:claims?|says|reports?|quotes?|lists?)\b"
    r"|\b[A-Z][\w\-.]*['’]s?\s+(?:published|official|public|own)\s+(?:[\w\-.]+\s+){0,2}?(?:perf(?:ormance)?\s+)?(?:tables?|numbers?|results?"
    r"|benchmarks?|figures?|charts?)\b"
    r"|(?<![\w.])v?\d+\.\d+(?:\.\d+)?\s+(?:already\s+|also\s+)?(?:brought|gave|delivered|introduced|shipped|had)\b"
    r"|\bthe\s+[\w\-.]+\s+team\s+(?:reported|claimed|announced|said|published)\b"
    r"|\bcomes?\s+from\s+(?:the\s+)?[\w\-.'’ ]{0,30}?(?:blog(?:\s+post)?|paper|readme|write-?up|release\s+notes?)\b"
    r"|\b(?:a|one|some)\s+(?:user|users|customer|customers|person|people)\s+(?:on|in|from)\s+[\w\-#]+\s+(?:reported|reports|said|says|saw)\b"
    r"|\b[A-Z][\w\-.]*['’]s\s+(?:perf(?:ormance)?\s+)?(?:overview|page|table|docs?|benchmarks?|blog)\s+(?:lists?|shows?|reports?|says)\b"
    r"|\bfrom\s+the\s+(?:v?\d+\.\d+(?:\.\d+)?\s+)?release\s+notes?\b"
    r"|@[\w\-]+['’]s\s+(?:run|numbers?|results?|benchmark|measurements?)\b|\b(?:last\s+week['’]s|yesterday['’]s|an\s+older)\s+nightly\b"
    r"|\b[A-Z][\w\-.]*\s+publishes\b|\bpublished\s+(?:by|in)\b|^\W*(?:in|with|on|for)\s+v?\d+\.\d+(?:\.\d+)?\b"
    r"|\bsee\s+the\s+(?:v?\d+\.\d+(?:\.\d+)?\s+)?(?:blog(?:\s+post)?|release\s+notes?|paper|announcement)\b"
    r"|\bthe\s+paper['’]s\b|\b(?:release\s+notes?|blog(?:\s+post)?|readme|docs?)\s+(?:advertised|advertises|promised|promises"
    r"|claimed|claims|reported|reports|listed|lists|list|quote|quotes|quoted|say|says|said|mention|mentions|mentioned)\b|\b[A-Z][\w\-.]*\s+reports\b"
    r"|\b(?:described|listed|reported|announced)\s+in\s+(?:the\s+)?(?:v?\d+\.\d+(?:\.\d+)?\s+)?(?:release\s+)?notes\b"
    r"|\bin\s+(?:the|their|a)\s+(?:[\w.\-]+\s+){0,2}?(?:blog(?:\s+post)?|paper|announcement|release\s+notes?)\b"
    r"|\b(?:users?|people|customers|reporters?|someone|others)\s+in\s+#\d+\s+(?:report|reported|say|said|see|saw|observe[sd]?)\b"
    r"|\b(?:quoted|reported|measured|posted)\s+in\s+#\d+|\bfrom\s+#\d+"
    r"|(?:\bissue\s+)?#\d+\s+(?:reports|reported|says|said|describes|described|found)\s+(?:that\s+)?"
    r"|\bpeople\s+(?:usually\s+|often\s+|typically\s+)?(?:quote|cite|report|claim)"
    r"|\b(?:claimed|reported|quoted|posted|mentioned)\s+in\s+(?:the\s+)?(?:(?:original|linked|upstream|referenced)\s+)?"
    r"(?:issue|thread|discussion|paper|blog)\b|issue\s*里|(?:另一套|不同的?)\s*(?:并行)?\s*配置下测"
    r"|\bblog(?:\s+post)?\s*:|\busers?\s+(?:report|reported|see|saw)\b"
    r"|来自上游|上游|论文|(?:厂商|官方|第三方)?博客\s*(?:称|说|里|中|显示)", _I)
# What the author measured or changed: a clause that names it states its own result, whatever else it disowns
OUR_OWN = re.compile(r"\bthis\s+(?:pr|change|patch|branch|commit)\b|\bours\b|\bour\s+(?:own\s+)?(?:\w+\s+)?(?:runs?|a/b|cluster"
                      r"|fork|staging|tests?|benchmarks?|measurements?|setup|nodes?|numbers?|results?)\b|\b(?:we|i)\s+"
                      r"(?:saw|measured|got|observed|see|measure)\b|\bmatch(?:es|ed)?\b"
                      r"|\bwith\s+(?:this\s+(?:pr|change|patch|branch|fix)|the\s+(?:patch|fix))\b"
                      r"|\bon\s+this\b(?!\s+(?:model|gpu|hardware|machine|box|setup|config|dataset|shape|workload|node))"
                      r"|本\s*PR|我们的|合并后", _I)
_RETRACTED = re.compile(r"\b(?:was|were|is)\s+(?:a\s+|an\s+)?(?:mistake|wrong|error|bogus|invalid|mis-?measured)\b"
                        r"|\bplease\s+(?:ignore|disregard)\b|\bretract\w*|\bdisappears?\b|\bvanish(?:es)?\b|误测|请忽略|作废", _I)
# The sentence after a number that takes it back: "That was wrong: …", "Please disregard it"
_TAKEN_BACK_NEXT = re.compile(r"^\W*(?:(?:that|this|it)\s+(?:was|is)\s+(?:wrong|invalid|incorrect|a\s+mistake|bogus)"
                              r"|please\s+(?:disregard|ignore)\s+(?:it|that|this))\b", _I)
_IGNORE = re.compile(r"(?:^|[:：]\s*)\W*(?:please\s+)?(?:ignore|disregard)\b|请忽略|忽略"
                     r"|\b(?:i(?:['’]ve|\s+have)?\s+)?(?:removed|withdrew|withdrawn|struck)\s+the\b", _I)
_EARLIER = re.compile(r"\b(?:(?:i|we)\s+(?:mentioned|posted|reported|quoted|shared)|earlier|yesterday|previous(?:ly)?"
                      r"|from\s+the\s+(?:description|summary|title)"
                      r"|before)\b|昨天|之前|先前|上次|贴的", _I)

_NEGATED_RESULT = re.compile(
    r"(?:\b(?:not|never|no|without)\b|n['’]t\b)(?:\s+[\w\-]+){0,3}?\s+(?:improv|increas|speed|boost|gain|win|chang|affect|shorten"
    r"|reduc|lower|cut|drop"
    r"|impact|mov|differ|benefit|help|faster|better|measurable|significant|noticeable|visible|effect)\w*"
    r"|(?:没有|未|无|不)\s*(?:明显|显著|任何)?\s*(?:的)?\s*(?:提升|变化|改善|影响|收益|加速|差异)", _I)
_PURPOSE = re.compile(r"\b(?:to|in\s+order\s+to|so\s+as\s+to|aims?\s+to|intended\s+to|designed\s+to|meant\s+to"
                      r"|helps?\s+(?:to\s+)?)\s+(?:further\s+)?(?:improve|reduce|lower|increase|boost|speed\s+up|cut"
                      r"|minimi[sz]e|maximi[sz]e|keep|avoid|hide)\b|以\s*(?:便)?\s*(?:降低|提升|提高|减少)|为了\s*(?:降低|提升|提高|减少)",
                      _I)
# "TTFT p50 on the reference box usually sits between 280 and 320 ms": how a metric usually reads, not what this change
# did; a clause that names the change or a change (now, this PR, the branch, after, from … to) is not excused
_USUAL = re.compile(r"\b(?:usually|typically|typical|normally|normal|generally|historically|ordinarily)\b|通常|一般|平时|往常", _I)
_NAMES_THE_CHANGE = re.compile(r"^\W*with\b|\b(?:now|this\s+(?:pr|change|patch|branch|commit|build|version)|patch\w*|new|main|baseline"
                               r"|before|previous|old|arms?|branch|build|pr|change"
                               r"|fix|with\s+(?:this|the\s+(?:new|patch|change|fix))|after|since|anymore|than|vs|versus|against|instead|rather|compared|while"
                               r"|whereas|post[\s\-]?merge|used\s+to)\b|本\s*(?:PR|改动|修改|提交)|现在|之后|改后|相比|对比|而|合入", _I)
# An arm and its value: "main 52", "before: 410", "pr=288.1"
ARM_VALUE = re.compile(r"\b(?:main|baseline|master|before|after|pr|this\s+pr|patched|branch|old|new|control)\s*(?:[:=]|\bat\b|\bis\b)?\s*"
                       r"[+\-−~≈]?\d[\d.,]*"
                       r"|(?<![\d.,])[\d.,]+\s*\S{0,6}\s+(?:on|in|for)\s+(?:main|control|the\s+baseline)\b",
                       _I)
# Another arm named anywhere in the sentence: "…; on main it was usually 410 ms", "合并前是 410 ms"
_OTHER_ARM = re.compile(r"\b(?:on|with|in|for|than)\s+(?:main|master|the\s+baseline|the\s+old\s+\w+)\b|\bmain['’]s\b"
                        r"|\bbefore\s+(?:the|this)\s+(?:pr|change|merge|patch)\b|\bused\s+to\b|\bpost[\s\-]?merge\b|\b(?:was|were)\s+(?:usually\s+|typically\s+)?"
                        r"(?:around\s+|about\s+|~)?\d|合并前|合并后|合入前|合入后|之前是|以前是|改动前", _I)
# "typically 30% higher": a comparison, not a usual level
_COMPARED_LEVEL = re.compile(r"\b(?:higher|lower|faster|slower|better|worse|more|less|fewer|shorter|longer|sooner|earlier"
                             r"|later|quicker|up|down)\b"
                             r"|更快|更慢|更高|更低|提升|降低", _I)
_IN_THEORY = re.compile(_THEORY, _I)
# "Flash inference generally seems to be a bit faster": a comparative said of the subject
_PREDICATED_COMPARATIVE = re.compile(r"\b(?:is|are|was|were|seems?\s+to\s+be|looks?|feels?|runs?|ran)\s+(?:(?:a\s+bit|slightly"
                                     r"|somewhat|much|a\s+little|noticeably|consistently)\s+)?(?:faster|slower|quicker|snappier)\b",
                                     _I)
# 'The title says "faster decoding", which reads like …': words quoted from a document, which is judged where it stands
_DOCUMENT = r"\b(?:title|description|summary|changelog|release\s+notes?|commit\s+message|readme|docs?|headline)"
_QUOTED = re.compile("(?:" + _DOCUMENT + r"\s+(?:says|said|reads|claims|claimed|states|promises|promised)\s*:?\s*"
                     r"|(?:描述|标题|说明|文档|README|changelog)\s*(?:中|里)?\s*(?:写的|写着|说的|提到的|声称的?)\s*(?:是)?\s*[：:]?\s*)"
                     r"(?P<quote>\"[^\"]{1,160}\"|“[^”]{1,160}”|‘[^’]{1,160}’|「[^」]{1,160}」)", _I)
# '…says "speed up serving" but the description only has a unit test', '写的“推理速度提升 30%”缺少测试条件': the sentence
# says the quoted words are not backed
_UNBACKED = re.compile(r"\bonly\s+(?:has|have|had|shows?|contains?|includes?)\b|\black(?:s|ing)?\b|\bmissing\b"
                       r"|\bwithout\s+(?:any\s+)?(?:numbers|data|evidence|benchmarks?|measurements?)\b"
                       r"|\bno\s+(?:numbers|data|evidence|benchmarks?|measurements?|bench\s+numbers|results)\b"
                       r"|\bnot\s+(?:shown|measured|backed|supported)\b|缺少|缺乏|没有(?:数据|测试|依据)|不好判断|无法判断", _I)
# "The description says this improves throughput, but the table only shows the GEMM": words reported from a document,
# doubted in the same sentence
_REPORTED = re.compile(_DOCUMENT + r"\s+(?:says|said|claims|claimed|states|promises|implies|suggests)\s+(?:that\s+)?", _I)
_DOUBT = re.compile(r"\bbut\b|\bhowever\b|\?|\bonly\s+shows?\b|\bnot\s+(?:shown|measured|backed|supported)\b"
                    r"|\bno\s+(?:numbers|data|evidence)\b|但|却", _I)
# '…, which reads like an end-to-end gain': how the quoted words read, not a result
# "v2 adds the serving benchmark that backs it", "Reproduced since on 2x H100", "条件是 H100 …": the quoted words backed
_BACKED = re.compile(r"\b(?:backs?|backed|supports?|supported|substantiates?)\s+(?:it|this|that|them|the\s+(?:claim|title|number))\b"
                     r"|\b(?:reproduced|confirmed|verified)\b|\bbenchmark\s+(?:logs?|results?|output)\s+(?:are|is)\b"
                     r"|\bthis\s+(?:branch|pr|change|patch)\b|\b(?:staging|canary|a/b|fresh[\s\-]process|dashboard|screenshot)\b"
                     r"|\b(?:attached|linked)\b|\bcomments?\s+below\b|\bnext\s+comment\b|\bmain\s*:\s*[~≈]?\d"
                     r"|补充如下|补充一下|条件(?:是|为)|测试条件\s*[:：]|复现了|已复现|确认了|本分支|本\s*PR|测的|测得|得到的|预发", _I)


def backs_a_quotation(text: str) -> bool:
    """The text (the paragraph after a quotation said to be unbacked) backs the quoted words after all: "That number is
    from our staging canary running this branch", "- main: 410 ms / - this PR: 287 ms"."""
    return _BACKED.search(text) is not None
_QUOTED_TITLE = re.compile(r"['\"“‘]([^'\"”’]{1,60})['\"”’]\s+(?:guide|page|docs?|documentation|section|tutorial|blog\s+post|readme"
                           r"|chapter|notebook|example|recipe|article|talk)\b", _I)
_ENDORSED = re.compile(r"\b(?:it\s+is|it['’]s)\s+(?:one|true|real|correct|accurate)\b|\bcorrectly\s+so\b|\band\s+(?:it|that)\s+(?:holds|is\s+true)\b", _I)
_DESCRIBES_QUOTE = re.compile(r"[\s,]*(?:which|that|it)\s+(?:reads|sounds|looks)\s+like\b", _I)
_NOT_ONLY = re.compile(r"\bnot\s+only\b|不仅|不但|不只", _I)


_RELATIVE = re.compile(
    r"\d\s*(?:%|％|[x×](?![A-Za-z])(?!\s*[\u4e00-\u9fff])|倍|-?fold|\s*times\b|\s*percent)|\b(?:twice|half|halv|doubl|tripl)\w*"
    r"|\ba\s+(?:third|quarter|fifth|tenth)\s+(?:quicker|faster|slower|sooner|lower|higher|less|more|off)\b"
    r"|\b(?:down|up|off)\s+(?:by\s+)?(?:a\s+)?(?:third|quarter|fifth|half)\b"
    r"|一半|翻倍|减半|[一两二三四五六七八九十半几]\s*倍|(?<![\d.,])\d[\d.,]*\s*\S{0,6}\s+(?:lower|higher|faster|slower|less|more"
    r"|shorter|longer|better|worse|sooner)\b|\d\s*(?:->|→|=>)\s*\d|\bfrom\s+[\d.,]+\s*\S*\s+to\s+\d"
    r"|[从由]\s*[\d.,]+[^，。,；;]{0,12}?(?:到|至)\s*[\d.,]", _I)


def states_relative_result(clause: str) -> bool:
    """The clause states a relative result (2x, 30 %, 1.4 倍, 12 ms lower, 812 -> 540)."""
    return _RELATIVE.search(clause) is not None


# "…; with this PR it finishes within 1.2 s (main: 2.9 s)", "instead of 2.4 s": the target met by this change
_MEETS_IT = re.compile(r"\bthis\s+(?:pr|change|patch|branch)\b|\bafter\s+this\b|本\s*PR|\binstead\s+of\s+[\d.]"
                       r"|这个\s*(?:分支|PR)|本分支|合入(?:本\s*PR)?后|合入前|改动[前后]|main\s*上?\s*(?:是|为|要|只有)?\s*[\d.]"
                       r"|(?:原来|之前|以前)(?:是|为|要)?\s*[\d.]|现在\s*[\d.]"
                       r"|\bdown\s+from\b|\bmain\s*[:=(]\s*[\d.]|\(main\b", _I)


# "本 PR 的目标是 …", "this PR's goal is …": the change named as whose target it is; or, where the clause gives no
# value but the target's, as a first step toward it ("…，本 PR 只是第一步", "this PR is only a first step")
_TARGET_OWNER = re.compile(r"本\s*PR\s*的?\s*目标|\bthis\s+(?:pr|change)['’]s\s+(?:goal|target|aim)\b"
                           r"|\b(?:goal|target|aim)\s+of\s+this\s+(?:pr|change)\b|\bthis\s+(?:pr|change)\s+aims\b", _I)
# A result's value ("30%", "1.5 倍", "410 ms"), not a count or a size ("8 卡", "1024 GPUs", "70B")
RESULT_VALUE = re.compile(r"[+\-~≈]?\d[\d.,]*\s*(?:%|[x×](?![A-Za-z])|倍|ms|s|sec(?:ond)?s?|min(?:ute)?s?|µs|μs|us|秒|毫秒"
                          r"|分钟|(?:tok(?:en)?s?|req(?:uest)?s?)\s*/\s*s)(?![A-Za-z])", _I)
# Progress toward a target: "当前分支已达 1.5 倍", "目前实测已降低 18%", "phase 1 (this PR) measured 19%", "19% of the way"
_PROGRESS = re.compile(r"已达|已经|实测|目前|当前|这一版|这一步|\bmeasured\b|\bso\s+far\b|\bof\s+the\s+way\b|\bphase\s*1\b"
                       r"|\breached\b|\bgot\b|\bnow\b", _I)
_FIRST_STEP = re.compile(r"本\s*PR\s*(?:只是|仅是|是)\s*(?:第一步|一部分|开始)"
                         r"|\bthis\s+(?:pr|change)\s+is\s+(?:only\s+|just\s+)?(?:a|the)\s+first\s+step\b", _I)
# "Goal: a 30% iteration time reduction …", "The goal of this RFC is a 2x speedup": a target stated as a change noun
_TARGET_LEAD = re.compile(r"^\W*(?:the\s+)?(?:targets?|goals?|objectives?)(?:\s+of\s+(?:this|the)\s+(?:rfc|proposal|project"
                          r"|milestone|work|effort|roadmap))?\s*(?::|\bis\b)", _I)
_CHANGE_NOUN = re.compile(r"\b(?:a|an)\s+[~≈]?[\d.,]+\s*(?:%|x|×)?\s*(?:[\w\-]+\s+){0,3}?(?:reduction|improvement|increase"
                          r"|decrease|drop|cut|boost|speed-?up)\b", _I)


def _stands(target: re.Match, clause: str, sentence: str) -> bool:
    """Whether the target found in `clause` is one the clause states, not one it says is met or changed. A goal stated
    as a change noun ("Goal: a 30% … reduction") or beside "本 PR 只是第一步" stands only where its sentence gives no
    other value and no progress toward it."""
    whole = sentence if clause in sentence else clause
    alone = len(RESULT_VALUE.findall(whole)) <= 1 and not _PROGRESS.search(whole, whole.find(clause) + target.end())
    aimed_at = _CHANGE_NOUN.sub(" ", clause) if alone and _TARGET_LEAD.match(clause) else clause
    owner_free = _TARGET_OWNER.sub(" ", clause)
    if alone:
        owner_free = _FIRST_STEP.sub(" ", owner_free)
    return not _met_in(clause) and not _FINITE_CHANGE.search(aimed_at) and not _MEETS_IT.search(owner_free)


def _met_in(clause: str) -> bool:
    """The clause says a target or threshold is met ("now meets the 500 ms SLO", "stays within 45 ms"); "must
    finish within 3 s" states the target."""
    return any(not (found.group(0).lower() == "within" and _OBLIGED_WITHIN.search(clause, 0, found.end()))
               for found in _ACHIEVED.finditer(clause))


# "once the nightly shows TPOT within 2% of main": a bound the condition asks for, not a result it states
_A_BOUND = re.compile(r"\b(?:within|under|below|at\s+most|no\s+more\s+than|less\s+than)\s+[~≈]?\d[\d.,]*\s*(?:%|x|×|ms|s)?", _I)


def _conditional(clause: str, condition: re.Match, results: list[tuple[int, int]]) -> bool:
    """The clause's results are what its condition supposes: all of them inside the condition (up to its comma, colon
    or dash: "if TTFT drops by 30%, we ship it"), or the rest of the clause is itself hypothetical ("If we enable it,
    TTFT will drop"). "If you deploy this PR, TTFT drops by 30%" states its result after the condition."""
    if not results or any(start < condition.start() for start, _ in results):
        return False
    end = _CONDITION_END.search(clause, condition.end())
    boundary = end.start() if end else len(clause)
    outside = clause[:condition.start()] + " " + clause[condition.end():]  # "once the nightly shows …": its own verb
    if condition.group(0).lower().startswith("once") and (THIS_CHANGE.search(clause) or _WRAPPED_RESULT.search(outside)
                                                         or states_relative_result(_A_BOUND.sub(" ", clause))
                                                         or _QUESTION_STATES_RESULT.search(clause)):
        return False  # "LGTM once we confirm the 30% TTFT cut this PR shows on H100 holds on A100" states the 30%
    if condition.group(0).lower().endswith("when") and (_PAST_CHANGE.search(clause, condition.end(), boundary)
                                                        or _MEETS_IT.search(clause)
                                                        or _SEEN.search(clause, condition.end(), boundary)
                                                        or _INVERTED_AFTER_WHEN.search(clause, condition.end(), boundary)):
        return False  # "When TTFT dropped 30%, we shipped it" tells what happened; "Only when …, does TTFT drop 30%" states it
    if all(start < boundary for start, _ in results):
        return True
    return bool(MODAL.search(clause, boundary))


def taken_back(clause: str, following: str) -> Mood | None:
    """A number the author posted earlier that the next sentence takes back: "I posted a 12% improvement yesterday.
    That was wrong: …"."""
    if _EARLIER.search(clause) and _TAKEN_BACK_NEXT.search(following) and len(_RELATIVE.findall(clause)) <= 1:
        return Mood("a retracted number", _TAKEN_BACK_NEXT.search(following).group(0).strip())
    return None


# "attention is ~40% of decode time": a share of a whole, not a change
_SHARE = re.compile(r"[~≈]?\d[\d.,]*\s*%\s+of\s+(?:the\s+)?(?:[\w\-]+\s+){0,2}?(?:time|runtime|latency|cycles|flops|compute"
                    r"|memory|traffic|step|iteration)\b", _I)


_BOUND = re.compile(r"\b(?:below|under|above|over|at\s+most|at\s+least|within|no\s+more\s+than)\s+[~≈]?[\d.,]+"
                    r"|(?:[<>]=?|[≤≥])\s*[~≈]?[\d.,]+|\bno[t]?\s+(?:worse|slower|lower|higher)\s+than\b", _I)


def target_carried(clause: str, sentence_before: str) -> Mood | None:
    """A bound in a clause joined to a target named earlier in its sentence: "Target: p99 TTFT under 500 ms …, and
    TPOT below 30 ms"."""
    target = _TARGET.search(sentence_before)
    if target and _BOUND.search(clause) and not _met_in(clause) and not _FINITE_CHANGE.search(clause):
        return Mood("a target", target.group(0))
    return None


# "`--max-num-batched-tokens` trades TTFT against throughput: larger values let more prefill tokens into one step":
# what a setting does, in general
_SETTING_EFFECT = re.compile(r"\btrades?\s+(?:off\s+)?[\w/\-]+(?:\s+[\w/\-]+){0,3}\s+(?:against|for)\b"
                             r"|\b(?:reads?|comes?\s+out|looks?)\s+(?:slightly\s+|a\s+bit\s+|somewhat\s+)?(?:lower|higher)\s+than\s+what\b"
                             r"|^\W*(?:larger|higher|smaller|lower|bigger)\s+values?\b"
                             r"|^\W*(?:increasing|decreasing|raising|lowering|setting|enabling|disabling)\s+`?[\w\-.]+`?\s+(?:generally|usually"
                             r"|typically|tends\s+to|often)\b", _I)
# "Can someone double-check the 31% TTFT cut on A100?", "Where does the 1.35x decode speedup come from?", "Why is this PR
# 1.35x faster at decode?", "这 31% 的首字延迟下降是噪声吗？": a question that takes the result as given states it
_PRESUPPOSED = re.compile(r"\bthe\s+[~≈]?\d[\d.,]*\s*(?:%|x|×)\s+(?:[\w\-/]+\s+){0,4}?(?:gain|cut|speed-?up|improvement|reduction|drop"
                          r"|win|boost|decrease|increase)\b|\bthe\s+[~≈]?\d[\d.,]*\s*(?:%|x|×)\s+(?:faster|slower|lower|higher)\b"
                          r"|\bthe\s+[~≈]?\d[\d.,]*\s*(?:%|x|×)\s+[\w/\- ]{0,30}?\s+(?:we|you|i)\s+(?:get|got|see|saw|measure|measured)\b|\bwhy\s+(?:is|does|would|did)\s+(?:this\s+(?:pr|branch|change)|the\s+[\w\-]+\s+"
                          r"(?:server|endpoint|model))\b[^?]*\d|\bwhy\s+(?:would\s+)?(?:a|this)\s+[\w\-]+\s+change\s+[^?]*\bas\s+it\s+does\b"
                          r"|\bwhy\s+this\s+branch['’]s\b|(?:这\s*)?(?<![\d.])[\d.]+\s*(?:%|倍)\s*的[^？?]{0,16}?(?:提升|下降|改善|降低|加速)"
                          r"|为什么本\s*(?:PR|分支)[^？?]{0,20}?[\d.]+|为什么[^？?]{0,16}却[^？?]{0,16}?[\d.]+\s*%", _I)
# "Can we raise the rate limit, given it now holds 900 req/s with this change (main: 600)?": a question whose reason
# states the change's result
_GIVEN_RESULT = re.compile(r"\b(?:given|since|now\s+that|because|as)\b[^?]{0,80}?(?:\d|faster|slower|lower|higher|sooner)[^?]*?"
                           r"\b(?:with\s+(?:this|it)|this\s+(?:pr|change|branch|patch)|main)\b|既然[^？?]{0,40}?\d"
                           r"|\b(?:given|since|now\s+that|because)\b[^?]{0,80}?\bnow\b[^?]{0,40}?\d[\d.,]*\s*(?:%|x|×)", _I)
# "the 9% step-time improvement in your first comment", "@author …": a number someone else posted, asked about
_SOMEONE_ELSES = re.compile(r"\byour\b|@[\w\-]+|\b(?:they|he|she)\s+(?:posted|measured|reported|saw)\b|你(?:的|贴|测)|楼上", _I)
# "问题描述：升级到 CANN 8.0 之后，… 吞吐从 900 tok/s 掉到了 600 tok/s", "After upgrading from 0.6.3 to 0.6.4, … dropped": a
# problem someone reports after an upgrade, no result of this change (a clause that names the change is read as it stands)
_BUG_REPORT_LEAD = re.compile(r"^\W*(?:问题描述|问题现象|现象|bug\s+(?:report|description)|describe\s+the\s+bug|current\s+behaviou?r"
                              r"|故障现象|known\s+issues?(?:\s+in\s+v?[\d.]+)?|已知问题)\s*[:：]"
                              r"|^\W*(?:after|since)\s+upgrading\s+(?:from|to)\b|^\W*升级(?:到|至)[^，。；]{1,30}?(?:之后|以后|后)", _I)


# "a 2-3% change in req/s is within run-to-run variance", "moves from 24.9 ms to 23.1 ms purely because of the metric fix":
# a spread, or a number that moves because a metric is computed differently
_WITHIN_NOISE = re.compile(r"\bis\s+within\s+(?:the\s+)?(?:run[\s\-]to[\s\-]run\s+)?(?:variance|noise|spread)\b|在波动范围内|属于噪声", _I)
_ROLLED_OUT = re.compile(r"\bsince\s+(?:the\s+)?[\w\-]*\s*(?:build\s+)?(?:rolled\s+out|went\s+(?:to|up|live)|was\s+deployed|rollout|deploy)"
                         r"|\bcompared\s+(?:with|to)\s+the\s+previous\s+(?:deploy|build|release|version)\b"
                         r"|上线后|灰度后", _I)
_THE_REST = re.compile(r"\b(?:remaining|the\s+rest|except|genuine|real)\b[^.]*\d|其余|剩下", _I)
_METRIC_REDEFINED = re.compile(r"\b(?:purely|only|just|entirely)\s+because\s+of\s+(?:the\s+)?(?:metric|definition|accounting|measurement)"
                               r"(?:\s+(?:fix|change))?\b|口径(?:变化|调整|修正)", _I)


# "Kernel speedups don't always show up in the server", "并不总是": what holds in general, no result of this change
_NOT_ALWAYS = re.compile(r"(?:\b(?:not|never)|n['’]t)\s+(?:always|necessarily)\b|并不总是|不总是|不一定|未必"
                         r"|(?:\b(?:do|does)\s+not|n['’]t)\s+(?:turn|translate|carry)\s+(?:over\s+)?into\b[^.;]{0,40}\bby\s+themselves\b", _I)


# "410 ms becomes 290 ms", "from 410 to 290", "410 -> 290": two numbers of a change
_NUMBERS_CHANGE = re.compile(r"[\d.]+\s*\S{0,4}\s+(?:becomes|became|turns\s+into|goes\s+to|drops\s+to|rises\s+to)\s+[\d.]"
                             r"|\bfrom\s+[\d.,]+\s*\S*\s+to\s+\d|\d\s*\S{0,4}\s*(?:->|→)\s*\d", _I)


def quotation(clause: str, sentence: str, results: list[tuple[int, int]], following: str = "") -> Mood | None:
    """Words quoted from a document, in a question or with how they read: 'The title says "faster decoding", which
    reads like an end-to-end gain'. A quoted number is excused only in a question ('… "2x faster decoding" …; is
    it?'), and a clause that names our own work not at all. `results` are the spans of the clause's results;
    `following` is the next sentence, which may back the quoted words after all ("v2 adds the benchmark that backs it")."""
    titles = list(_QUOTED_TITLE.finditer(clause))
    if titles and results and all(any(t.start(1) <= start < t.end(1) for t in titles) for start, _ in results):
        return Mood("a document's title", titles[0].group(0)[:60])  # "the timings in the 'Speed up inference' guide"
    quoted = list(_QUOTED.finditer(clause))
    if not quoted and results and not OUR_OWN.search(clause) and not states_relative_result(clause):
        reported = _REPORTED.search(clause)  # "The description says this improves throughput, but the table …"
        if reported and all(start >= reported.end() for start, _ in results) and _DOUBT.search(sentence, reported.end()):
            return Mood("a quotation", reported.group(0).strip())
    if not quoted or not results or OUR_OWN.search(clause):
        return None
    after_quote = sentence.find(quoted[-1].group("quote")) + 1
    if _UNBACKED.search(sentence, after_quote) and not OUR_OWN.search(sentence, after_quote) \
            and not _SEEN.search(sentence, after_quote) and not _A_B.search(sentence, after_quote) \
            and not _BACKED.search(sentence, after_quote) and not _BACKED.search(following) \
            and all(any(q.start("quote") <= start < q.end("quote") for q in quoted) for start, _ in results):
        return Mood("a quotation the sentence says is not backed", quoted[0].group(0)[:60])
    described = _DESCRIBES_QUOTE.match(clause, quoted[-1].end())
    asked = sentence.rstrip().endswith(tuple(_QUESTION_MARK))
    numbers_quoted = any(states_relative_result(q.group("quote")) for q in quoted)
    if not ((described and not numbers_quoted) or asked):
        return None
    if _ENDORSED.search(sentence, quoted[-1].end()):
        return None  # 'The title says "faster serving", which reads like an end-to-end gain — it is one: 19% more …'
    if all(any(q.start("quote") <= start < q.end("quote") for q in quoted) or (described and start >= described.end())
           for start, _ in results):
        return Mood("a quotation", quoted[0].group(0)[:60])
    return None


# "The speedup only materializes end to end if the batch is large enough", "The end-to-end speedup will depend on the
# share of time spent in attention", 端到端加速比取决于 …: when a result would hold, with no value
_ONLY_IF = re.compile(r"\bonly\s+(?:\w+\s+){0,6}?(?:if|when|once)\b|只有[^，。；]{0,20}?(?:才|时)"
                      r"|(?P<depends>\b(?:depends?|depending|hinges?)\s+(?:on|upon)\b|取决于|视[^，。；,;]{1,16}?而定)", _I)


def only_if(clause: str, sentence: str = "") -> Mood | None:
    """A result said to hold only under a condition, with no value of its own: a condition, no result. A result
    said to depend on something is one only while its sentence gives no value and, after the dependence, neither
    names this change nor states a result ("… depends on batch size, but with this PR it is faster everywhere")."""
    found = _ONLY_IF.search(clause)
    if not found or sentence_values(clause):
        return None
    if found.group("depends"):
        after = sentence[sentence.find(clause) + found.end():] if clause in sentence else clause[found.end():]
        if sentence_values(sentence) or THIS_CHANGE.search(after) or states_relative_result(after):
            return None
    return Mood("a condition", found.group(0))


def unmeasured_expectation(clause: str, sentence: str) -> Mood | None:
    """An expected gain in a sentence that says it was not measured: "I'd expect a visible TPOT improvement, but I
    haven't measured it"."""
    expected, unmeasured = _EXPECTED_GAIN.search(clause), _UNMEASURED.search(sentence)
    rest = clause[:expected.start()] + " " + clause[expected.end():] if expected else clause  # the expected number itself
    elsewhere = sentence.replace(clause, " ")  # "…, but I haven't benchmarked A100 yet (H100: 410 ms -> 290 ms)"
    if expected and unmeasured and not _PAST_CHANGE.search(clause) and not states_relative_result(_SHARE.sub(" ", rest)) \
            and not _SEEN.search(clause) and not RESULT_VALUE.search(elsewhere):
        return Mood("an expectation, not measured", f"{expected.group(0)} … {unmeasured.group(0)}")
    return None


# A value a sentence gives: a number, with its suffix or unit sign ("8.5k", "1,940", "18%", "1.18x"); not a part of a
# name ("Llama-3-8B", "H100", "#6021", "v2", "8xH100") nor a count before its noun ("8k prompts", "64 requests")
_VALUE = re.compile(r"(?<![\w#.,/+\-])[~≈+−]?\d[\d,]*(?:\.\d+)?(?:\s?(?:[kKM]\b|x\b|×|%|倍))?(?![\w\-/])"
                    r"(?!\s*(?:prompts?|tokens?\b|requests?|users?|gpus?|nodes?|layers?|heads?|steps?|runs?|times|个|条|张))")
# "batch 64", "bs=8", "at 512 concurrency": a setting, no result
_SETTING_BEFORE = re.compile(r"\b(?:batch(?:\s+size)?|bs|concurrency|tp|pp|ep|dp|rank|seq(?:uence)?\s+len(?:gth)?|context"
                             r"|ctx)\s*[=:]?\s*$", _I)
_SENTENCE_END = re.compile(r"[.。!?！？;；](?!\d)")


def sentence_values(text: str) -> list[str]:
    """The values `text` gives that are no setting ("8.5k", "1,940", "18%"; not "batch 64", "Llama-3-8B")."""
    return [m.group(0) for m in _VALUE.finditer(text) if not _SETTING_BEFORE.search(text, 0, m.start())]


def first_sentence(following: str) -> str:
    """The first sentence of `following` (a decimal point ends none)."""
    end = _SENTENCE_END.search(following)
    return following[:end.start()] if end else following


def next_sentence_values(following: str) -> bool:
    """The next sentence of the block gives a value ("Split-KV: 1,940.", "18.5 here.")."""
    return bool(sentence_values(first_sentence(following)))

# "We did not see any end-to-end throughput improvement on Llama-2-7B": what was looked for and not seen, a few words on
_NOT_SEEN = re.compile(r"(?:\b(?:not|never)|n['’]t)\s+(?:see|notice|observe|measure|find|get)\w*\s+(?:any|a|an)\b"
                       r"(?:\s+(?!(?:but|and|only|just|rather|instead)\b)[\w\-]+){0,4}?\s+(?:improvement|gain|speed-?up|win"
                       r"|benefit|change|difference|effect)s?\b", _I)


def not_seen(clause: str, sentence: str, following: str) -> Mood | None:
    """A result looked for and not seen, in a sentence that gives no value and before a sentence that gives none: a
    negated result. "…; at batch 64 this PR gives 18%" or a next sentence "At batch 64, 1.18x." is a result beside it."""
    found = _NOT_SEEN.search(clause)
    if found is None or sentence_values(sentence) or next_sentence_values(following):
        return None
    return Mood("a negated result", found.group(0))


def mood_of(clause: str, *, ends_with: str, results: list[tuple[int, int]] = (), sentence: str = "") -> Mood | None:
    """The mood that makes `clause` assert no result, or None for an assertion.

    `ends_with`: the character that ends the clause's sentence ("?" for a question).
    `sentence`: the clause's sentence, where a target stated as a change noun or beside "this PR is a first step"
    must stand with no other value and no progress toward it.
    `results`: the spans of the clause's result words; a result stated only under a negation
    ("does not improve TTFT") is a negated result. A clause that states a relative result
    (`states_relative_result`) is not excused as a plan, a possibility, a definition or a pointer.
    """
    stripped = clause.strip()
    offset = len(clause) - len(clause.lstrip())
    presupposed = None if ELSEWHERE.search(stripped) or _ASKS_WHICH.search(stripped) or _SOMEONE_ELSES.search(stripped) \
        else _PRESUPPOSED.search(stripped)
    answered = _QUESTION_STATES_RESULT.search(stripped) or presupposed or _GIVEN_RESULT.search(stripped) or (
        THIS_CHANGE.search(stripped) and states_relative_result(stripped) and not _ASKS_WHICH.search(stripped))
    if ends_with and ends_with in _QUESTION_MARK and not answered:
        return Mood("a question", ends_with)
    inverted = (ends_with != "?" and _INVERTED_CONDITION.search(stripped)) or answered
    for pattern in (_QUESTION_START, _QUESTION_INSIDE, _ZH_QUESTION):
        found = pattern.search(stripped)
        if found and not inverted and not presupposed:
            return Mood("a question", found.group(0))
    wrapped = _WRAPPED_RESULT.search(stripped) or (_MERGE_REQUEST.search(stripped) and (
        states_relative_result(stripped) or _FINITE_CHANGE.search(stripped)))
    for pattern in (_REQUEST, _ZH_REQUEST, _PLEASE, _CHECK_THAT):
        found = pattern.search(stripped)
        if found and not wrapped and not presupposed and not (pattern is _CHECK_THAT and _PAST_CHANGE.search(stripped)) \
                and not _MET.search(stripped) and not (pattern is _ZH_REQUEST and _MEETS_IT.search(stripped)) \
                and not (THIS_CHANGE.search(stripped) and arm_values(stripped)):
            return Mood("a request", found.group(0)[:40])
    target = next((found for found in _TARGET.finditer(stripped)
                   if not _UNDER_A_TARGET.search(stripped, 0, found.start())), None)
    if target and _TARGET_MET.search(stripped, target.end()) and len(sentence_values(stripped[target.end():])) >= 2:
        target = None  # "Targets: TTFT under 300 ms (now 290 ms)", "SLO: p99 TTFT < 300 ms (split-KV: 290 ms)": met
    threshold = _THRESHOLD.search(stripped) if _GATE.search(stripped) else None
    if threshold and not _ACHIEVED.search(stripped) \
            and all(threshold.start() <= start - offset < threshold.end() + 8 for start, _ in results):
        return Mood("a threshold", threshold.group(0))
    alert_rule = _ALERT_RULE_LEAD.search(stripped)
    if alert_rule:
        return Mood("a threshold", alert_rule.group(0).strip())  # "告警规则：… 超过 2 秒即触发"
    zh_threshold = _ZH_THRESHOLD.search(stripped)
    if zh_threshold and all(zh_threshold.start() <= start - offset < zh_threshold.end() for start, _ in results):
        return Mood("a threshold", zh_threshold.group(0))
    if target and _stands(target, stripped, sentence):
        return Mood("a target", target.group(0))
    if results and not _NOT_ONLY.search(stripped):
        negations = [(m.start() + offset, m.end() + offset, m.group(0)) for m in _NEGATED_RESULT.finditer(stripped)]
        if negations and all(any(s <= start < e for s, e, _ in negations) for start, _ in results):
            return Mood("a negated result", negations[0][2])
    spans = [(start - offset, end - offset) for start, end in results]
    condition = _CONDITIONAL_START.search(stripped) or (_INVERTED_CONDITION.search(stripped) if ends_with != "?" else None)
    inside = condition or _CONDITION_INSIDE.search(stripped)
    if inside and _conditional(stripped, inside, spans) and not _SEE_FOR_YOURSELF.search(stripped):
        return Mood("a condition", inside.group(0))
    ignored = _IGNORE.search(stripped)
    if ignored and _EARLIER.search(stripped, ignored.end()) and spans and all(start > ignored.start() for start, _ in spans) \
            and len(_RELATIVE.findall(stripped)) <= 1:
        return Mood("a retracted number", ignored.group(0))
    retraction = _RETRACTED.search(stripped)
    if retraction and _EARLIER.search(stripped) and spans and all(start < retraction.start() for start, _ in spans) \
            and len(_RELATIVE.findall(stripped)) <= 1:
        return Mood("a retracted number", retraction.group(0))
    expectation = _EXPECTATION.search(stripped) or _NOT_EXPECTED.search(stripped)
    if expectation and not _PAST_CHANGE.search(stripped) and not _SEEN.search(stripped) \
            and not (THIS_CHANGE.search(stripped) and _FINITE_CHANGE.search(stripped)):
        return Mood("an expectation", expectation.group(0))
    usual = _USUAL.search(stripped)
    if usual and not names_the_change(stripped) and not _FINITE_CHANGE.search(stripped) and not _COMPARED_LEVEL.search(stripped):
        return Mood(USUAL_VALUE, usual.group(0))
    theory = _IN_THEORY.search(stripped)
    if theory and not _SEEN.search(stripped) and not _PAST_CHANGE.search(stripped):
        return Mood("a possibility", theory.group(0))
    noise = _WITHIN_NOISE.search(stripped) or _METRIC_REDEFINED.search(stripped)
    if noise and not THIS_CHANGE.search(stripped[:noise.start()]) and not _THE_REST.search(stripped, noise.end()):
        return Mood("a spread or a metric computed differently", noise.group(0))
    bug = _BUG_REPORT_LEAD.search(stripped)
    if bug and not THIS_CHANGE.search(stripped):
        return Mood("a bug report", bug.group(0).strip())
    if states_relative_result(stripped):
        return None
    future, verb = _FUTURE_RE.search(stripped), _PLAN_VERB_RE.search(stripped)
    if future and verb and not (_SEEN.search(stripped) and re.search(r"\d", stripped)):
        return Mood("a plan", f"{future.group(0)} … {verb.group(0)}")
    for pattern, name in ((_HYPOTHETICAL, "a possibility"), (_PURPOSE, "a purpose"), (_DEFINITION, "a definition"),
                          (_POINTER, "a pointer"), (_NOT_ALWAYS, "a generalisation"), (_SETTING_EFFECT, "a setting's effect")):
        found = pattern.search(stripped)
        if found and not (pattern in (_DEFINITION, _POINTER) and (arm_values(stripped) or (
                (THIS_CHANGE.search(stripped) or _ROLLED_OUT.search(stripped)) and (_FINITE_CHANGE.search(stripped)
                                                                                   or _RELATIVE.search(stripped))))) \
                and not (pattern is _SETTING_EFFECT and (THIS_CHANGE.search(stripped) or _NUMBERS_CHANGE.search(stripped))):
            return Mood(name, found.group(0))
    usual = _USUAL.search(stripped)
    if usual and not names_the_change(stripped) and not _FINITE_CHANGE.search(stripped) \
            and not _PREDICATED_COMPARATIVE.search(stripped):  # "generally seems to be a bit faster" compares
        return Mood(USUAL_VALUE, usual.group(0))
    return None


def names_this_change(text: str) -> bool:
    """The text names this change ("this PR", "this branch", 本 PR)."""
    return THIS_CHANGE.search(text) is not None


def says_measured(text: str) -> bool:
    """The text says something was measured or seen ("measured", "in practice", 实测)."""
    return _SEEN.search(text) is not None


def says_done(text: str, start: int = 0) -> bool:
    """The text from `start` on says a change happened ("dropped", "improved", "cut")."""
    return _PAST_CHANGE.search(text, start) is not None


def states_a_change(text: str) -> bool:
    """The text states a relative result or a finite change ("30%", "1.4x", "from 24 ms to 18 ms")."""
    return states_relative_result(text) or _FINITE_CHANGE.search(text) is not None


USUAL_VALUE = "a usual value"
EXPECTATION = "an expectation"
POSSIBILITY = "a possibility"
# "…, and our serving benchmark agrees", "压测也是这个数", "三轮压测的中位数与此吻合": a measurement that confirms what was expected
_MEASURED_WHERE = (r"(?:\b(?:benchmarks?|runs?|measurements?|a/b|numbers|tests?|staging|canary|deployment|cluster|production|prod"
                   r"|replay|dashboard|this\s+(?:branch|pr|change|patch)|our\s+(?:box|machine|cluster|nodes?))\b"
                   r"|\bin\s+practice\b|\bload\s+tests?\b"
                   r"|压测|实测|实际|测试|benchmark|跑出来|跑完|中位数|结果|灰度|线上|预发|上线后|生产|本分支|本\s*PR|这个分支)")
_CONFIRMED = re.compile(_MEASURED_WHERE + r"[^.;。；]{0,60}?(?:\b(?:agrees?|agreed|confirms?|confirmed|say\s+the\s+same|says\s+the\s+same"
                        r"|said\s+the\s+same|match(?:es|ed)?|bears?\s+(?:it|this|that)\s+out|sees?|saw|seen|shows?|showed|shown|landed"
                        r"|lands|measured|gives?|gave|does|did|too|also|the\s+same|(?:is|was)\s+what|looks?\s+(?:just\s+)?like"
                        r"|sits?|within|has\s+been|have\s+been)\b|[~≈]?\d|同样如此|也做到了|做到了"
                        r"|也是这个数|正好是这个数|就是这个数|确认如此|与此吻合|与之吻合|吻合|一致|印证|差不多|也是这样|看到)"
                        r"|\bconfirmed\s+(?:by|in|on)\s+(?:our|the|a)\b"
                        r"|\b(?:that['’]?s|that\s+is|which\s+is)\s+(?:what|roughly\s+what|about\s+what)\s+(?:we|i|production|staging)\b", _I)


def confirmed_after(rest: str) -> bool:
    """The rest of the sentence after an expectation says a measurement confirmed it: the expected result is stated."""
    return _CONFIRMED.search(rest) is not None


def names_the_change(text: str) -> bool:
    """The clause names the change, an arm or a comparison (so a usual value in it is one side of an A/B)."""
    return _NAMES_THE_CHANGE.search(text) is not None


def arm_values(text: str) -> bool:
    """The text gives arms their values: "main 52 ms, PR 36 ms", "before: 410 ms"."""
    return len(ARM_VALUE.findall(text)) >= 1 and len(re.findall(r"\d", text)) >= 2


def names_another_arm(sentence: str) -> bool:
    """The sentence gives another arm its own value ("…; on main it was usually 410 ms")."""
    return _OTHER_ARM.search(sentence) is not None
