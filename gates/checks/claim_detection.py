"""Finding end-to-end claims in Markdown prose (G7's reading of sentences).

The text is read as it renders (`gates.model.markdown_prose`: code, comments and link targets
are not prose; emphasis, entities, zero-width characters and fullwidth letters do not hide
a word), split into clauses, and searched for the claim vocabulary below. Link and image
titles (also from a reference definition) and the title, alt and aria-label attributes of raw
HTML are read as prose too: a reader sees them as tooltips and captions. Each clause reports
its first claim term that no excuse covers, else its claim shape (below).

Vocabulary (case-insensitive; `CLAIM_TERMS`): TTFT, TPOT, ITL (and plurals), E2E, QPS,
end-to-end, time to first token, time per output token, inter-token / per-token / first-token
latency, tok/s, tokens/s, tokens/sec, tokens per second, requests/s, request / serving /
user-facing / P50-P99 latency, serving / inference / decode / generation throughput,
goodput, latency or throughput gains, inference or generation speed; 端到端, 首字/首 token
延迟·时延·时间, 每 token 延迟, token 间延迟, 每秒生成 token 数, 吞吐, 时延, 推理速度/加速,
请求/用户侧/P99 延迟. "吞吐" and "时延" after a memory or kernel word (DRAM, HBM, L2, 显存, 带宽,
kernel, 内核, 访存 ...) or before 受限 (bound) are kernel metrics, not claims. A configuration
can add phrases with `extra_terms`.

Ende-zu-Ende, de extremo a extremo, de bout en bout and エンドツーエンド are end-to-end too.

Claim shapes (`SERVING_SUBJECTS`, `SERVING_MEASURES`, `CHANGES`): a clause that names a serving
subject (users, customers, chat, replies, responses, inference, wall-clock, token or word
generation, serving or inference cost, "the model answers"; 用户, 回复, 响应, 推理, 服务, 成本;
ユーザー, 推論, 応答; Antwortzeit, Nutzer; usuarios, tiempo de respuesta; utilisateurs, temps de
réponse ...) or a serving measure (latency, throughput, serve/serving, per request; 延迟, 时延,
吞吐, 耗时; レイテンシ, 遅延, スループット; Latenz, Durchsatz; latencia; latence, débit) together with a
quantity or a comparative (30%, 2x, 2倍, 一倍, 12 ms, twice, half, doubles, sooner, faster,
less, lower, 降低, 缩短, 短縮, sinkt, baja, baisse ...) is a claim: "Chat replies now arrive 30%
sooner for users", "延迟降低30%", "The model answers twice as fast". A measure whose scope is a
kernel, a memory, a route, a pass, a layer or the cache ("DRAM throughput 0.44%", "内核耗时 12 ms",
"one program serves a whole group", "latency-bound", "throughput of the partial kernel") is
kernel-level; a subject never is. The excuses below apply to the clause's first concept, read
without its quantities ("we do not claim 30% faster replies").

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
its sentence: "TTFT: not measured directly, but estimated 2x better", "| TTFT | not measured |
2x faster |", "Future work: TTFT gains of 2x" are claims.

So a negation elsewhere in the clause excuses nothing: "TTFT improves 2x with no code
changes", "not only ... but also TTFT", "非常", "未来" are claims. Clauses end at sentence
ends (. ! ? ; 。) and at contrastive joints (", but", ", and", "，但", "但是" ...).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Iterable

from gates.model.markdown_prose import ProseBlock, normalise_char, parsed_tokens, parser_reads, prose_blocks

_H = r"[\s\-\u2010\u2011]"  # a hyphen or space between the words of a term

CLAIM_TERMS = (
    r"\bTTFTs?\b|\bTPOTs?\b|\bITLs?\b|\bE2E\b|\bQPS\b|\bgoodput\b"
    rf"|\bend{_H}*to{_H}*end\b"
    rf"|\btime{_H}+to{_H}+first{_H}+tok(?:en)?s?\b"
    rf"|\blatency{_H}+(?:to|until|before){_H}+(?:the{_H}+)?first{_H}+tok(?:en)?\b"
    rf"|\btime{_H}+per{_H}+(?:output{_H}+)?tok(?:en)?s?\b"
    rf"|\b(?:(?:inter|between|per|first|next|output){_H}*)?tok(?:en)?s?{_H}+latenc(?:y|ies)\b"
    r"|\btok(?:en)?s?\s*/\s*s(?:ec(?:ond)?s?)?\b"
    rf"|\btok(?:en)?s?{_H}+(?:per|a){_H}+sec(?:ond)?s?\b"
    r"|\breq(?:uest)?s?\s*/\s*s(?:ec(?:ond)?)?\b"
    rf"|\brequests?{_H}+per{_H}+sec(?:ond)?\b"
    rf"|\b(?:request|serving|response|user{_H}*(?:facing|perceived|visible|side)|end{_H}*user|generation|inference"
    rf"|tail|queu(?:e|ing|eing)){_H}+latenc(?:y|ies)\b"
    rf"|\bp(?:50|90|95|99|99\.9|999)\b(?:{_H}+[a-z]+){{0,2}}?{_H}+latenc(?:y|ies)\b"
    rf"|\b(?:serving|inference|generation|request|token|system|decode|decoding|prefill|output|model){_H}+throughput\b"
    rf"|\b(?:latency|throughput){_H}+(?:speed{_H}?ups?|gains?|improvements?|wins?|reductions?|boosts?)\b"
    rf"|\bspeed{_H}?ups?\s+(?:in|of|on)\s+(?:latency|throughput)\b"
    rf"|\b(?:inference|generation|serving|decoding){_H}+speed(?:{_H}?ups?)?\b"
    r"|\bfaster\s+(?:inference|serving|generation|responses?|decoding)\b"
    rf"|\bende{_H}*zu{_H}*ende\b|\bde{_H}+extremo{_H}+a{_H}+extremo\b|\bde{_H}+bout{_H}+en{_H}+bout\b|エンドツーエンド"
    r"|端\s*到\s*端"
    r"|首\s*(?:个\s*)?(?:字|词|token|tok)\s*(?:的\s*)?(?:延迟|时延|时间|耗时|响应时间|latency)"
    r"|(?:每|单)\s*(?:个\s*)?(?:输出\s*)?(?:字|词|token|tok)\s*(?:的\s*)?(?:延迟|时延|时间|耗时)"
    r"|(?:token|tok|词|字)\s*间\s*(?:的\s*)?(?:延迟|时延|间隔)"
    r"|每秒\s*(?:生成|输出|产出|处理|解码)?\s*(?:的\s*)?(?:token|tok|词|字)"
    r"|(?:token|tok)s?\s*/\s*秒"
    r"|(?:推理|生成|解码|服务)\s*(?:速度|加速|提速|性能|延迟|时延)"
    r"|(?:请求|用户侧?|用户感知|响应|服务)\s*(?:的\s*)?(?:延迟|时延)"
    r"|p\s*(?:50|90|95|99|99\.9)\s*(?:请求)?\s*(?:延迟|时延)"
    r"|吞\s*吐|时\s*延"
)

# Every term of CLAIM_TERMS starts with one of these characters; testing it first makes the scan fast.
_FIRST_CHAR = r"(?=[bdefgilmnopqrstu端首每单词字推生解服请用响吞时エ])"

_KERNEL_WORD = (r"(?:DRAM|HBM|L1|L2|SM|smem|shared|memory|kernel|内核|算子|内存|显存|带宽|缓存|访存|存储|launch|启动"
                r"|同步|sync)")
_KERNEL_METRIC = re.compile(_KERNEL_WORD + r"[\sA-Za-z0-9_/、和与及的]{0,8}$", re.IGNORECASE)
_KERNEL_METRIC_TERMS = ("吞吐", "时延")
_BOUND = re.compile(r"^\s*(?:受限|bound)")

# Clause boundaries: sentence ends and contrastive joints.
_SENTENCE_END = re.compile(r"[.](?=\s|$)|[;!?。！？；]")
_CLAUSE_END = re.compile(
    r"[.](?=\s|$)|[;!?。！？；]"
    r"|,\s*(?:but|and|while|whereas|yet|so|although|though|because)\b|\b(?:but|however|whereas|although)\b"
    r"|,\s*(?:但|而|并且|且|同时|可是|不过)|但是|然而|不过",
    re.IGNORECASE,
)

_T = "\x01"  # a claim term, in the masked clause the excuse rules read

_CLAIM_VERB = (
    r"(?:claim|make|made|measure|report|state|assert|quote|present|promise|impl(?:y|ie)|mean|meant|write|written"
    r"|wrote|read|run|ran|test|evaluat|benchmark|translat|carr(?:y|ie)|reflect|represent|indicat|show|demonstrat"
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
    r"|here|be|been|being|is|are|was|were|yet|other|similar|kind|kinds|sort|type|types|wall-clock|model|pr|record)"
)
# A filler is a run of items that may stand between a negation (or a lead-in) and the term it governs:
# function words, measurement words, another term followed by a conjunction, brackets and slashes.
_ITEM = (rf"(?:{_T}(?:\s*(?:,|&|\band\b|\bor\b|\bnor\b))?|\b(?:{_FUNCTION_WORD}|{_QUALIFIER}|{_CLAIM_NOUN})\b"
         r"|[/&()\"'“”‘’])")
_FILL = rf"(?:\s*{_ITEM})*\s*"
_NEG = (r"(?:\bnot|\bno|\bnever|\bnor|\bwithout|\bcannot|n['’]t|\bavoid(?:s|ed|ing)?|\brefrain(?:s|ed|ing)?\s+from"
        r"|\bforbid(?:s|den)?|\bprohibit(?:s|ed)?)")
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

# --- Claim shapes: a serving subject or measure, with a quantity or comparative in its clause -------------------
# A paraphrase names no vocabulary term ("Chat replies now arrive 30% sooner for users", "延迟降低30%",
# "The model answers twice as fast"); its shape gives it away: who is served or what they get (users,
# replies, inference, cost) or a serving measure (latency, throughput, what is served per request),
# changed by a quantity or compared. A measure whose scope is a kernel, a memory, a route or a pass
# ("DRAM throughput 0.44%", "内核耗时 12 ms", "one program serves 4 heads") is kernel-level; a subject never is.

_LATIN = r"A-Za-z\u00c0-\u024f"
_BEGIN = rf"(?<![{_LATIN}])"  # a Latin word starts here (CJK, digits or punctuation may stand before)
_END = rf"(?![{_LATIN}])"  # a Latin word ends here (CJK may follow directly: "2x更快")
_NOT_LEVEL = rf"(?!{_H}*level{_END})"  # "serving-level result", "user-level claims": talk about claims
# "serving shapes", "serving batch sizes": the setting a kernel is measured in, not what serving gets
_NOT_SETTING = (rf"(?!{_H}+(?:shapes?|batch(?:es)?|batch{_H}+sizes?|sizes?|regimes?|configs?|configurations?"
                rf"|settings?|scenarios?|contexts?|lengths?){_END})")

SERVING_SUBJECTS = (
    rf"{_BEGIN}(?:end{_H}*)?users?(?:{_H}*(?:facing|visible|perceived|side))?{_END}"
    rf"(?!{_H}*(?:space|code|guides?|names?|ids?){_END}){_NOT_LEVEL}"
    rf"|{_BEGIN}(?:customers?|chat(?:s|bots?)?|repl(?:y|ies)|inference|wall{_H}*clock){_END}{_NOT_LEVEL}"
    rf"|{_BEGIN}responses?{_END}(?!{_H}+to{_END}){_NOT_LEVEL}"
    rf"|{_BEGIN}per{_H}+(?:user|reply|response|conversation){_END}"
    rf"|{_BEGIN}(?:tokens?|texts?|words?|outputs?|repl(?:y|ies)|responses?){_H}+generation{_END}"
    rf"|{_BEGIN}generat(?:ion|ed|ing){_H}+(?:rate|speed|time|words?|tokens?|text|repl(?:y|ies)|responses?"
    rf"|outputs?){_END}"
    rf"|{_BEGIN}words?{_H}+(?:per|a){_H}+(?:second|sec|minute){_END}"
    rf"|{_BEGIN}models?(?:['’]s)?{_H}+(?:answers?|responds?|repl(?:y|ies)|generates?|outputs?|responses?|speed){_END}"
    rf"|{_BEGIN}(?:inference|hosting|deployment|operating|cloud|gpu|serving){_H}+costs?{_END}"
    rf"|{_BEGIN}costs?{_H}+per{_H}+(?:token|request|query|user|reply|response|million){_END}"
    # German, Spanish, French
    rf"|{_BEGIN}(?:antwortzeit(?:en)?|reaktionszeit(?:en)?|wartezeit(?:en)?|(?:be)?nutzer(?:innen|n|s)?|anwender(?:n|s)?"
    rf"|antworten|inferenz|kosten){_END}"
    rf"|{_BEGIN}(?:usuari[oa]s?|respuestas?|inferencia|tiempos?{_H}+de{_H}+(?:respuesta|espera)|cost[oe]s?"
    rf"|por{_H}+(?:solicitud|petici[oó]n|consulta)){_END}"
    rf"|{_BEGIN}(?:utilisat(?:eur|rice)s?|r[ée]ponses?|inf[ée]rence|temps{_H}+de{_H}+r[ée]ponse|co[uû]ts?"
    rf"|par{_H}+requ[êe]te){_END}"
    # Chinese, Japanese
    r"|用户|客户|每\s*(?:个|次)?\s*(?:请求|查询|回复|对话)|回复|响应|推理|服务|成本|对话|聊天"
    r"|(?:生成|输出|解码)\s*(?:速度|速率|时间|耗时)|模型\s*(?:的)?\s*(?:响应|回答|生成|输出|速度)"
    r"|ユーザー?|利用者|推論|応答|返答|チャット|コスト|生成(?:速度|時間)|リクエスト(?:あたり|当たり|ごと)"
)
SERVING_MEASURES = (
    rf"{_BEGIN}serv(?:e|es|ed|ing){_END}{_NOT_LEVEL}{_NOT_SETTING}|{_BEGIN}per{_H}+(?:request|query|prompt){_END}"
    rf"|{_BEGIN}(?:latenc(?:y|ies)|throughput|response{_H}+times?|wait(?:ing)?{_H}+times?"
    rf"|time{_H}+to{_H}+(?:answer|respond|reply)){_END}"
    rf"|{_BEGIN}(?:latenz(?:en)?|durchsatz|latencias?|latences?|d[ée]bit){_END}"
    r"|延迟|时延|吞吐|耗时|等待时间|レイテンシ|遅延|スループット|待ち時間"
)
CHANGES = (
    rf"(?<![{_LATIN}\d.])\d[\d.,]*\s*(?:%|％|‰|[x×]{_END}|倍|fold{_END}|-fold{_END}|times{_END}|percent{_END}"
    rf"|per\s*cent{_END}|prozent{_END}|por\s*ciento{_END}|pour\s*cent{_END}"
    rf"|(?:ms|µs|μs|us|ns|s|secs?|seconds?|milliseconds?|tok/s|tokens?/s)(?![{_LATIN}/])|秒|毫秒|ミリ秒)"
    r"|[一两二三四五六七八九十半几数]\s*倍"
    rf"|{_BEGIN}(?:twice|thrice|half|halv(?:e|es|ed|ing)|doubl(?:e|es|ed|ing)|tripl(?:e|es|ed|ing)|quadrupl(?:e|es|ed)"
    rf"|sooner|faster|quicker|slower|cheaper|less|fewer|lower|higher|shorter){_END}(?!{_H}+(?:bounds?|limits?){_END})"
    rf"|{_BEGIN}(?:doppelt|halb(?:iert)?|verdoppelt|schneller|weniger|niedriger|h[öo]her|k[üu]rzer|sinkt|steigt"
    rf"|doble|mitad|r[áa]pid[oa]s?|menos|m[áa]s|baja|sube|reduce|disminuye|aumenta"
    rf"|deux{_H}+fois|moiti[ée]|rapide|moins|baisse|r[ée]duit){_END}"
    r"|一半|翻倍|减半|更快|更低|更少|快了|慢了|降低|减少|缩短|提升|提高|加快|下降|增加"
    r"|半分|短縮|削減|向上|速く|高速化|低下|増加"
)
_SUBJECT = re.compile(SERVING_SUBJECTS, re.IGNORECASE)
_MEASURE = re.compile(SERVING_MEASURES, re.IGNORECASE)
_CHANGE = re.compile(CHANGES, re.IGNORECASE)
_KERNEL_SCOPE_WORD = (
    rf"(?:{_KERNEL_WORD}|route|pass|programs?|tiles?|warps?|CTAs?|grids?|attention|read|loop|layer|call|caches?|bytes"
    r"|KV|bandwidth|peak|ceiling|floor|occupancy|单遍|切分|路由|程序|层|峰值)")
_KERNEL_SCOPE = re.compile(rf"{_KERNEL_SCOPE_WORD}[^.;!?。！？；|]{{0,24}}$", re.IGNORECASE)
_KERNEL_AFTER = re.compile(
    rf"^(?:{_H}*(?:bound|hiding|stalls?)\b|\s*(?:受限|隐藏)"
    rf"|\s+(?:of|in|on|for|at)\s+(?:[\w-]+\s+){{0,3}}?{_KERNEL_SCOPE_WORD})",
    re.IGNORECASE)


def claim_pattern(extra_terms: Iterable[str] = ()) -> re.Pattern:
    """The claim vocabulary, plus `extra_terms`: literal phrases whose spaces and hyphens match any run of either."""
    extra = []
    for phrase in extra_terms:
        phrase = normalise_text(phrase).strip()
        words = [re.escape(word) for word in re.split(r"[\s\-]+", phrase) if word]
        if not words:
            continue
        start = r"\b" if phrase[0].isascii() and phrase[0].isalnum() else ""
        end = r"\b" if phrase[-1].isascii() and phrase[-1].isalnum() else ""
        extra.append(start + rf"{_H}+".join(words) + end)
    return re.compile("|".join([_FIRST_CHAR + f"(?:{CLAIM_TERMS})", *extra]), re.IGNORECASE)


def normalise_text(text: str) -> str:
    return "".join(normalise_char(char) for char in text)


_DEFAULT = claim_pattern()


def clauses(text: str):
    """(start, end) of each clause of a rendered block; a clause ends at a sentence end or a contrastive joint."""
    start = 0
    for match in _CLAUSE_END.finditer(text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


def _is_kernel_metric(term: str, before: str, after: str) -> bool:
    """吞吐 or 时延 of a memory or kernel ("DRAM 吞吐", "kernel 时延"), or "…受限" (bound): a kernel metric."""
    return "".join(term.split()) in _KERNEL_METRIC_TERMS and bool(_KERNEL_METRIC.search(before) or _BOUND.match(after))


def is_excused(masked: str, index: int, quantity_follows: bool = False, under_lead_in: bool = False) -> bool:
    """Whether the term at `masked[index]` (masked clause: every term is one `_T`) is governed by an excuse.

    `quantity_follows`: a quantity stands after the term in its sentence, which rules out E3 and E4.
    `under_lead_in`: the clause is under a heading that is itself a lead-in ("## Follow-ups").
    """
    before = masked[max(0, index - _WINDOW):index]
    after = masked[index + 1:index + 1 + _WINDOW]
    if _E1_VERB_BEFORE.search(before):
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


def claims_in_block(block: ProseBlock, pattern: re.Pattern = _DEFAULT):
    """(line, col, term) of the first unexcused claim of each clause of a prose block.

    A clause's claim is its first vocabulary term that no excuse covers; failing that, its
    claim shape (`shape_claim`).
    """
    text = block.text
    found = [match for match in pattern.finditer(text)
             if not _is_kernel_metric(match.group(0), text[max(0, match.start() - 16):match.start()],
                                      text[match.end():match.end() + 8])]
    concepts = serving_concepts(text)
    if not found and not concepts:
        return
    terms, concepts, changes = _InTextOrder(found), _InTextOrder(concepts), _InTextOrder(_CHANGE.finditer(text))
    sentence_ends = [match.start() for match in _SENTENCE_END.finditer(text)] + [len(text)]
    under_lead_in = bool(_LEAD_IN_HEADING.match(block.heading))
    for start, end in clauses(text):
        sentence_end = sentence_ends[bisect_left(sentence_ends, end)]
        claim = (_term_claim(text, start, end, terms.within(start, end), sentence_end, under_lead_in)
                 or shape_claim(text, start, end, concepts.within(start, end), changes.within(start, end),
                                under_lead_in))
        if claim is not None:
            line, col = block.position(claim.start())
            yield line, col, claim.group(0)


class _InTextOrder:
    """Matches in text order, found by the span they start in."""

    def __init__(self, matches: Iterable[re.Match]):
        self.matches = list(matches)
        self.starts = [match.start() for match in self.matches]

    def within(self, start: int, end: int) -> list[re.Match]:
        """The matches that start in [start, end)."""
        return self.matches[bisect_left(self.starts, start):bisect_left(self.starts, end)]


def _masked(text: str, start: int, end: int, terms: list[re.Match], blanks=()) -> tuple[str, list[int]]:
    """The clause text[start:end] with every term as one `_T` (and the `blanks` spans as spaces),
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
        pieces.append(_T)
        length += 1
        kept = match.end()
    pieces.append("".join(chars[kept - start:]))
    return "".join(pieces), marks


def _term_claim(text: str, start: int, end: int, terms: list[re.Match], sentence_end: int,
                under_lead_in: bool) -> re.Match | None:
    """The first vocabulary term of the clause [start, end) that no excuse covers."""
    if not terms:
        return None
    masked, marks = _masked(text, start, end, terms)
    for match, mark in zip(terms, marks):
        quantity_follows = bool(_QUANTITY.search(text, match.end(), min(sentence_end, match.end() + _WINDOW)))
        if not is_excused(masked, mark, quantity_follows, under_lead_in):
            return match
    return None


def serving_concepts(text: str) -> list[re.Match]:
    """Serving subjects, and the serving measures whose scope is not a kernel, memory, route or pass, in text order."""
    measures = [match for match in _MEASURE.finditer(text)
                if not (_KERNEL_SCOPE.search(text, max(0, match.start() - 40), match.start())
                        or _KERNEL_AFTER.match(text[match.end():match.end() + 40]))]
    found = sorted(list(_SUBJECT.finditer(text)) + measures, key=lambda match: match.start())
    return [match for index, match in enumerate(found) if not index or match.start() >= found[index - 1].end()]


def shape_claim(text: str, start: int, end: int, concepts: list[re.Match], changes: list[re.Match],
                under_lead_in: bool = False) -> re.Match | None:
    """A claim by its shape: a serving concept (`serving_concepts`) with a quantity or comparative
    (`CHANGES`) in the clause [start, end); `concepts` and `changes` are those of the clause.

    "Chat replies now arrive 30% sooner for users", "延迟降低30%", "The model answers twice as fast".
    The clause's first concept stands for the claim, and the excuses of `is_excused` apply to it,
    reading the clause without its quantities ("we do not claim 30% faster replies").
    """
    if not concepts or not changes:
        return None
    first = concepts[0]
    masked, marks = _masked(text, start, end, concepts, blanks=[change.span() for change in changes])
    quantity_follows = any(change.start() >= first.end() for change in changes)
    return None if is_excused(masked, marks[0], quantity_follows, under_lead_in) else first


def find_claims_in_text(text: str, first_line: int = 1, extra_terms: Iterable[str] = ()):
    """(line, col, term) of every end-to-end claim in Markdown text whose first line is `first_line`.

    One finding per clause: its first claim term that no excuse covers, else its claim shape.
    Link and image titles and the title, alt and aria-label attributes of raw HTML are read as
    prose too (`shown_attributes`): a reader sees them. `extra_terms` adds literal phrases to the
    vocabulary.
    """
    pattern = claim_pattern(extra_terms) if extra_terms else _DEFAULT
    for block in prose_blocks(text, first_line) + shown_attributes(text, first_line):
        yield from claims_in_block(block, pattern)


_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HTML_ATTRIBUTE = re.compile(r"""(?<![\w-])(?:title|alt|aria-label)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def shown_attributes(text: str, first_line: int = 1) -> list[ProseBlock]:
    """Text a reader sees beside the flow of the page: link and image titles (tooltips, also from a
    reference definition) and the title, alt and aria-label attributes of raw HTML; each one block."""
    source = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    line_starts = tuple([0] + [match.end() for match in re.finditer("\n", source)])
    if not parser_reads(source):
        return []  # read line by line by `prose_blocks`, titles and attributes included
    seen, blocks = set(), []
    for value, block_start in _attribute_values(parsed_tokens(source), line_starts):
        at = source.find(value, block_start)
        key = (value, at)
        if not value.strip() or key in seen:
            continue
        seen.add(key)
        blocks.append(_attribute_block(value, at if at >= 0 else block_start, at >= 0, line_starts, first_line))
    return blocks


def _attribute_values(tokens, line_starts: tuple[int, ...]):
    """(value, source offset of its block) of every title and HTML title/alt/aria-label attribute."""
    for token in tokens:
        block_start = line_starts[min(token.map[0], len(line_starts) - 1)] if token.map else 0
        if token.type == "html_block":
            yield from ((value, block_start) for value in _html_attributes(token.content))
        for child in token.children or []:
            if child.type in ("link_open", "image") and child.attrGet("title"):
                yield str(child.attrGet("title")), block_start
            elif child.type == "html_inline":
                yield from ((value, block_start) for value in _html_attributes(child.content))


def _html_attributes(html_text: str) -> list[str]:
    """The title, alt and aria-label values of the tags in raw HTML (comments are not read)."""
    return [match.group(1) if match.group(1) is not None else match.group(2)
            for match in _HTML_ATTRIBUTE.finditer(_HTML_COMMENT.sub("", html_text))]


def _attribute_block(value: str, offset: int, spread: bool, line_starts: tuple[int, ...],
                     first_line: int) -> ProseBlock:
    """An attribute's text as one block of prose; with `spread`, its characters map to `offset` onwards."""
    chars, offsets = [], []
    for index, char in enumerate(value):
        normal = normalise_char(char)
        chars.append(normal)
        offsets.extend([offset + index if spread else offset] * len(normal))
    return ProseBlock("attribute", "".join(chars), tuple(offsets or [offset]), line_starts, first_line)


def find_claims(record, extra_terms: Iterable[str] = ()):
    """(line, col, term) of every end-to-end claim in the record's title and body.

    The title is read as one line of prose at its front-matter line: it heads the
    generated PR description and the site's page, so a claim there is a claim.
    """
    title = record.get("title")
    if isinstance(title, str) and title.strip():
        line = record.line_of("title")
        yield from ((line, col, term) for _, col, term in find_claims_in_text(title.replace("\n", " "), 1, extra_terms))
    yield from find_claims_in_text(record.body, record.body_start_line, extra_terms)
