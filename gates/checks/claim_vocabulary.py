"""The words of end-to-end claims: the metrics and units serving and training benchmarks print.

Three kinds of word make a sentence a candidate claim (`gates.checks.claim_detection` then
asks whether it asserts a result, in which mood, about what):

- **Metrics** (`METRIC_TERMS`) are end-to-end by definition: what vLLM's and SGLang's serving
  benchmarks print (TTFT, TPOT, ITL, E2EL, request / output token / total token throughput,
  req/s, tok/s), what TensorRT-LLM and llama.cpp print (tokens/s/gpu, `t/s`, `pp512`,
  `tg128`), MLPerf Inference (samples/s, queries/s), training runs (iteration time, step time,
  samples/s, MFU), and the same in Chinese (首字延迟, 每秒请求数, 出字速度, 迭代时间 ...) and
  Japanese (最初のトークンまでの時間 ...).
- **Scope words** (`SCOPE_TERMS`: end-to-end, e2e, 端到端 ...) say "end to end" of something;
  what that something is decides the level: "end-to-end (forward + backward)" of a kernel is
  kernel-level.
- **Serving subjects and measures** (`SERVING_SUBJECTS`, `SERVING_MEASURES`): users, replies,
  the model, a model by name, production; latency, throughput. A measure scoped to a kernel,
  memory, route or pass is kernel-level.

Every ASCII word is delimited against ASCII letters and digits only, so a term written right
after CJK text ("改动后TTFT下降", "压测下RPS提升") is still a word.

`RESULTS` are the words that state a result of a change: a quantity (30%, 2x, 12 ms, 1.4 倍,
four-fold), a comparative (faster, lower, 更快), a change (improves, drops, 提升, 降低, 短縮),
or a gain noun (speedup, improvement, regression, 收益).
"""

from __future__ import annotations

import re
from typing import Iterable

from gates.checks.term_pattern import ASCII_BOUNDARY

_B = ASCII_BOUNDARY  # a word boundary between ASCII words only
_H = r"[\s\-\u2010\u2011]"  # a hyphen or space between the words of a term
_LATIN = r"A-Za-z\u00c0-\u024f"
_BEGIN = rf"(?<![{_LATIN}])"  # a Latin word starts here (CJK, digits or punctuation may stand before)
_END = rf"(?![{_LATIN}])"  # a Latin word ends here (CJK may follow directly: "2x更快")
LATIN_WORD_START = _BEGIN


def _ascii_words(pattern: str) -> str:
    r"""`\b` read as a boundary between ASCII word characters only (CJK may touch a term)."""
    return pattern.replace(r"\b", _B)


_PER_SECOND = r"\s*/\s*s(?:ec(?:ond)?s?)?\b"
METRIC_TERMS = _ascii_words(
    r"\btrain_(?:runtime|samples_per_second|steps_per_second)\b"
    r"|\b(?:TTFTs?|TTFBs?|TPOTs?|ITLs?|E2ELs?)\b(?![\-\s]+(?:critical|sensitive|relevant|dominated|heavy)\b)"
    # "makespan", "time-to-first-audio", "the wait for the first word", "12.7s/answer", "900 requests a minute"
    rf"|\bmakespan\b|\btime{_H}+to{_H}+first{_H}+(?:audio|frame|chunk|word)\b|\bwait{_H}+for{_H}+(?:the{_H}+)?first{_H}+(?:word|token|byte)\b"
    r"|\bfirst\s+token\s+after(?=\s*[~≈]?\d)|\b(?:s|ms|sec)\s*/\s*(?:answer|reply|response|request|image)\b"
    rf"|\bwall{_H}*(?:clock{_H}+)?time{_H}+for{_H}+[\d,]+{_H}+(?:new{_H}+)?tokens\b|\bfirst{_H}+visible{_H}+(?:text|tokens?|words?)\b"
    rf"|\brequests?{_H}+(?:a|per|each){_H}+minute\b|\breq(?:uest)?s?\s*/\s*min\b|\btok(?:en)?s?{_H}+generated{_H}+per{_H}+sec(?:ond)?\b|\bQPS\b|\bRPS\b|\bTPS\b|\bgoodput\b|\bMFU\b"
    rf"|\btime{_H}+to{_H}+first{_H}+byte\b|\bepoch{_H}+times?\b|\btime{_H}+per{_H}+epoch\b"
    rf"|\btok(?:en)?s?{_H}+per{_H}+s\b|\bmodel{_H}+steps?(?:{_H}+times?)?\b|\b(?:s|ms|sec)\s*/\s*(?:iter|it|step)\b"
    rf"|\b(?:faster|slower|quicker){_H}+first{_H}+tok(?:en)?\b|\bp(?:50|90|95|99)\b(?=(?:[^.;|]|\.(?=\d)){{0,30}}?\d\s*(?:ms|s)\b)"
    rf"|\b(?:seconds?|s){_H}+per{_H}+(?:iteration|step|image)\b|\btime{_H}*to{_H}*train\b|\bGPU{_H}*hours?\b"
    rf"|\bimages?\s*/\s*s(?:ec)?\b|\bimages?{_H}+per{_H}+sec(?:ond)?\b|\bsentences?\s*/\s*s\b"
    rf"|\bsteps?\s*/\s*s(?:ec)?\b|\bsteps?{_H}+per{_H}+sec(?:ond)?\b|\btime{_H}+to{_H}+convergence\b|\bqueu(?:e|ing|eing){_H}+delays?\b"
    rf"|\b(?:ms|s|sec|seconds?|milliseconds?){_H}+to{_H}+first{_H}+(?:output{_H}+)?tok(?:en)?\b"
    rf"|\bfirst{_H}*tok(?:en)?{_H}+wait\b|\btok(?:en)?s?{_H}+per{_H}+GPU{_H}*hours?\b"
    rf"|\btime{_H}+from{_H}+(?:[\w\-]+{_H}+){{1,4}}?to{_H}+(?:seeing{_H}+)?(?:the{_H}+)?(?:first{_H}+)?(?:text|tok(?:en)?|output|words?)\b"
    rf"|\btime{_H}+to{_H}+first{_H}+tok(?:en)?s?\b|\bfirst{_H}*tok(?:en)?{_H}+(?:time|latency)\b"
    rf"|\b(?:p\d{{2}}{_H}+)?first{_H}*tok(?:en)?\b(?=\s*(?:\((?:ms|s|sec)\)|\|))|\bepoch\b(?=\s*\((?:s|sec|min|mins|h|hours?)\))"
    rf"|\blatency{_H}+(?:to|until|before){_H}+(?:the{_H}+)?first{_H}+tok(?:en)?\b"
    rf"|\btime{_H}+per{_H}+(?:output{_H}+)?tok(?:en)?s?\b|\btime{_H}+between{_H}+tokens\b"
    rf"|\b(?:(?:inter|between|per|first|next|output){_H}*)?tok(?:en)?s?{_H}+(?:(?:decode|decoding|generation){_H}+)?latenc(?:y|ies)\b"
    rf"|\btok(?:en)?s?{_PER_SECOND}(?:\s*/\s*(?:user|u|gpu|req(?:uest)?)\b)?"
    rf"|\bt/s(?:/u)?\b|\btok(?:en)?s?{_H}+(?:per|a){_H}+sec(?:ond)?s?\b"
    rf"|\b(?:ms|s|sec)\s*/\s*tok(?:en)?\b|\bms{_H}+per{_H}+tok(?:en)?\b"
    rf"|\breq(?:uest)?s?{_PER_SECOND}|\brequests?{_H}+(?:per|each|every|a){_H}+sec(?:ond)?\b"
    rf"|\b(?:samples?|quer(?:y|ies)|sequences?|seqs?|it){_PER_SECOND}"
    rf"|\b(?:samples?|quer(?:y|ies)|sequences?){_H}+per{_H}+sec(?:ond)?\b"
    rf"|\b(?:pp|tg)\s?\d{{2,5}}\b|\bprompt{_H}+(?:processing|eval(?:uation)?{_H}+(?:time|rate))\b|\beval{_H}+rate\b"
    rf"|\b(?:request|serving|response|user{_H}*(?:facing|perceived|visible|side)|end{_H}*user|generation|inference"
    rf"|tail|queu(?:e|ing|eing)){_H}+latenc(?:y|ies)\b"
    rf"|\bp(?:50|90|95|99|99\.9|999)\b(?:{_H}+[a-z]+){{0,2}}?{_H}+latenc(?:y|ies)\b"
    rf"|\bp(?:50|90|95|99|99\.9|999)\s+(?:of|for|across)\s+(?:all\s+|the\s+)?requests\b"
    rf"|\b(?:serving|inference|generation|request|token|system|decode|decoding|prefill|output|model|training"
    rf"|offline|server){_H}+throughput\b"
    rf"|\b(?:iteration|step|training{_H}+step){_H}+times?\b|\btime{_H}+per{_H}+(?:iteration|step)\b"
    rf"|\b(?:latency|throughput){_H}+(?:speed{_H}?ups?|gains?|improvements?|wins?|reductions?|boosts?)\b"
    rf"|\bspeed{_H}?ups?\s+(?:in|of|on)\s+(?:latency|throughput)\b"
    rf"|\bmodel{_H}*level\s+(?:[a-z]+\s+)?(?:speed{_H}?ups?|gains?|improvements?|throughput|latency)\b"
    rf"|\b(?:inference|generation|serving|decoding){_H}+speed(?:{_H}?ups?)?\b"
    r"|\bfaster\s+(?:inference|serving|generation|responses?|decoding|completions?)\b"
) + (
    r"|首\s*(?:个\s*)?(?:字|词|token|tok|包)\s*(?:的\s*)?(?:延迟|时延|时间|耗时|响应时间|latency)"
    r"|(?:每|单)\s*(?:个\s*)?(?:输出\s*)?(?:字|词|token|tok)\s*(?:的\s*)?(?:延迟|时延|时间|耗时)"
    r"|(?:token|tok|词|字)\s*间\s*(?:的\s*)?(?:延迟|时延|间隔)"
    r"|每秒\s*(?:能|可以?)?\s*多?\s*(?:生成|输出|产出|处理|解码|完成|出|吐出?)?\s*(?:[\d.,]+\s*[%％]?\s*(?:个|条)?\s*)?(?:的\s*)?"
    r"(?:token|tok|词|字|请求|查询|样本)"
    r"|(?:token|tok|请求|样本)s?\s*(?:数)?\s*/\s*秒"
    r"|(?:推理|生成|解码|服务|出字|训练)\s*(?:速度|加速|提速|性能|延迟|时延)"
    r"|(?:请求|用户侧?|用户感知|响应|服务)\s*(?:的\s*)?(?:延迟|时延)"
    r"|p\s*(?:50|90|95|99|99\.9)\s*(?:请求)?\s*(?:延迟|时延)"
    r"|首\s*(?:个\s*)?token(?=\s*(?:从|由|降|减|提|快|慢|缩))|(?:训练|微调)\s*(?:时间|耗时)"
    r"|第一个\s*(?:字|token)\s*(?:出现|返回)|生成\s*[\d,]+\s*(?:个)?\s*token\s*(?:的)?\s*(?:用时|耗时)|跑完\s*(?:MMLU|C-?Eval|CMMLU|GSM8K|HumanEval)"
    r"|首\s*(?:字|token)(?=\s*[(（](?:ms|s|毫秒|秒)[)）])"
    r"|(?:迭代|单步|每步)\s*(?:时间|耗时)|(?:每|单|一)\s*(?:个)?\s*(?:step|步|迭代)\s*(?:的)?\s*(?:时间|耗时)"
    r"|(?:解码|推理|服务|输出|请求|训练|生成|预填充|prefill|decode)\s*吞\s*吐|吞\s*吐|时\s*延"
    r"|最初の\s*トークン(?:まで)?の?\s*(?:時間|遅延|レイテンシ)|初回\s*トークン|トークン\s*/\s*秒|毎秒\s*トークン"
    r"|ファーストトークン"
)
SCOPE_TERMS = _ascii_words(
    rf"\bE2E\b|\bend{_H}*to{_H}*end\b"
    rf"|\bende{_H}*zu{_H}*ende\b|\bde{_H}+extremo{_H}+a{_H}+extremo\b|\bde{_H}+bout{_H}+en{_H}+bout\b"
) + r"|エンドツーエンド|端\s*到\s*端"

_NOT_LEVEL = rf"(?!{_H}*level{_END})"  # "serving-level result", "user-level claims": talk about claims
# "serving shapes", "serving batch sizes": the setting a kernel is measured in, not what serving gets
_NOT_SETTING = (rf"(?!{_H}+(?:shapes?|batch(?:es)?|batch{_H}+sizes?|sizes?|regimes?|configs?|configurations?"
                rf"|settings?|scenarios?|contexts?|lengths?){_END})")
MODEL_NAMES = (rf"(?<![\w\-])(?:llama|qwen|mistral|mixtral|deepseek|gemma|falcon|baichuan|chatglm|internlm"
               rf"|olmo|command{_H}?r|vicuna|(?:phi|gpt|yi|opt|glm|bloom)(?=[\-\s]?\d))"
               rf"(?:[\-\s]?\d+(?:\.\d+)?[bBmMkK]?)?(?:[\-.](?:\d+x\d+[bB]?|\d+(?:\.\d+)?[bBmM]?|v\d+(?:\.\d+)?|instruct|chat|base|it"
               rf"|moe|coder|fp8|awq|mini|small|medium|large|xl|tiny|nano|pro|flash|turbo|lite|vision|distill))*(?![\w\-])"
               # a model named by its size: "the 8B model", "a 70B-parameter model"
               rf"|(?<![\w\-.])\d+(?:\.\d+)?[bB](?:{_H}*param(?:eter)?s?)?{_H}+models?(?![\w\-])")

# Serving engines: what they do is serve a model, so a result of theirs is end to end
ENGINE_NAMES = (r"(?<![\w\-])(?:vllm|sglang|tgi|text-generation-inference|tensorrt-llm|trt-llm|llama\.cpp|ollama|lmdeploy"
                r"|mlc-llm|exllama(?:v2)?|deepspeed-mii|lightllm|aphrodite)(?![\w\-])")

# A step of a training run: "each training step", "an epoch", "every iteration" (a loop's iterations in a
# kernel's world are not one: `gates.checks.claim_subject`)
TRAINING_STEPS = (rf"(?<!%\sof\s){_BEGIN}(?:(?:each|every|one|a|an|the{_H}+same){_H}+(?:(?:full|whole|single|complete){_H}+)?"
                  rf"(?:(?:PPO|DPO|SFT|GRPO|RLHF|RL){_H}+)?(?:training{_H}+)?"
                  rf"(?:iteration|step|epoch)|the{_H}+training{_H}+(?:iterations?|steps?|epochs?)"
                  rf"|epoch{_H}+\d+(?={_H}+(?:took|takes|ran|runs|finished|finishes|completed|completes){_END})"
                  rf"|(?:PPO|DPO|SFT|GRPO|RLHF){_H}+(?:iterations|steps|epochs|rollouts)){_END}")

# What follows a serving or training entity that a result is stated of: "… is 1.8x faster", "… answers 30% sooner",
# "the service's p99", "the model, not only the kernel, is …", "the model as a whole runs …"
_SUBJECT_OF_A_RESULT = (
    rf"(?=(?:['’]s)?(?:,[^,.;]{{1,40}},|{_H}+as{_H}+a{_H}+whole)?{_H}+(?:(?:now|still|also|then){_H}+)?"
    rf"(?:(?:(?:should|would|will|could|might|may){_H}+be|is|was|are|were|runs?|ran|gets?|got|came|comes?)"
    rf"(?:{_H}+[\w\-]+){{0,3}}?{_H}+(?:[+\-~≈]?\d|twice|half|too"
    rf"|(?:[a-z]+er|up|down){_END})"
    rf"|(?:responds?|responded|answers?|answered|handles?|handled|serves?|served|finish(?:es|ed)?|complet(?:es|ed)"
    rf"|process(?:es|ed)?|becomes?|became|feels?|p\d+|latency|throughput|tail|\d[\d.,]*\s*(?:x|×|%)){_END}))"
)
SERVING_SUBJECTS = (
    rf"{_BEGIN}(?:end{_H}*)?users?(?:{_H}*(?:facing|visible|perceived|side))?{_END}"
    rf"(?!{_H}*(?:space|code|guides?|names?|ids?){_END}){_NOT_LEVEL}"
    rf"|{_BEGIN}(?:customers?|chat(?:s|bots?)?|repl(?:y|ies)|inference|wall{_H}*clock"
    rf"|(?<!launch to )(?<!start to )(?<!submission to )(?<!issue to )completions?){_END}"
    rf"{_NOT_LEVEL}{_NOT_SETTING}"
    rf"|{_BEGIN}responses?{_END}(?!{_H}+to{_END}){_NOT_LEVEL}"
    rf"|{_BEGIN}per{_H}+(?:user|reply|response|conversation){_END}"
    rf"|{_BEGIN}(?:(?:tokens?|texts?|words?|outputs?|repl(?:y|ies)|responses?){_H}+)?generation{_END}"
    rf"(?!{_H}+(?:config|configs|parameters?|params|args|arguments|options?|kwargs|utils?|code|tests?|tasks?|mode"
    # "generation-phase attention": a kernel of the generation phase
    rf"|(?:phase|stage){_H}+(?:[\w\-]+{_H}+)?(?:attention|kernels?|gemms?|matmuls?|ops?|mlp|mha|mqa|gqa|mla)){_END})"
    rf"|{_BEGIN}generat(?:ion|ed|ing|es?){_H}+(?:rate|speed|time|words?|tokens?|text|repl(?:y|ies)|responses?"
    rf"|outputs?){_END}"
    rf"|{_BEGIN}words?{_H}+(?:per|a){_H}+(?:second|sec|minute){_END}"
    # "generating a 1,000-token answer", "the 1,000-request benchmark", "our eval over 5k prompts": a model's workload
    rf"|{_BEGIN}generat(?:e|es|ed|ing){_H}+(?:(?:an?|the|one){_H}+)?(?:[\d.,]+\s*[kK]?{_H}*tok(?:en)?s?{_H}+)?"
    rf"(?:answers?|repl(?:y|ies)|responses?|completions?|outputs?|texts?|essays?|summar(?:y|ies)){_END}"
    rf"|(?<![\w.,])[\d.,]+\s*[kKM]?{_H}*(?:prompts?|requests?|conversations?|quer(?:y|ies)|questions?){_H}+"
    rf"(?:benchmark|run|eval(?:uation)?|replay|trace|workload|sweep|test{_H}+set){_END}"
    rf"|{_BEGIN}eval(?:uation)?s?(?:{_H}+(?:run|job|suite))?{_H}+(?:over|on|of|across){_H}+[\d.,]+\s*[kKM]?{_H}*"
    rf"(?:prompts?|requests?|questions?|samples?|conversations?|tasks?){_END}"
    rf"|{_BEGIN}(?:the{_H}+)?(?:whole|entire|full|overall){_H}+(?:model|pipeline|system|server|stack){_END}"
    rf"|{_BEGIN}models?(?:['’]s)?{_H}+(?:answers?|responds?|repl(?:y|ies)|generates?|outputs?|responses?|speed"
    rf"|runs?|decodes?){_END}"
    rf"|{_BEGIN}(?:the{_H}+|their{_H}+)?first{_H}+(?:output{_H}+)?(?:tokens?|bytes?|chunks?|words?)"
    rf"(?:{_H}+of{_H}+(?:an?|the|each|every){_H}+(?:(?:streamed|streaming|generated){_H}+)?(?:answers?|repl(?:y|ies)|responses?|completions?))?"
    rf"{_H}+(?:(?:now|still){_H}+)?(?:arriv\w*|appear\w*|comes?|returns?|streams?|shows?"
    rf"|is{_H}+(?:returned|streamed|shown)){_END}"
    rf"|{TRAINING_STEPS}"
    # "finishes a typical answer in half the time": a model's workload
    rf"|{_BEGIN}(?:finish(?:es|ed)?|complet(?:es|ed)|writ(?:es|ing)|produc(?:es|ed)){_H}+(?:an?|the|each|every|one){_H}+"
    rf"(?:(?:typical|average|full|whole|complete|long|short){_H}+)?(?:answers?|repl(?:y|ies)|responses?|completions?){_END}"
    # "the rollout phase of RLHF", "GRPO sampling stage": a phase of a training run
    rf"|{_BEGIN}(?:rollout|sampling|generation){_H}+(?:phase|stage)s?{_H}+of{_H}+(?:the{_H}+|our{_H}+)?(?:RLHF|PPO|GRPO|RL)(?![\w\-])"
    rf"|{_BEGIN}(?:RLHF|PPO|GRPO|RL){_H}+(?:rollout|sampling|generation){_H}+(?:phase|stage)s?{_END}"
    rf"|(?<!% of a )(?<!% of the )(?<!% of each )(?<!% of one ){_BEGIN}(?:(?:pre|post)?[\s\-]?training|fine{_H}?tuning|finetuning|rl){_H}+(?:runs?|jobs?|steps?|epochs?|iterations?"
    rf"|time|throughput){_END}"
    r"|(?<!seen )(?<!used )(?<!found )(?<!typical )(?<!common )"
    rf"{_BEGIN}in{_H}+production{_END}(?!{_H}+(?:decode|prefill|shapes?|batch(?:es)?|configs?|traffic{_H}+shapes?){_END})"
    rf"|{_BEGIN}(?:serving|inference){_H}+(?:backend|engine|stack){_END}"
    # "Our assistant answers 1.4x faster", "the RAG service answers in 1.1 s", "throughput of the endpoint": what serves
    r"|(?:(?<=the )|(?<=our )|(?<=this )|(?<=your ))(?:assistant|chatbot|copilot|(?:rag|chat|search|qa)[\s\-]+(?:pipeline|service"
    rf"|app|application|bot|system)){_END}"
    rf"|{_BEGIN}(?:throughput|latency|response{_H}+time|p\d{{2}}){_H}+of{_H}+(?:the|our|this|your){_H}+(?:endpoint|api|service"
    rf"|server|deployment|assistant|chatbot){_END}"
    # "The server is 30% faster", "our endpoint answers 30% more queries": what serves is never a kernel
    r"|(?:(?<=the )|(?<=our )|(?<=this )|(?<=your )|(?<=whole )|(?<=entire )|(?<=patched )|(?<=new ))"
    rf"(?:server|service|api|endpoint|deployment|fleet|cluster){_END}{_SUBJECT_OF_A_RESULT}"
    rf"|{_BEGIN}(?:server|service|endpoint|deployment)(?:{_H}?wide)?(?=\s*:\s*[+\-~≈]?(?:\d|twice|half|[a-z]+er{_END}))"
    rf"|(?<=the )(?:server|service|endpoint|deployment)(?=\s*:\s*[+\-~≈]?(?:\d|twice|half|[a-z]+er{_END}))"
    # "This PR made the model 25% faster", "the patch rendered the server faster", "that launch makes the model …"
    rf"|{_BEGIN}(?:makes?|made|making|render(?:s|ed)?|got|gets)(?:{_H}+(?:both|also))?{_H}+(?:the|our|this|your){_H}+"
    rf"(?:whole{_H}+|entire{_H}+)?(?:model|server|service|api|endpoint|deployment|system){_END}"
    # "Main is now the slower server", "ship the 1.5x faster model", "1.3x faster for the model"
    r"|(?:(?<=faster )|(?<=slower )|(?<=quicker )|(?<=cheaper )|(?<=better )|(?<=worse ))"
    rf"(?:models?|servers?|services?|endpoints?|deployments?|systems?|inference|serving){_END}"
    rf"|{_BEGIN}(?:faster|slower|quicker|cheaper){_H}+for{_H}+(?:the{_H}+)?(?:whole{_H}+)?(?:model|server|service|users?)"
    rf"{_END}(?!['’]s|{_H}+(?:shapes?|layers?|weights?|configs?|dims?){_END})"
    rf"|{_BEGIN}(?:shows?|showed){_H}+up{_H}+(?:for|in){_H}+(?:the{_H}+)?(?:whole{_H}+)?(?:model|server){_END}"
    # "The new kernel makes training 1.3x faster", "makes vLLM serving 25% faster", "makes every epoch 20% shorter"
    rf"|{_BEGIN}(?:makes?|made|making){_H}+(?:(?:vllm|sglang|tgi|our|the){_H}+)?(?:\d+(?:\.\d+)?[bB]{_H}+)?(?:serving|training|inference|fine{_H}?tuning"
    rf"|decode|decoding|prefill|generation"
    rf"|(?:every|each|one){_H}+(?:training{_H}+)?(?:epoch|step|iteration)){_END}"
    rf"|{_BEGIN}(?:answers?|repl(?:y|ies)|responses?|results?){_H}+(?:now{_H}+)?(?:come|comes|came){_H}+back{_END}"
    # "After tuning the launch config, serving is 25% faster": serving with a result of its own
    rf"|{_BEGIN}(?:serving|training|inference|fine{_H}?tuning)(?={_H}+(?:is|was|got|gets|became|becomes|runs?|ran)"
    rf"(?:{_H}+(?:now|also|still|really|actually|roughly|about|indeed|consistently))*{_H}+(?:[+\-~≈]?\d|twice|half|(?:[a-z]+er){_END}))"
    # "2x training speedup", "a 30% decode speed-up": a speedup of what serves or trains
    rf"|{_BEGIN}(?:training|fine{_H}?tuning|inference|decode|decoding|prefill|serving|generation){_H}+speed[\s\-]?ups?{_END}"
    rf"|{_BEGIN}conversations?{_END}(?={_H}+(?:now{_H}+)?(?:feel|felt|are|were|run|finish|complete))"
    rf"|{_BEGIN}agent{_H}+loops?{_END}|{_BEGIN}(?:optimi[sz]er){_H}+steps?{_END}(?!{_H}+(?:micro)?bench)"
    rf"|{_BEGIN}(?:full|one|a|each|every|whole|single){_H}+pass{_H}+over{_H}+the{_H}+(?:[\w.\-]+{_H}+){{0,2}}?"
    rf"(?:(?:training|fine{_H}?tuning|finetuning|sft|pre{_H}?training){_H}+)?(?:data(?:{_H}?set)?|corpus|set){_END}"
    rf"|{_BEGIN}(?:suite|set|run|benchmark|batch){_H}+of{_H}+[\d.,]+\s*[kKM]?{_H}+(?:prompts?|requests?|questions?|conversations?"
    rf"|summar(?:y|ies)|answers?|completions?|documents?|generations?){_END}"
    rf"|{_BEGIN}(?:for{_H}+)?an?{_H}+[\d.,]+{_H}*[kK]?[\-\s]tok(?:en)?{_H}+(?:answer|reply|response|completion|output){_END}"
    # "the demo app streams its answers 1.5x faster", "10000 prompts answered in 2472 s": what serves, serving
    rf"|{_BEGIN}streams?{_H}+(?:its|their|the|our|all){_H}+(?:answers?|repl(?:y|ies)|responses?|outputs?|completions?){_END}"
    rf"|(?<![\w.,])[\d.,]+\s*[kKM]?{_H}+(?:prompts?|requests?|questions?|conversations?){_H}+(?:answered|served|completed|processed){_END}"
    # "the forward pass of the whole network", "our SFT recipe"
    rf"|{_BEGIN}(?:the{_H}+)?(?:whole|entire|full){_H}+(?:network|net){_END}"
    rf"|{_BEGIN}(?:sft|dpo|rlhf|grpo|ppo|training|fine{_H}?tuning|pre{_H}?training){_H}+recipes?{_END}"
    rf"|{_BEGIN}(?:benchmark_serving(?:\.py)?|bench{_H}+serve){_END}"
    # what serves a model by its size: "the 8B endpoint", "each 8B pod", "the 8B replay", "the 8B decode example"
    rf"|(?<![\w.])\d+(?:\.\d+)?[bB]{_H}+(?:chat{_H}+|staging{_H}+)?(?:replay|canary|endpoint|pods?|backend|server|deployment|tier|pool"
    rf"|fleet|replicas?|fine{_H}?tune|finetune|eval|staging|load{_H}+test|decode{_H}+(?:example|loop)|dashboard|answers?"
    rf"|box|rig|nodes?|hosts?|workers?|containers?|machines?|test{_H}+bench|demo(?:{_H}+page)?|(?:[\w\-]+{_H}+)?job){_END}"
    rf"|{_BEGIN}(?:prompts?|documents?|requests?|pages?|questions?|conversations?){_H}+(?:per|an?|each){_H}+(?:second|minute|hour){_END}"
    rf"|{_BEGIN}batch{_H}+job{_H}+over{_H}+[\d.,]+\s*[kKM]?{_H}+(?:documents|prompts|requests|tickets|questions){_END}"
    rf"|{_BEGIN}(?:the{_H}+|our{_H}+)?(?:long|short){_H}*context{_H}+(?:tier|requests?){_END}|(?<![\w.])\d+[kK]{_H}+tier{_END}"
    rf"|{_BEGIN}(?:each|every){_H}+(?:\d+(?:\.\d+)?[bB]{_H}+)?(?:answer|reply|response){_END}"
    rf"|(?<!of the )(?<!in the )(?<!of )(?<!per ){_BEGIN}(?:the{_H}+)?(?:(?:full|whole|example){_H}+decode{_H}+loop|decode{_H}+(?:example|benchmark)s?"
    rf"|decode{_H}+loop(?=\s*(?::|,|{_H}+(?:example|benchmark|now|takes|took|finishes|finished|runs|ran|output|goes|went|from)\b))){_END}"
    rf"|{_BEGIN}(?:whole|entire|full){_H}+(?:decode|decoding|generation){_END}(?!{_H}+(?:kernel|op|pass{_H}+of{_H}+(?!the{_H}+model)))"
    rf"|{_BEGIN}(?:faster|slower|quicker){_H}+at{_H}+(?:decode|decoding|prefill|serving|inference|generation){_END}"
    rf"|(?<![\w.])\d+[kK][\-\s]context{_H}+(?:decod(?:e|ing)|prefill|generation|serving){_END}|(?<![\w.,])[\d,]+{_H}+decode{_H}+steps{_END}"

    rf"|{_BEGIN}(?:generat(?:e|es|ed|ing)|writ(?:e|es|ing){_H}+out|emitt?(?:s|ed|ing)?|produc(?:e|es|ed|ing)|stream(?:s|ed|ing)?){_H}+"
    rf"[\d,]+{_H}+(?:new{_H}+|output{_H}+)?tokens{_END}"
    rf"|{_BEGIN}an?{_H}+[\d,]+{_H}*[kK]?[\-\s]tok(?:en)?{_H}+continuation{_END}"
    rf"|{_BEGIN}(?:text|tokens?|words?|output){_H}+(?:now{_H}+)?starts?{_H}+(?:appearing|streaming|showing){_END}"
    rf"|{_BEGIN}(?:eval(?:uation)?{_H}+harness|lm[\-_]eval(?:uation)?(?:[\-_]harness)?){_END}"
    rf"(?!{_H}+(?:[\w\-]+{_H}+)?(?:accuracy|acc|scores?|pass@\d+|results?|exact{_H}+match|em|f1){_END})"
    rf"|{_BEGIN}(?:done|finished|completed|served|processed|answered){_H}+[\d,]+(?:/[\d,]+)?{_H}+(?:requests|prompts){_END}"
    rf"|{_BEGIN}models?{_H}+(?:now{_H}+)?(?:emits?|produces?|streams?|spits?{_H}+out){_END}"
    # a model's evaluation, an image or speech model's work, an app that serves: "the MMLU eval", "SDXL takes 2.1 s per
    # image", "Whisper RTF", "the voice assistant starts speaking", "calls to our OpenAI-compatible API", "our summariser"
    rf"|{_BEGIN}(?:mmlu|gsm8k|humaneval|c{_H}?eval|cmmlu|mt{_H}?bench|alpacaeval|hellaswag|truthfulqa|longbench|ifeval|math{_H}?500"
    rf"|gpqa|livecodebench|swe{_H}?bench)(?:{_H}+(?:eval(?:uation)?|pass|run|suite|benchmark|prompts))?{_END}"
    rf"(?!{_H}+(?:accuracy|acc|scores?|pass@\d+|results?|numbers|exact{_H}+match|em|f1){_END})"
    rf"|{_BEGIN}(?:sdxl|stable{_H}+diffusion|flux|whisper(?:{_H}?large(?:{_H}?v\d)?)?|large{_H}?v[23](?:{_H}?turbo)?|wan"
    rf"|hunyuan(?:video)?){_END}(?!['’]s{_H}+(?:encoder|decoder|stem|attention|layers?|blocks?|mlp))"
    rf"(?!{_H}+(?:transformer{_H}+)?(?:blocks?|layers?|attention|encoder|decoder)){_END}"
    rf"|{_BEGIN}transcrib(?:e|es|ed|ing){_H}+(?:the|an?|our|each|one){_H}+(?:[\w\-.]+{_H}+){{0,3}}?"
    rf"(?:samples?|audio|files?|recordings?|podcasts?|episodes?|meetings?|hours?){_END}"
    rf"|{_BEGIN}RTF{_END}|{_BEGIN}real{_H}?time{_H}+factor{_END}"
    rf"|{_BEGIN}(?:voice|coding|code{_H}?review|support|customer{_H}?service)?{_H}*(?:assistant|bot|agent|summari[sz]er|copilot)"
    rf"{_H}+(?:now{_H}+)?(?:starts?|answers?|responds?|replies|posts?|finishes|gets{_H}+through|returns?|speaks?){_END}"
    rf"|{_BEGIN}(?:translation|summari[sz]ation|embedding|transcription|search|recommendation)(?:{_H}+(?:service|batch|job|pipeline"
    rf"|api|endpoint))?{_H}+(?:now{_H}+)?(?:gets{_H}+through|takes|finishes|runs|returns|completes|of){_END}"
    rf"|{_BEGIN}(?:calls?|requests?){_H}+to{_H}+(?:our|the){_H}+(?:[\w\-]+{_H}+){{0,2}}?(?:api|endpoint|service|server){_END}"
    rf"|{_BEGIN}(?:embedding|indexing|summari[sz]ing|transcribing|translating){_H}+(?:the|an?|our){_H}+(?:[\w\-.]+{_H}+){{0,3}}?"
    rf"(?:corpus|documents?|tickets?|audio|dataset|batch){_END}"
    rf"|{_BEGIN}autocomplete(?:{_H}+suggestions?)?{_END}|{_BEGIN}streaming{_H}+starts{_END}"
    rf"|{_BEGIN}(?:the{_H}+)?first{_H}+(?:chunk|token|byte|word)s?{_H}+of{_H}+the{_H}+stream{_END}"
    rf"|(?<![\w.,])[\d.,]+\s*[kKM]?[\-\s](?:prompt|request|ticket|document|question|conversation){_H}+(?:[\w\-]+{_H}+)?"
    rf"(?:batch|job|run|replay|workload){_END}"
    rf"|{_BEGIN}eval(?:uation)?s?{_H}+(?:now{_H}+)?(?:finished|finishes|took|takes|completed|completes){_END}"
    rf"|(?<![\w.])\d+(?:\.\d+)?[bB]{_H}+(?:training{_H}+)?(?:step|iteration)s?{_END}"
    rf"|{_BEGIN}(?:each|every){_H}+(?:decode|decoding|generation){_H}+step{_END}"
    rf"(?={_H}+(?:of{_H}+the{_H}+[\w\-.]+{_H}+)?(?:now{_H}+)?(?:is|was|takes|took|gets|got|becomes|became|runs|ran|finishes|finished){_END})"
    rf"|{_BEGIN}(?:the{_H}+)?(?:full|whole|entire){_H}+forward{_H}+pass{_END}(?!{_H}+of{_H}+(?:the{_H}+)?(?!model){_END}[a-z])"
    # "the full forward: 83 ms -> 61 ms", "the full per-token decode goes from 26 ms to 19 ms"
    rf"|{_BEGIN}(?:the{_H}+)?(?:full|whole|entire){_H}+(?:per{_H}?token{_H}+)?(?:forward|decode|decoding)(?:{_H}+step)?{_END}"
    rf"(?!{_H}+(?:pass{_H}+)?(?:of|for){_H}+(?!(?:the{_H}+)?model\b))(?!{_H}+pass)"
    rf"|{_BEGIN}tokens?{_H}+(?:now{_H}+)?(?:come{_H}+out|out{_H}+per{_H}+second){_END}"
    rf"|(?<=[x×%] )(?:at|in|on)\s+the\s+(?:server|serving\s+side|model\s+level){_END}"
    rf"|{_BEGIN}(?:tokens{_H}+per{_H}+minute|TPM|RPM|QPM|requests{_H}+per{_H}+minute){_END}"
    rf"|{_BEGIN}(?:as{_H}+seen{_H}+from|measured{_H}+at){_H}+the{_H}+(?:load{_H}?balancer|client|gateway|proxy){_END}"
    rf"|{_BEGIN}(?:across{_H}+the{_H}+(?:whole{_H}+)?fleet|on{_H}+the{_H}+live{_H}+[\w\-]+{_H}+endpoint|in{_H}+(?:last{_H}+week['’]s|the|our){_H}+canary)"
    rf"{_END}"
    # "the quantized checkpoint then decodes 1.4x faster", "the full offline generation job", "(ShareGPT, 1000 prompts)"
    rf"|{_BEGIN}(?:(?:quantized|converted|exported){_H}+)?checkpoints?{_H}+(?:(?:now|then|also){_H}+)?(?:decodes?|generates?|serves?"
    rf"|answers?){_END}"
    rf"|{_BEGIN}offline{_H}+(?:generation|inference|batch){_H}+(?:jobs?|runs?){_END}"
    rf"|(?<!from )(?<!like )(?<!of ){_BEGIN}(?:sharegpt|burstgpt){_END}(?!{_H}*(?:[\w\-]+{_H}+)?(?:lengths?|distributions?|shapes?|histograms?){_END})"
    rf"|{_BEGIN}(?:hardware|gpu|model){_H}+(?:flops{_H}+)?utili[sz]ation{_H}+(?:during|of|in|for){_H}+(?:the{_H}+|our{_H}+)?"
    rf"(?:pre{_H}?training|training|fine{_H}?tuning){_END}"
    rf"|{_BEGIN}(?:nightly{_H}+)?fine{_H}?tunes?{_END}|{_BEGIN}rl{_H}+(?:rollout{_H}+)?(?:jobs?|runs?){_END}"
    rf"|{_BEGIN}batch{_H}+jobs?{_END}(?={_H}+(?:on{_H}+the{_H}+cluster{_H}+)?(?:now{_H}+)?(?:wrap|finish|complete))"
    rf"|{_BEGIN}(?:el{_H}+servidor|el{_H}+modelo|das{_H}+modell|der{_H}+server|le{_H}+serveur|le{_H}+mod[èe]le){_END}"
    rf"|{_BEGIN}(?:full|whole|entire){_H}+(?:forward|backward|decode|prefill)(?:{_H}+pass)?{_H}+of{_H}+(?:the{_H}+)?model{_END}"
    rf"|{_BEGIN}(?:carr(?:y|ies|ied)|translat(?:e|es|ed)){_H}+(?:over{_H}+)?(?:in)?to{_H}+(?:the{_H}+)?(?:whole{_H}+)?"
    rf"(?:model|server|serving|users?|production){_END}"
    rf"|{_BEGIN}(?:inference|hosting|deployment|operating|cloud|gpu|serving){_H}+costs?{_END}"
    rf"|{_BEGIN}costs?{_H}+per{_H}+(?:token|request|query|user|reply|response|million){_END}"
    rf"|{MODEL_NAMES}|{ENGINE_NAMES}"
    # German, Spanish, French
    rf"|{_BEGIN}(?:antwortzeit(?:en)?|reaktionszeit(?:en)?|wartezeit(?:en)?|(?:be)?nutzer(?:innen|n|s)?|anwender(?:n|s)?"
    rf"|antworten|inferenz|kosten){_END}"
    rf"|{_BEGIN}(?:usuari[oa]s?|respuestas?|inferencia|tiempos?{_H}+de{_H}+(?:respuesta|espera)|cost[oe]s?"
    rf"|por{_H}+(?:solicitud|petici[oó]n|consulta)){_END}"
    rf"|{_BEGIN}(?:utilisat(?:eur|rice)s?|r[ée]ponses?|inf[ée]rence|temps{_H}+de{_H}+r[ée]ponse|co[uû]ts?"
    rf"|par{_H}+requ[êe]te){_END}"
    # Chinese, Japanese
    r"|(?:训练任务|微调任务|(?:每|训练|跑)\s*(?:一)?\s*(?:个|轮)?\s*(?:epoch|step|迭代)|一\s*(?:个|轮)\s*(?:epoch|迭代)|用户|客户|每\s*(?:个|次)?\s*(?:请求|查询|回复|对话)"
    r"|回复(?!\s*(?:评审|审阅|审查|review|楼上|一下|@))|响应|推理|服务(?![^，。；]{0,10}?(?:还没|尚未|没有|未)(?:来得及)?测)"
    r"|成本|对话|聊天|(?<!时间)线上|生产环境|整机)"
    # "按线上服务的真实 shape 测": the setting a kernel is measured in, as "serving shapes" is
    r"(?!(?:服务|推理|部署)?\s*(?:的)?\s*(?:真实|典型|常见|实际)?\s*(?:shapes?|形状|尺寸|规模|batch|配置|场景))"
    r"|(?:生成|输出|解码)\s*(?:速度|速率|时间|耗时)|模型\s*(?:的)?\s*(?:响应|回答|生成|输出|速度|整体)"
    r"|ユーザー?|利用者|推論|応答|返答|チャット|コスト|生成(?:速度|時間)|リクエスト(?:あたり|当たり|ごと)|本番|サービング"
    r"|跑完\s*(?:整个|[\d,.]+\s*[kK万千]?\s*条)?\s*(?:的)?\s*(?:评测集|测评集|数据集|测试集)|出词速度|每秒(?:能)?吐出"
    # 整网性能, 大模型整网, 整个模型的前向: the whole model
    r"|整网|整个模型|全模型"
    # 流式输出第一个字, 生成一段 500 字的回答, 向量化, 语音助手, 摘要任务, 接口返回时间, 大模型每次调用, 每分钟能出, 全量/灰度集群, 评测
    r"|流式输出|生成一段|回答一个问题|(?:文档|语料|知识库)\s*(?:的)?\s*向量化|向量化\s*(?:任务|服务)|语音助手|摘要任务|接口\s*(?:的)?\s*(?:平均)?\s*返回时间|大模型每次调用|每分钟能?出"
    r"|(?:全量|灰度)\s*集群|出一张图|转写|(?:C-?Eval|MMLU|CMMLU)\s*评测|评测集跑一遍|每生成一个\s*token|同样的流量"
    r"|(?<!\d)\d+(?:\.\d+)?[bB]\s*(?:的)?\s*(?:回放|灰度|接口|后端|服务|微调|看板|压测|解码示例|pod)|(?:长|短)上下文\s*档位|单卡产出"
    r"|每分钟\s*(?:能)?\s*(?:扛|处理|服务)|每出一个\s*token|首个\s*token|第一个\s*(?:字|token)\s*(?:出现|返回)|生成\s*[\d,]+\s*(?:个)?\s*token"
    r"|跑完\s*(?:MMLU|C-?Eval|CMMLU|GSM8K|HumanEval)|完成\s*[\d,]+/[\d,]+\s*条|往外蹦|用户等(?:待)?|解码(?:循环|示例)|整条解码"
    r"|出第一个字|每分钟\s*[\d,]+\s*个?\s*请求|每\s*[\d.]+\s*(?:ms|毫秒)\s*(?:吐|出|生成)\s*一个|每秒(?:能|多)*吐出|(?<![\d,])[\d,]+\s*步\s*解码"
    r"|同(?:样的|一批)\s*流量|(?<!\d)\d+(?:\.\d+)?[bB]\s*(?:的)?\s*(?:机器|演示|demo)"
    r"|(?<!\d)\d+(?:\.\d+)?[bB]\s*模型(?=\s*(?:的|在)?\s*(?:长上下文|长文本|长文档|解码|预填充|prefill|微调|单卡|写完|读完|回答|本分支|本\s*PR))"
    r"|看到第一个字|开始(?:回答|作答|出字)|每小时(?:能)?(?:处理|做完)|文字刷出来|出字"
    # 训练一轮, 训练 1 个 epoch, 各训 500 步: a training run's unit of work
    r"|训练\s*(?:一|[\d,]+)\s*(?:轮|遍|个\s*epoch)|各?训\s*[\d,]+\s*步"
    # 8 卡预训练的算力利用率 (MFU), token 产出速率, 并发会话数, 1000 条请求
    r"|(?:训练|预训练|微调)[^，。；]{0,6}?算力利用率|token\s*(?:产出|生成|输出)\s*(?:速率|速度)"
    r"|(?:并发|同时在线)\s*(?:会话|用户|请求|连接)\s*数|(?<![\d,])[\d,]+\s*条\s*(?:\w+\s*)?(?:请求|prompt|对话)"
    r"|(?:整轮|整个|完整的?|一整轮|一轮)\s*(?:的)?\s*(?:评测|测评|评估)"
    r"|(?:RLHF|PPO|GRPO|DPO|RL|强化学习)\s*(?:训练)?\s*(?:中|里)?\s*(?:的)?\s*(?:采样|rollout|生成)\s*阶段"
)
# A measure word with a digit right after it is a name ("the `serving2` run", "latency3.json"), not the word
_NAME_END = rf"(?![{_LATIN}\d])"
SERVING_MEASURES = (
    rf"{_BEGIN}serv(?:e|es|ed|ing){_NAME_END}{_NOT_LEVEL}{_NOT_SETTING}(?!{_H}*(?:style|like){_END})|{_BEGIN}per{_H}+(?:request|query|prompt){_END}"
    rf"|{_BEGIN}(?:latenc(?:y|ies)|throughput|response{_H}+times?|wait(?:ing)?{_H}+times?"
    rf"|time{_H}+to{_H}+(?:answer|respond|reply)){_NAME_END}"
    rf"|{_BEGIN}(?:latenz(?:en)?|durchsatz|latencias?|latences?|d[ée]bit){_END}"
    # "The model is 1.8x faster", "This PR makes the server faster", "the service's p99", "Requests complete 30%
    # sooner", "Training is 20% faster", "Decode is 30% faster": what serves or trains, as the subject of a result
    # (measures: a clause about a kernel or timed in microseconds keeps them kernel-level)
    r"|(?:(?<=the )|(?<=our )|(?<=this )|(?<=your )|(?<=whole )|(?<=entire )|(?<=patched )|(?<=new ))"
    rf"(?:model|system|stack|app(?:lication)?|build|branch){_END}{_SUBJECT_OF_A_RESULT}"
    # "How much faster the model gets depends on …": what serves, after the comparative that asks for its result
    r"|(?:(?<=faster the )|(?<=slower the )|(?<=quicker the )|(?<=better the ))"
    rf"(?:model|system|server|stack|app(?:lication)?|service){_END}(?={_H}+(?:gets|got|runs|ran|is|was|becomes|became){_END})"
    # "How much the model benefits …", "How much this helps the model …"
    rf"|(?<=the )(?:model|system|server|service){_END}(?={_H}+benefits?{_END})"
    rf"|(?<=helps the )(?:model|system|server|service){_END}"
    # "Model: 1.4x faster", "Model-wide: 1.4x", "The model: 1.4x faster": a label with its result
    rf"|{_BEGIN}(?:model|system)(?:{_H}?wide)?(?=\s*:\s*[+\-~≈]?(?:\d|twice|half|[a-z]+er{_END}))"
    r"|(?:整个|整体)?模型(?=\s*(?:也|都|整体)?\s*(?:快了|慢了|变快|变慢|提速|加速|快\s*[\d一两二三四五六七八九十]|一样|同样|如此"
    r"|(?:能|会)?快(?:了)?多少))"
    # "Kernel 2x, model 1.4x"
    rf"|{_BEGIN}model(?=\s+[+\-~≈]?\d[\d.,]*\s*(?:x|×|%))"
    rf"|{_BEGIN}(?:(?:sft|dpo|rlhf|ppo|grpo|lora|qlora|bert[\w\-]*|llm){_H}+)?(?:training|fine{_H}?tuning|pre{_H}?training"
    rf"|decode|decoding|prefill|streaming(?:{_H}+output)?|inference)"
    rf"(?=(?:{_H}+speed)?(?:{_H}+(?:for|on|at|with|in)\s+[^,.;:]{{1,25}}?)?(?:\s*:\s*[+\-~≈]?(?:\d|[a-z]+er{_END})"
    rf"|{_H}+(?:(?:now|still|also){_H}+)?(?:(?:is|was|are|were|runs?|ran|gets?|got|goes|went)"
    rf"(?:{_H}+(?:now|also|still|up|down|much|noticeably|about|roughly|significantly|considerably|~|≈))*"
    rf"{_H}*(?:\d|twice|half|(?:[a-z]+er|up|down|too){_END})|finish(?:es|ed)?|complet(?:es|ed)|takes?|took)))"
    rf"|{_BEGIN}(?:sft|dpo|rlhf|grpo)(?:{_H}+(?:runs?|jobs?|training))?(?=(?:{_H}+on\s+[^:]{{1,20}})?\s*:\s*\d|{_H}+(?:runs?|jobs?))"
    rf"|{_BEGIN}trained{_H}+for{_H}+[\d.,]+\s*[kK]?{_H}+steps{_END}"
    rf"|(?<![\w.])\d+(?:\.\d+)?[bB]{_H}+(?:(?:sft|dpo|rlhf|grpo|pre{_H}?training|fine{_H}?tun(?:e|ing))(?:{_H}+(?:runs?|jobs?))?"
    rf"|(?:training{_H}+)?(?:runs?|jobs?)){_END}"
    rf"|{_BEGIN}(?:the{_H}+)?(?:whole|entire|full){_H}+(?:training{_H}+|sft{_H}+)?(?:run|job){_END}"
    rf"|{_BEGIN}(?:nightly{_H}+)?eval(?:uation)?{_H}+(?:jobs?|runs?|suites?|sweeps?){_END}"
    rf"|{_BEGIN}(?:sharegpt|burstgpt|lmsys(?:{_H}chat)?){_H}+(?:replay|benchmark|run|trace){_END}"
    r"|(?:DPO|SFT|LoRA|RLHF|GRPO)?\s*(?:训练|微调)(?=\s*(?:快了|慢了|提速|加速|速度|时间))|整个训练"
    r"|(?:解码|预填充|prefill|decode|生成|出字)(?:阶段)?(?=\s*(?:速度)?\s*(?:明显|显著|大幅|要|也|都)?\s*(?:提速|加速|翻倍|快了|更快))"
    # "请求在 1.1 秒内完成", "首字必须在 1 秒内返回": a request or first token with the time it completes in
    r"|(?:请求|首字|首\s*token|回复|响应)(?=\s*(?:都|均|全部)?\s*(?:必须|需要|要|能|可以?)?\s*(?:在|于)\s*[\d.,]+\s*(?:秒|毫秒|ms|s)\s*(?:以)?内"
    r"\s*(?:完成|返回|结束|给出))"
    rf"|{_BEGIN}(?:requests?|quer(?:y|ies)|prompts?|jobs?|tasks?|agents?|clients?|callers?|customers?|prefill|decode)"
    rf"(?={_H}+(?:(?:now|must|should|will|can|all|still|always|they){_H}+)*(?:complete|completed|completes|finish|finished"
    rf"|finishes|return|returned|get|got|see|saw|wait|waited|wrap"
    rf"|(?:is|are|was|were|be|gets?|got){_H}+(?:(?:now|all|still|always){_H}+)*(?:answered|served|handled|processed|completed|returned))\b)"
    rf"|{_BEGIN}tokens?(?={_H}+(?:now{_H}+)?stream)"
    rf"|{_BEGIN}waits?{_H}+(?:before|for){_H}+(?:the{_H}+)?first{_H}+(?:output{_H}+)?(?:token|byte)s?{_END}"
    rf"|{_BEGIN}(?:max(?:imum)?{_H}+)?(?:sustainable{_H}+)?concurrency{_END}|{_BEGIN}traffic{_END}"
    rf"|{_BEGIN}benchmark{_H}+duration{_END}"
    # "1.3x over the previous release": what serves, unless the clause is a kernel's ("740 TFLOPs/s, ~1.2x over the
    # previous release")
    rf"|{_BEGIN}(?:than|over|vs\.?|versus){_H}+(?:the{_H}+)?(?:previous|old|current|baseline|default)"
    rf"{_H}+(?:backend|engine|server|release|version){_END}"
    r"|延迟|时延|吞吐|耗时|等待时间|レイテンシ|遅延|スループット|待ち時間|整体"
)

_NUMBER_WORDS = r"(?:two|three|four|five|six|seven|eight|nine|ten|twenty|hundred)"
# "3 times faster", "twice the throughput", "twice as fast": a multiple; "we ran it 3 times", "measured twice, once per
# arm": how often something ran, not a result
_MULTIPLE = (rf"(?={_H}+(?:as|the|that|those|this|these|its|their|our|what|much|more|less|fewer|faster|slower|quicker|over"
             rf"|cheaper|lower|higher|shorter|longer|better|worse|greater|larger|smaller|bigger|sooner){_END})")
# "the first half of the trace": a part of something, not a result
_NOT_A_PART = r"(?<!first[\s\-])(?<!second[\s\-])(?<!other[\s\-])(?<!latter[\s\-])(?<!former[\s\-])(?<!last[\s\-])"
# A quantity: a change written as a number (30%, 2x, 1.4 倍, four-fold, 12 ms, 45 t/s) or a word (twice, half).
QUANTITIES = (
    rf"(?<![{_LATIN}\d.,±/])[+\-−~≈]?\d(?:[\d.]|,(?=\d))*(?:[kKM](?=\s*(?:(?:output|input|generated|total|prompt){_H}+)?(?:tok|t/|req|samples|TPS|RPS|QPS)))?\s*(?:%|％|‰|[x×](?![\w])(?!\s*[\u4e00-\u9fff])(?!\s*(?:\d|[A-Z]{{1,3}}\d{{2,4}}|GPUs?\b|cards?\b|nodes?\b|chips?\b|devices?\b|params?\b|parameters\b|tokens?\b(?!\s*/\s*s|{_H}+per{_H}+sec)|layers?\b))|倍|fold{_END}|-fold{_END}|times{_END}{_MULTIPLE}"
    rf"|percent{_END}|per\s*cent{_END}|prozent{_END}|por\s*ciento{_END}|pour\s*cent{_END}"
    rf"|(?:ms|s)\s*/\s*tok(?:en)?{_END}|(?:ms|µs|μs|us|ns|s|secs?|seconds?|milliseconds?|minutes?|min|h|hours?)(?![{_LATIN}\d/])|毫秒|秒|分钟|小时"
    rf"|(?:tok(?:en)?s?|t|req(?:uest)?s?|samples?|it|quer(?:y|ies))\s*/\s*s(?:ec(?:ond)?s?)?\b|TPS\b|RPS\b|QPS\b"
    rf"|(?:s|ms|sec)\s*/\s*(?:iter|it|step)\b|(?:output|input|generated|total|prompt){_H}+tok(?:en)?s?\s*/\s*s\b"
    rf"|(?:images?|sentences?|img)\s*/\s*s(?:ec)?\b|s{_H}+per{_H}+image\b"
    rf"|(?:(?:output|generated|input|total|prompt){_H}+)?(?:tok(?:en)?s?|requests?|samples?|quer(?:y|ies)){_H}+(?:per|a)"
    rf"{_H}+sec(?:ond)?\b"
    r"|秒|毫秒|ミリ秒|分钟|(?:token|tok|请求|样本)s?\s*/\s*秒)"
    rf"|(?<![{_LATIN}\d.])\d+h\d{{1,2}}m(?:\d{{1,2}}s)?(?![{_LATIN}\d])|(?<![{_LATIN}\d.])\d+m\d{{1,2}}(?:\.\d+)?s(?![{_LATIN}\d])"
    rf"|[一两二三四五六七八九十半几数]\s*倍|[一二两三四五六七八九]\s*成(?![本功员熟品])|[二三四五六七八九十]\s*分之\s*[一二三四五六七八九]"
    rf"|{_BEGIN}{_NUMBER_WORDS}{_H}?fold{_END}"
    rf"|{_BEGIN}{_NUMBER_WORDS}{_H}+times{_END}{_MULTIPLE}|{_BEGIN}by{_H}+(?:\d[\d.,]*|{_NUMBER_WORDS}){_H}*times{_END}"
    rf"|{_BEGIN}(?:by\s+)?(?:a|one|two)\s+(?:third|quarter|fifth|tenth)s?{_END}"
)
_COMPARATIVES = (
    rf"{_BEGIN}(?:(?:twice|thrice){_END}{_MULTIPLE}|{_NOT_A_PART}half|halv(?:e|es|ed|ing)|doubl(?:e|es|ed|ing)(?!{_H}*-?{_H}*check)|tripl(?:e|es|ed|ing)|quadrupl(?:e|es|ed)"
    rf"|sooner|(?:earlier|later)(?!{_H}+(?:releases?|versions?|runs?|commits?|prs?|comments?|posts?|messages?|sections?"
    rf"|steps?|stages?|rounds?|iterations?|reviews?|drafts?){_END})(?!{_H}+(?:this|today|tonight|tomorrow|next|on){_END})|faster|quicker|slower|cheaper|less|fewer|lower|higher|shorter|longer|better|worse|more){_END}"
    rf"(?!{_H}+(?:bounds?|limits?|than{_H}+(?:or|the{_H}+(?:target|slo|budget)))\b)"
    rf"|{_BEGIN}(?:doppelt|halb(?:iert)?|verdoppelt|schneller|weniger|niedriger|h[öo]her|k[üu]rzer|sinkt|steigt"
    rf"|doble|mitad|r[áa]pid[oa]s?|menos|m[áa]s|baja|sube|reduce|disminuye|aumenta"
    rf"|deux{_H}+fois|moiti[ée]|rapide|moins|baisse|r[ée]duit){_END}"
)
_CHANGE_VERBS = (
    rf"{_BEGIN}(?:improv(?:e|es|ed|ing)|increas(?:e|es|ed|ing)|decreas(?:e|es|ed|ing)|reduc(?:e|es|ed|ing)"
    rf"|drop(?:s|ped|ping)?(?!{_H}+(?:from{_H}+(?:the{_H}+)?(?:report|results?|tables?|analysis|runs?|sets?|lists?|benchmarks?"
    rf"|samples?|logs?|averages?|medians?)|out){_END})|cut(?:s|ting)?|boost(?:s|ed|ing)?|regress(?:es|ed|ing)?|degrad(?:e|es|ed|ing)"
    rf"|rose|rises?|rising|(?:fell|falls?|falling)(?!{_H}+back){_END}|jump(?:s|ed)?|climb(?:s|ed)?|slash(?:es|ed)?|shrink(?:s)?|shrank"
    rf"|goes{_H}+(?:up|down)|went{_H}+(?:up|down)|speeds?{_H}+up|sped{_H}+up|go(?:es)?{_H}+from|went{_H}+from"
    rf"|brings?{_H}+(?:it|that|this|them|those){_H}+(?:(?:down|up){_H}+)?to{_H}+(?=[~≈]?\d)"
    rf"|up{_H}+from|down{_H}+from|beats?|lower(?:s|ed|ing)|rais(?:e|es|ed|ing)|shorten(?:s|ed|ing)?|trim(?:s|med)?|outperform(?:s|ed)?|saves?|saved|shaves?|shaved|accelerat(?:e|es|ed)"
    rf"|fix(?:es|ed)?{_H}+(?:it|this|that){_END}|clos(?:es|ed){_H}+the{_H}+gap|restor(?:es|ed){_H}+(?:it|that|this)"
    rf"|won(?!['’]?t\b)|outpac(?:e|es|ed)|outrun(?:s)?|outran|(?:comes?|came){_H}+out{_H}+ahead|edg(?:e|es|ed){_H}+out|tops|topped"
    rf"|(?:leaves?|left){_H}+(?:\w+{_H}+){{0,2}}behind|ha(?:s|ve|d){_H}+the{_H}+edge|grew|grows|grown|ahead{_H}+of)"
    rf"{_END}"
    rf"|{_BEGIN}(?:speed{_H}?ups?|improvements?|gains?|regressions?|reductions?|boosts?|uplift|slow{_H}?downs?"
    rf"|wins?|savings?){_END}(?!{_H}+(?:gates?|tests?|suites?|checks?|jobs?|detection|alerts?|guards?|bots?|tracking){_END})"
)
_ZH_CHANGES = (
    r"一半|翻倍|翻了一番|翻一番|减半|更快|更低|更少|更高|更短|快了|慢了|变快|变慢|降低|减少|缩短|提升|提高|加快|下降|增加|上升|改善|优化了"
    r"|退化|劣化|回退(?!\s*[，,]\s*再)|收益|加速比|明显|显著|大幅"
    r"|半分|短縮|削減|向上|速く|高速化|低下|増加|改善"
)
# "from 1200 to 1500", "812 -> 540", "40 → 52": a measured change written as its two ends
_FROM_TO = r"(?<![\d.,])\d[\d.,]*[kKM]?\s*(?:[A-Za-z/]{1,8}\s*)?(?:->|→|➝|=>|⟶)\s*\d|from\s+[\d.,]+\s*\S*\s+to\s+\d|[从由]\s*[\d.,]+.{0,6}?(?:到|至)\s*了?\s*\d"
# "88.1 vs 104.6", "compared with 1,180 on main": two measured values set side by side
_COMPARED = (r"(?:\bvs\.?|\bversus|\bcompared\s+(?:with|to)|\bagainst|\binstead\s+of|对比|相比|原来(?:是|为|要)?|此前(?:是|为)?"
             r"|(?:之前|以前)要|(?<=\d)\s*(?:ms|s|秒|毫秒)\s*对|main\s*(?:到|只有|要)\s*(?=[\d.,]))\s*[\d.,]*\d"
             # "before and after this PR (seconds for 64 tokens): 2.05 and 1.52", "改动前后 … 2.05 和 1.52"
             r"|\bbefore\s+and\s+after\b[^.;]{0,60}?:\s*[~≈]?[\d.,]+\s*\S{0,4}\s+(?:and|vs\.?|/)\s+[\d.,]*\d"
             r"|改动前后[^。；]{0,40}?[\d.]+\s*\S{0,3}\s*(?:和|对|与)\s*[\d.]")
RESULTS = f"{QUANTITIES}|{_COMPARED}|{_COMPARATIVES}|{_CHANGE_VERBS}|{_FROM_TO}|{_ZH_CHANGES}"
# A bare measured value presented as the metric's value: "TTFT: 120", "| Mean TTFT (ms) | 120.5 |", "TG 128 is 45"
# The names a table or a line gives its arms ("| main | this PR |", "before: 410 ms")
ARM_NAMES = r"main|baseline|master|before|after|this\s+pr|pr|patched"
# A number as written in prose ("4,100", "1.62"), not inside a word or a version
NUMBER = re.compile(r"(?<![\w.])\d[\d.,]*")
VALUE_AFTER = re.compile(r"\s*(?:(?:p\d{1,3}(?:\.\d+)?|mean|median|avg|average|max|min)\s*)?(?:(?:latency|throughput|time|duration)\s*)?"
                         r"(?:(?:ms|sec|s|us|µs|μs|min)\b\s*)?"
                         r"[\"']?\s*(?:\([^)]{0,12}\)\s*)?(?:(?:at|on|with|for|under|in)\s+[^:;.|]{1,48}?:|[:=|]|\bis\b|\bare\b|\bof\b|(?:数|数量)?\s*(?:为|是|：))\s*(?:\*\*|\[)?[+\-]?\d",
                         re.IGNORECASE)


def extra_pattern(phrases: Iterable[str], normalise) -> str:
    """Literal phrases whose spaces and hyphens match any run of either, as one alternation ('' for none)."""
    extra = []
    for phrase in phrases:
        phrase = normalise(phrase).strip()
        words = [re.escape(word) for word in re.split(r"[\s\-]+", phrase) if word]
        if not words:
            continue
        start = _B if phrase[0].isascii() and phrase[0].isalnum() else ""
        end = _B if phrase[-1].isascii() and phrase[-1].isalnum() else ""
        extra.append(start + rf"{_H}+".join(words) + end)
    return "|".join(extra)

# "prompts longer than 8k", "batches larger than 64": a comparative that picks the setting, not a result
SETTING_COMPARISONS = (rf"{_BEGIN}(?:prompts?|contexts?|sequences?|inputs?|outputs?|batch(?:es)?|requests?|messages?"
                       rf"|shapes?|models?|lengths?){_H}+(?:longer|shorter|larger|smaller|bigger|greater|more|fewer|less"
                       rf"|over|under|above|below){_H}+than{_END}"
                       # "lower values give smoother inter-token latency": a comparative of a setting's values
                       rf"|{_BEGIN}(?:lower|higher|larger|smaller|bigger){_H}+(?:values?|settings?|limits?|batch{_H}+sizes?){_END}"
                       # "TTFT matters more", "we never serve more than 1k": a weight or a bound, not a result
                       rf"|{_BEGIN}matters?{_H}+(?:much{_H}+|a{_H}+lot{_H}+)?more{_END}|{_BEGIN}more{_H}+important{_END}"
                       rf"|{_BEGIN}(?:more|fewer|less|longer|shorter){_H}+than{_H}+[~≈]?\d[\d.,]*\s*[kKM]?"
                       rf"(?:{_H}+(?:tokens?|requests?|prompts?|users?|seqs?|sequences?|steps?))?{_END}"
                       rf"(?!\s*(?:%|x\b|×|times|faster|slower|lower|higher|shorter|longer|sooner|more|less))")

# "the slower pass was kept", "whichever launch is the faster one": a comparative that picks one of the change's own
# kernels, passes or variants names it, it is not a result; after a copula it is ("split-KV is the faster one"), so a
# match with `copula` set is not a selection
# A comparative inside an act of choosing one of the change's own variants names what was chosen; it is not a result:
# "the slower pass of each row was kept", "The faster variant (BLOCK_N=128) was kept", "we keep the faster of the two",
# "serving takes whichever launch is the faster one", "更快的那组配置已保留". Without the act it is one ("the faster
# launch was the one with this PR", "TTFT is now the faster one").
_PICKED_COMPARATIVE = r"(?P<comparative>faster|slower|quicker|cheaper|shorter|longer|better|worse|lower|higher)"
_VARIANT = (r"(?:kernels?|pass(?:es)?|routes?|launch(?:es)?|paths?|variants?|configs?|configurations?|tiles?|loops?"
            r"|merges?|versions?|options?|candidates?|layouts?|formats?|counts?|splits?|plans?|programs?|grids?"
            r"|settings?|runs?|samples?|repeats?|measurements?)")
_ASIDE = rf"(?:{_H}*\([^)]{{0,80}}\))?"
KEPT_COMPARATIVES = (
    rf"{_BEGIN}(?:the|its|their){_H}+{_PICKED_COMPARATIVE}{_H}+(?:[\w\-]+{_H}+)?{_VARIANT}{_ASIDE}"
    rf"(?:{_H}+(?:of|for|per){_H}+(?:each|every|the){_H}+[\w\-]+)?{_H}+(?:was|were|is|are|gets?|got){_H}+"
    rf"(?:(?:then|always|also){_H}+)?(?:kept|chosen|picked|selected|retained|dropped|discarded|reported|taken){_END}"
    rf"|(?P<zh_comparative>更快|更慢)的\s*(?:那|这)?\s*(?:组|个|套|种|次)?\s*(?:配置|版本|方案|实现|变体|kernel|内核|结果)"
    rf"(?:\s*[（(][^）)]{{0,80}}[）)])?\s*(?:已|被|会)?\s*(?:保留|采用|选用|选中)"
)
CHOSEN_COMPARATIVES = (
    rf"{_BEGIN}(?:keeps?|kept|picks?|picked|chooses?|chose|selects?|selected|retains?|retained|reports?|reported)"
    rf"{_H}+(?:only{_H}+)?(?:the|its|their){_H}+{_PICKED_COMPARATIVE}{_H}+(?:of{_H}+the|one|{_VARIANT}){_END}"
)
WHICHEVER_COMPARATIVES = (
    rf"{_BEGIN}(?:takes?|took|runs?|ran|uses?|used|picks?|picked|keeps?|kept|launch(?:es)?|serves?){_H}+whichever"
    rf"{_H}+(?:[\w`\-]+{_H}+){{0,4}}?(?:is|are|was|were|runs?|proves?){_H}+(?:(?:the|a){_H}+)?{_PICKED_COMPARATIVE}{_END}"
)
PICKED_COMPARATIVES = (KEPT_COMPARATIVES, CHOSEN_COMPARATIVES, WHICHEVER_COMPARATIVES)

# The load a benchmark was run at, and how long, are its settings, not its results: "at 8 req/s",
# "with a request rate of 20 req/s", "--request-rate 16", "在 10 QPS 的负载下", "for 10 minutes".
_LOAD_UNIT = re.compile(r"[~≈]?[\d.,]*\s*(?:req(?:uest)?s?\s*/\s*s(?:ec)?|RPS|QPS|requests?\s+per\s+sec\w*|concurrent"
                        r"|users?|并发|路)", re.IGNORECASE)
_LOAD_BEFORE = re.compile(
    r"(?:\b(?:at|with|under|using|of|over|for)\s+(?:[\d.,]+\s*(?:,|and|or)\s*)*(?:a\s+|an\s+|the\s+)?(?:fixed\s+|constant\s+|target\s+|steady\s+"
    r"|offered\s+|peak\s+)?(?:(?:request|arrival|query)\s+)?(?:rate\s+|load\s+|concurrency\s+)?(?:of\s+)?"
    r"|--[\w-]+[ =]?|[在以用]\s*|(?:rate|concurrency)\s*[=:]?\s*)$", re.IGNORECASE)
_DURATION_UNIT = re.compile(r"[\d.,]*\s*(?:s|secs?|seconds?|min|mins|minutes?|h|hours?|秒|分钟|小时)(?![A-Za-z])",
                            re.IGNORECASE)
_DURATION_BEFORE = re.compile(r"(?:\b(?:for|over|during|lasting)\s+(?:about\s+|~)?|(?:持续|连续|跑了|运行了|压测了|测了|灰度|观察)\s*(?:了)?\s*"
                              r"(?:约|大约)?\s*)$", re.IGNORECASE)
# "the last 10 s window", "a 30 s timeout", "5 分钟窗口": a duration that is a window or a limit of the run
_WINDOW_AFTER = re.compile(r"[\s\-]*(?:sliding\s+)?(?:windows?|intervals?|time-?outs?|periods?|warm-?ups?|cool-?downs?)\b"
                           r"|\s*(?:窗口|间隔|超时)", re.IGNORECASE)
# The run-to-run spread of a measurement is no result: "run-to-run variance (about 6%)", "noise of ±3%", "波动约 5%"
_SPREAD_BEFORE = re.compile(r"(?:\b(?:variance|variability|noise|spread|std(?:dev)?|standard\s+deviation|jitter|run-to-run|CV"
                            r"|coefficient\s+of\s+variation)"
                            r"|波动|方差|误差)[^.;:\d]{0,16}$", re.IGNORECASE)
SETUP_LEAD = re.compile(r"^\W*(?:setup|set-up|config(?:uration)?|settings?|environment|env|workload|hardware"
                        r"|benchmark\s+(?:setup|config(?:uration)?|settings?)|test\s+setup|压测参数|测试环境|压测配置|配置|环境)"
                        r"\s*[:：]", re.IGNORECASE)


# "runs at ~900 req/s, where main saturated at ~600 req/s": loads of two arms set side by side are results
_LOADS_COMPARED = re.compile(r"\b(?:instead\s+of|vs\.?|versus|compared\s+(?:to|with)|where\s+main|while\s+main|than"
                             r"|main\s+(?:only|saturated|saturates|topped|tops|maxed|maxes|managed|manages|handled|handles))\b",
                             re.IGNORECASE)


def _arms_side_by_side(text: str, start: int, end: int, load: bool) -> bool:
    """The load (or duration) at text[start:end] is one arm's value beside another's, or a capacity the change
    reaches: a result, not a setting of the run."""
    window = text[max(0, start - 120):end + 120]
    if not load:  # "the job ran for 21 min; main ran for 42 min"
        return bool(_ARM_WORD.search(window) and _CHANGE_NAMED.search(window)) and len(_DURATION_IN.findall(window)) >= 2
    if _CAPACITY_BEFORE.search(text, max(0, start - 40), start) and _CHANGE_NAMED.search(window):
        return True  # "With this PR the server now runs at ~900 req/s", "we serve at 900 req/s …"
    return bool(_LOADS_COMPARED.search(window) or _ARM_WORD.search(window)) and len(_LOAD_UNIT_IN.findall(window)) >= 2


# "runs at ~900 req/s", "saturates at ~900": a capacity the change reaches
_CAPACITY_BEFORE = re.compile(r"\b(?:runs?|ran|serves?|served|serve|sustains?|sustained|handles?|handled|saturates?|saturated|peaks?"
                              r"|peaked|holds?|held|tops?\s+out|topped\s+out|maxe[sd]\s+out)\s+(?:now\s+)?(?:at\s+)?[~≈]?$"
                              r"|在\s*[~≈]?$", re.IGNORECASE)
_CHANGE_NAMED = re.compile(r"\bthis\s+(?:pr|change|patch|branch)\b|\bwith\s+(?:this|the\s+patch)\b|\bafter\s+this\b|本\s*PR",
                           re.IGNORECASE)
# "the job ran for 21 min; main ran for 42 min": durations of two arms side by side are results
_DURATION_IN = re.compile(r"\d\s*(?:s|secs?|seconds?|min|mins|minutes?|h|hours?)(?![A-Za-z])", re.IGNORECASE)
_ARM_WORD = re.compile(r"\b(?:main|baseline|master|before|previously)\b|改动前|合入前", re.IGNORECASE)


_LOAD_UNIT_IN = re.compile(r"\d\s*(?:req(?:uest)?s?\s*/\s*s(?:ec)?|RPS|QPS|requests?\s+per\s+sec)", re.IGNORECASE)


_SHARE_OF_TRAFFIC = re.compile(r"[~≈]?\d[\d.,]*\s*%\s+of\s+(?:the\s+)?(?:[\w\-]+\s+){0,2}?(?:traffic|requests|users|fleet|replicas"
                               r"|instances|pods|hosts|nodes)\b|[~≈]?\d[\d.,]*\s*%\s*(?:的)?\s*(?:灰度|流量|放量)", re.IGNORECASE)
_ROLLOUT_BEFORE = re.compile(r"(?:\b(?:canary|canaries|canaried|on|to|at|ramp\w*(?:\s+up)?(?:\s+to)?|roll\w*\s+out\s+to|plan\s*:)|灰度|线上|放量到?|先?在)\s*$",
                             re.IGNORECASE)


def is_setting(text: str, start: int, end: int) -> bool:
    """The quantity text[start:end] is a setting of the run, or its spread: a load after "at"/"with"/"在", a
    duration after "for", a run-to-run variance."""
    before = text[max(0, start - 60):start]
    quantity = text[start:min(len(text), end + 24)]
    if _SHARE_OF_TRAFFIC.match(text, start) and _ROLLOUT_BEFORE.search(before):
        return True  # "Canary on 5% of us-east traffic", "线上 5% 灰度": the share a rollout takes
    return bool((_LOAD_UNIT.match(quantity) and _LOAD_BEFORE.search(before) and not _arms_side_by_side(text, start, end, True))
                or (_DURATION_UNIT.match(quantity) and _DURATION_BEFORE.search(before)
                    and not _arms_side_by_side(text, start, end, False))
                or (_DURATION_UNIT.match(quantity) and _WINDOW_AFTER.match(text, end))
                or _SPREAD_BEFORE.search(before))
