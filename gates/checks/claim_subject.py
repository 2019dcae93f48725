"""The subject of a candidate claim: a model, a server, a user or a training run, or a kernel.

End-to-end metrics (TTFT, tok/s, req/s ...) are end-to-end whatever the sentence's grammar;
they never need a subject. Two kinds of word take their level from what they are about:

- a **measure** (latency, throughput, 吞吐, 耗时) is kernel-level when its scope is a kernel, a
  memory, a route, a pass, a layer or the cache: "DRAM throughput 0.44%", "内核耗时 12 ms",
  "latency of the partial kernel", "latency-bound";
- a **scope word** (end-to-end, e2e, 端到端) is kernel-level when it spans a kernel or a pass
  ("end-to-end (forward + backward)", "e2e kernel time", "e2e latency (us)": microseconds are
  kernel times), when its clause is about a kernel ("the fused MoE kernel is 1.8x faster end to
  end") and names no model-level subject or metric, or when it speaks of tests ("e2e tests").

A model named as the setting of a kernel measurement ("on Llama-3-8B shapes", "for Qwen2-7B
the kernel …") is not a model-level subject.

A configuration adds kernel words with `g7.kernel_terms` (the team's own kernel and op names).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from gates.checks.claim_excuses import KERNEL_WORD
from gates.checks.claim_vocabulary import (
    ENGINE_NAMES, MODEL_NAMES, SCOPE_TERMS, SERVING_MEASURES, SERVING_SUBJECTS, TRAINING_STEPS, _H,
)

_I = re.IGNORECASE
_KERNEL_SCOPE_WORD = (
    rf"(?:{KERNEL_WORD}|route|pass|programs?|tiles?|warps?|CTAs?|grids?|attention|read|loop|layer|call|caches?|bytes"
    r"|KV|bandwidth|peak|ceiling|floor|occupancy|GEMMs?|GEMVs?|matmuls?|ops?|operators?|all-?reduce|NCCL|collectives?"
    r"|单遍|切分|路由|程序|层|峰值)")
_KERNEL_SCOPE = re.compile(rf"(?<![A-Za-z]){_KERNEL_SCOPE_WORD}(?:s|es|ed|ing)?(?![A-Za-z])[^.;!?。！？；|]{{0,24}}$", _I)
# "编译耗时", "compilation latency": the time a compiler takes, right before the measure
_COMPILE_BEFORE = re.compile(r"(?:编译|(?<![A-Za-z])(?:compile|compilation))\s*$", _I)
_KERNEL_AFTER = re.compile(
    rf"^(?:{_H}*(?:bound|hiding|stalls?)\b|\s*(?:受限|隐藏)"
    rf"|\s+(?:of|in|on|for|at)\s+(?:[\w-]+\s+){{0,3}}?{_KERNEL_SCOPE_WORD}"
    r"|\s*[:=(]?\s*[\d.,]+\s*(?:[TGP]FLOPS|[TG]B/s|TiB/s|GiB/s)|\s*\((?:us|µs|μs|ns|TFLOPS|GB/s|TB/s)\))", _I)

# What a kernel-level sentence is about: a kernel, an op, a pass
STRICT_KERNEL = (r"(?<![A-Za-z])(?:kernels?|ops?|operators?|GEMMs?|GEMVs?|matmuls?|microbench(?:mark)?s?|fwd|bwd"
                 r"|(?<!full )(?<!whole )(?<!entire )forward(?:\s*(?:\+|and|/)\s*backward)?"
                 r"(?!\s+(?:pass\s+)?of\s+(?:the\s+)?(?:model|whole|full|entire|[A-Za-z]+-\d))|backward\s+pass)(?![A-Za-z])"
                 r"|算子|内核|核函数|前向|反向")
# What a scope word may span and still be kernel-level, right after it: "(forward + backward)", "kernel time", "(us)"
_SCOPE_SPANS_KERNEL = re.compile(
    r"^[\s(,:\-]*(?:(?:latency|time|timing|runtime|duration)\s*)?[\s(,:]*"
    r"(?:fwd|bwd|forward|backward|kernel|op\b|ops\b|operator|gemm|matmul|layer|microbench|launch|including\s+(?:the\s+)?"
    r"(?:launch|kernel|copy|copies)|us\b|µs|μs|ns\b|cycles)"
    r"|^[^.;|]{0,40}?\d[\d.,]*\s*(?:us|µs|μs|ns)(?![A-Za-z])"
    # "End-to-end, the quantization pass (scale + cast + pack) now takes 48 µs"
    r"|^(?![^.;|]*(?:\b(?:whole|full|entire|decode|decoding|prefill|forward)\s+pass\b|\bper\s+(?:output\s+)?token"
    r"|\bper\s+request|\bper\s+step|每个?\s*token|\bof\s+(?:the\s+)?model\b))"
    r"[\s,:]*(?:(?:across|over|for|of|in)\s+)?(?:the\s+)?(?:[\w\-+]+\s+){0,8}?(?:pass|kernel|op|operator|launch|gemm|matmul)\b"
    r"[^.;|]{0,80}?\d[\d.,]*\s*(?:us|µs|μs|ns)(?![A-Za-z])"
    # "End-to-end time of the GPTQ quantization pass (calibrate + pack) is 6m12s vs 14m40s": the time of an offline
    # tool's pass (quantization, packing, compilation, export …), not of one that runs the model
    r"|^[\s\-]*(?:wall[\s\-]?clock\s+)?(?:time|latency|runtime|duration|wall[\s\-]?time)\s+of\s+(?:the\s+|this\s+|our\s+)?"
    r"(?:[\w\-+]+\s+){0,2}?(?:quantization|quantizing|packing|calibration|compil(?:e|ation)|lowering|codegen|fusion"
    r"|export|conversion|autotun(?:e|ing)|tuning)\s+pass\b"
    r"|^[\s,，:：]*看?\s*(?:整个|单个|这个)?\s*[^，。；]{0,20}?(?:层|算子|kernel|内核|pass)(?=[^。；]*(?:单层|孤立|单独执行|单算子|us\b|µs|微秒))"
    # "End to end, the fused rope + kv-cache-write pass is 1.45x faster than the three separate launches it replaces"
    r"|^[\s,:]*(?:the\s+)?(?:[\w\-+/]+\s+){0,8}?(?:pass|kernel|op|operator)\b(?:[^.;|]|\.(?=\d)){0,80}?\b(?:than|vs\.?|versus)\s+(?:the\s+)?"
    r"(?:[\w\-]+\s+){0,3}?(?:separate|unfused|individual|original)\s+(?:launches|kernels|ops|passes)", _I)
# "End-to-end, the decode pass takes 16,000 µs per token": what the scope word spans is the model's, in microseconds
_SPANS_A_MODEL = re.compile(r"^(?=[^.;|]*(?:\b(?:whole|full|entire|decode|decoding|prefill|forward)\s+pass\b|\bper\s+(?:output\s+)?token"
                            r"|\bper\s+request|\bper\s+step|每个?\s*token|\bof\s+(?:the\s+)?model\b|\brequests?\b))", _I)
_SPANNED_BEFORE = re.compile(r"(?<![A-Za-z])(?:pass|kernel|op|operator|gemm|matmul|launch)(?:\s*\([^)]{0,60}\))?"
                             r"(?:\s+(?:itself|alone|now|runs|ran|takes|took))*,?\s*$"
                             r"|(?:算子|内核|核函数|kernel)\s*的?\s*$"
                             # "这个融合 pass 的端到端耗时": a pass of the compiler or an op, not the model's forward pass
                             r"|(?<!forward )(?<!decode )(?<!prefill )(?<!前向)(?<!整个)(?<!完整的)\bpass\s*的\s*$", _I)
# "量化 → GEMM → 反量化整条流水线端到端": a chain of ops right before the scope word
_CHAIN_BEFORE = re.compile(r"(?:[\w+\u4e00-\u9fff][\w\-+\u4e00-\u9fff]*\s*(?:→|->)\s*){2}[^，。；,;]{0,16}$")
# "the quantize → GEMM → dequant pipeline", "the sampler pipeline (penalties → softmax → top-k)": ops chained by arrows,
# none of them a serving stage
_OP_CHAIN = re.compile(r"(?:[\w+\u4e00-\u9fff][\w\-+\u4e00-\u9fff]*\s*(?:→|->)\s*){2,}[\w+\u4e00-\u9fff][\w\-+\u4e00-\u9fff]*")
_SERVING_STAGE = re.compile(r"prefill|decod|tokeniz|schedul|request|network|queue|forward|sampl|stream|load|prompt|serv"
                            r"|respon|generat|预填充|解码|调度|请求|分词|前向|采样|流式", _I)
# "The whole backward of the fused linear cross-entropy, end to end, …": a pass of an op before the scope word
_PASS_OF_BEFORE = re.compile(r"\b(?:forward|backward|fwd|bwd)(?:\s+pass)?\s+of\s+(?P<op>[^,;.]{1,60}?),?\s*$", _I)
# "for the Llama-2-7B MLP up-projection shape": the model names where a kernel's problem size comes from
_SHAPE_WORD_AFTER = re.compile(r"^[\s\-\w]{0,40}?\bshapes?\b|^[^，。；]{0,12}?形状", _I)
_SCOPE_IS_TESTING = re.compile(r"^[\s\-]*(?:tests?|testing|test\s+suite|ci|checks?|examples?|tutorials?|smoke|scripts?"
                               r"|correctness|encryption|type\s+safety|tracing|coverage)\b", _I)
# Words that put a whole clause in a kernel's world ("… for large N due to better L2 reuse", "… for one layer")
_KERNEL_WORLD = re.compile(
    r"(?<![A-Za-z])(?:kernels?|GEMMs?|GEMVs?|matmuls?|ops?|operators?|L1|L2|SMs?|smem|shared\s+memory|registers?|occupancy"
    r"|warps?|tiles?|CTAs?|[TG]FLOPs?(?:/s)?|HBM|DRAM|bank\s+conflicts?|(?:one|a|per|single)\s+layer|autotun\w*"
    r"|microbench\w*|unfused\s+(?:path|version|kernels?)|separate\s+(?:kernels|launches))(?![A-Za-z])|算子|内核|单层|寄存器|共享内存"
    r"|占用率|拆分实现|未融合", re.IGNORECASE)
_KERNEL_TIMES = re.compile(r"\d\s*(?:us|µs|μs|ns|微秒|纳秒)(?![A-Za-z])")
_MODEL_TIMES = re.compile(r"\d\s*(?:ms|s|sec|seconds?|毫秒|秒)(?![A-Za-z])|\d\s*(?:tok(?:en)?s?\s*/|t/s|req(?:uest)?s?\s*/|TPS|RPS"
                          r"|QPS)")
# A memory's rate: "went from 410 GB/s to 1.1 TB/s"
_BANDWIDTH = re.compile(r"\d\s*(?:[KMGT]i?B/s|[KMGT]B\s+per\s+second)", _I)
_SETTING_PREPOSITION = re.compile(r"(?:\b(?:on|for|with|using|across|in|at|from|of)\s+(?:the\s+|an?\s+)?|上|下|在|按照?\s*|以\s*"
                                  r"|取自\s*|来自\s*|\bshapes?\s*\([^)]{0,40})$", _I)
# What follows a model named as where a kernel's shapes come from: "Llama-3-8B shapes", "the Llama-3-8B MLP", "的解码形状"
_SHAPE_SOURCE_AFTER = re.compile(
    r"^(?:['’]s)?[\s\-]*(?:shapes?|layers?|heads?|dims?|dimensions?|configs?|weights?|checkpoints?|attention|sizes?|mlp|ffn|moe"
    r"|(?:transformer\s+)?blocks?|encoder(?:\s+stem)?|decoder|stem"
    r"|experts?|projections?|gemms?|problems?|workloads?|(?:decode|prefill|training|serving|inference)\s+shapes?"
    r"|[qkvo]_proj|gate_proj|up_proj|down_proj|lm_head|qkv_proj|(?:[qkvo]|qkv|gate|up|down)[\-\s]proj)\b"
    r"|^\s*的?\s*(?:所有|全部|各|典型)?\s*(?:[A-Za-z]+\s*)?(?:解码|预填充|推理)?\s*(?:形状|shape|层|尺寸)"
    r"|^\s*的?\s*[\d一二三四五六七八九十]+\s*个\s*[^，。；]{0,6}?(?:形状|shape|层)", _I)
# "Llama-3-8B's q_proj", "one Qwen decoder layer", "Qwen 单个 decoder 层": a part of the model, measured alone
_LAYER_NAME_AFTER = re.compile(r"^\s*(?:[qkvo]_proj|gate_proj|up_proj|down_proj|lm_head|qkv_proj)\b"
                               r"|^\s*(?:的\s*)?(?:单个|一个|一层)?\s*(?:decoder|transformer|attention|mlp|moe)\s*(?:layer|block|层)"
                               r"(?![A-Za-z])", _I)
# The whole model beside one of its layers: "…, times 32 layers plus the LM head, i.e. the full forward", "all 32 plus
# the head", 整个模型
_WHOLE_MODEL = re.compile(r"\b(?:full|whole|entire)\s+(?:per[\s\-]?token\s+)?(?:forward|decode|decoding|model)\b"
                          r"|\ball\s+\d+\s+(?:layers\b|plus\b)|\btimes\s+\d+\s+layers\b|整个模型|全部\s*\d+\s*层", _I)
_SHAPES_FROM = re.compile(r"\bshapes?\s+(?:are\s+|is\s+|come\s+|comes\s+|were\s+|taken\s+)?(?:taken\s+)?(?:from|of)\s+"
                          r"(?:the\s+|an?\s+)?$|形状\s*(?:取自|来自)\s*$", _I)
# A model named in parentheses after a shape parameter it sets: "head_dim 256 (Gemma-2)", "hidden 4096 / 8192
# (Llama-3-8B/70B)", "For vocab 128256 (Llama-3)", "64 experts / top-6 (DeepSeek-V2-Lite routing)"
_SHAPE_PARAMETER_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?:hidden(?:[\s_]size)?|head[\s_]?dims?|d_?model|d_?head|vocab(?:[\s_]size)?|intermediate(?:[\s_]size)?"
    r"|n_embd|num_(?:heads|kv_heads|experts)|kv[\s_]heads|q[\s_]heads|ffn(?:[\s_]dim)?)\s*[=:]?\s*\d[\d.,]*\s*[kKM]?"
    r"(?:\s*/\s*\d[\d.,]*\s*[kKM]?)*|\d+\s+experts|\btop-?\d+|\btop-?k\s*[=:]?\s*\d+)\s*[(（]\s*(?:the|as\s+in|from|like|e\.g\.,?)?\s*$", _I)
# What else a parenthesis holds beside a model whose shapes a kernel benchmark takes: "（Llama-3-8B，kv_len=4096，bs=64）",
# "（DeepSeek-V3 的 head 配置）", "(Mistral-7B shapes)"
_SHAPE_ITEMS = re.compile(r"(?<![A-Za-z])[A-Za-z_]+\s*=\s*\d|配置|形状|维度|\b(?:configs?|shapes?|routing|dims?|heads?|layouts?|vocab)\b", _I)
# Any time or rate: a model's result may be timed in seconds, hours or epochs
_TIMED = re.compile(_MODEL_TIMES.pattern + r"|\d\s*(?:h|hours?|min(?:utes?)?|小时|分钟|天|days?)(?![A-Za-z])|/\s*s\b|每秒", _I)
# A serving workload a measure was taken under: what it measures is what serves, whatever kernel the clause names
_SERVING_WORKLOAD = re.compile(r"\b(?:production|live|real|user)\s+traffic\b(?!\s+(?:shapes?|lengths?|distributions?|mix))"
                               r"|\btraffic\s+replay\b|\b(?:under|in|with)\s+(?:our\s+|the\s+)?(?:serving|load)\s+(?:benchmark|test)s?\b"
                               r"|线上流量(?!\s*(?:的)?\s*(?:shape|形状|长度|分布))|真实流量(?!\s*(?:的)?\s*(?:shape|形状|长度|分布))", _I)
# A kernel's own settings: "BLOCK_N=128", "num_warps=8"
_KERNEL_CONFIG = re.compile(r"\bBLOCK_[A-Z]+\b|\bnum_(?:warps|stages|ctas)\b")
_MODEL_NAME = re.compile(MODEL_NAMES, _I)
_FLAG_VALUE_BEFORE = re.compile(r"(?<![\w-])--?[A-Za-z][\w\-]*[=\s]+(?:[\w.\-]+/)?$")
_ENGINE_NAME = re.compile(ENGINE_NAMES, _I)
_TRAINING_STEP = re.compile(TRAINING_STEPS, _I)


# "In isolation the fused MoE kernel now processes 1.9M": a kernel as the subject of the rate that follows
_KERNEL_RATE_HEAD = re.compile(
    r"^\W*(?:(?:in\s+isolation|standalone|on\s+its\s+own|alone|on\s+(?:an?\s+|one\s+)?[\w\-]+|at\s+[^,]{1,30}?)\s*,?\s+)*"
    r"(?P<subject>(?:the\s+|our\s+|this\s+|a\s+|each\s+)?(?:[\w\-`+/]+\s+){0,6}?[\w\-`]+)\s+(?:\([^)]{0,40}\)\s+)?"
    r"(?:now\s+|alone\s+|itself\s+|still\s+)?(?:processes|handles|reaches|achieves|sustains|does|runs\s+at|hits|delivers"
    r"|moves|peaks\s+at)\s+(?:about\s+|~|≈)?[\d.,]+\s*(?:[kKMG]|[x×])?\s*"
    r"(?:tok(?:en)?s?\s*/\s*s\w*(?:\s+(?:at|on|for|with)\s+[^;]{1,40}?)?,?\s*(?:versus|vs\.?|against|compared\s+(?:to|with)|over|and)\s+(?:about\s+|~|≈)?[\d.,]+\s*[kKMG]?\s*)?$",
    _I)
# "Kernel throughput for the RoPE + quant fusion is 41M tokens/s", "The decode throughput of the MLA kernel, …",
# "该内核的吞吐折合约 120 万 tokens/s": a throughput that is a kernel's by name
_KERNEL_THROUGHPUT = re.compile(
    r"(?<![A-Za-z])(?:kernels?|ops?|operators?|GEMMs?|GEMVs?)['’]?s?\s+(?:own\s+)?(?:throughput|rate)\b"
    r"|\bthroughput\s+(?:of|for)\s+(?:the|this|our|a|each)\s+(?:[\w\-+]+\s+){0,3}?(?:kernels?|ops?|operators?|GEMMs?"
    r"|GEMVs?)(?![A-Za-z])|(?:内核|算子|kernel)\s*的?\s*吞吐", _I)
# "(measured in isolation, no model in the loop)": a model named to say it was not there
_MODEL_DENIED = re.compile(r"\bnot\s+(?:serving|server|end[\s\-]to[\s\-]end|e2e)\s+(?:throughput|latency|numbers?|tok(?:en)?s?/s)\b"
                           r"|\bno\s+(?:model|server)\s+in\s+the\s+loop\b|\bwithout\s+(?:the|a|any)\s+(?:model|server)\b"
                           r"|\bnot\s+(?:the|a)\s+(?:whole\s+)?(?:model|server)\b", _I)
# "Tokens/s in this table is the kernel's own rate", "Tokens/sec reported here are for the attention kernel alone"
_OWN_RATE_NOTE = re.compile(r"\b(?:is|are)\s+the\s+(?:kernel|op|operator)['’]s\s+own\s+(?:rate|throughput)\b"
                            r"|\b(?:is|are)\s+(?:for|of)\s+the\s+(?:[\w\-]+\s+){0,2}?(?:kernel|op|operator)\s+(?:alone|only|itself)\b"
                            r"|(?:kernel|算子)\s*(?:的)?自身(?:的)?吞吐", _I)
_ISOLATED = re.compile(r"\bmicrobench\w*|\bin\s+isolation\b|\b(?:op|kernel|operator)\s+alone\b|\bstandalone\b|单看|算子本身|单算子"
                       r"|kernel\s*本身", _I)
_SERVING_HEAD = re.compile(
    rf"{SERVING_SUBJECTS}|{SERVING_MEASURES}|{SCOPE_TERMS}|(?<![A-Za-z])(?:servers?|engines?|systems?|models?|deployments?"
    r"|endpoints?|clusters?|nodes?|pipelines?|instances?|replicas?|backends?|training|trainers?|runs?|jobs?)(?![A-Za-z])", _I)


# "not per kernel", "rather than the kernel's", "unlike the kernel-only number": a kernel named to deny that the clause
# is about it puts the clause in no kernel's world
_KERNEL_DENIED = re.compile(
    r"(?:\bnot(?:\s+(?:just|only|merely|simply|per|the|a|an|in|at|for|of|its|their|our))*|\brather\s+than(?:\s+(?:per|the|a))?"
    r"|\bunlike(?:\s+(?:the|a|its))?|\binstead\s+of(?:\s+(?:the|a))?|\bbeyond(?:\s+(?:the|a))?|\bmore\s+than(?:\s+(?:the|a))?"
    r"|n['’]t(?:\s+\w+){0,2}?)\s+(?:[\w\-]+\s+){0,2}?[\w\-]*(?:kernel|microbench|GEMM|op\b|operator)[\w'’\-]*"
    r"(?:\s+(?:microbenchmarks?|numbers?|times?|results?|level|only))?"
    r"|(?:不只是|不仅仅?是?|不止是?|并非只有|除了)\s*(?:kernel|内核|算子)", _I)


# "Multi-LoRA serving: punica kernels replaced by the SGMV path, 30% higher throughput when … served": a kernel named
# as what the change replaced, in a clause about serving, does not put the clause in a kernel's world
_KERNEL_REPLACED = re.compile(
    r"\b(?:replac|swapp|switch|migrat)\w*\s+(?:out\s+|from\s+)?(?:the\s+|our\s+|its\s+)?(?:[\w\-`]+\s+){0,2}?"
    r"(?:kernels?|ops?)\b(?:\s+(?:with|by|for|to)\b)?"
    r"|(?:[\w\-`]+\s+){0,2}?(?:kernels?|ops?)\s+(?:(?:are|were|is|was|got|get|gets|being)\s+)?(?:replaced|swapped(?:\s+out)?)"
    r"\s+(?:by|with|for)\b", _I)
_REPLACING = re.compile(r"replac|swapp|switch|migrat", _I)
_SERVES = re.compile(r"\b(?:serv(?:ing|ed|es|e)|requests?|users?|deployments?|in\s+production)\b", _I)


def without_replaced_kernels(clause: str) -> str:
    """The clause with every kernel named as what the change replaced blanked out, when the clause speaks of
    serving outside those words; else the clause unchanged."""
    if not _REPLACING.search(clause):  # most clauses replace nothing: skip the pattern, whose word runs backtrack
        return clause
    blanked = _KERNEL_REPLACED.sub(lambda m: " " * len(m.group(0)), clause)
    return blanked if blanked != clause and _SERVES.search(blanked) else clause


def without_denied_kernels(clause: str) -> str:
    """The clause with every kernel it names only to deny it blanked out."""
    return _KERNEL_DENIED.sub(lambda m: " " * len(m.group(0)), clause)


@lru_cache(maxsize=64)
def _rate_words(clause: str) -> tuple[bool, bool, bool]:
    """What `Subjects.rate_of_a_kernel` looks for in the whole clause, found once per clause rather than once per
    rate in it (a clause of thousands of rates stays linear): a note that the rate is the kernel's own, an
    isolation word, a throughput named as a kernel's. A word the clause does not hold is in none of its heads."""
    return bool(_OWN_RATE_NOTE.search(clause)), bool(_ISOLATED.search(clause)), bool(_KERNEL_THROUGHPUT.search(clause))


@lru_cache(maxsize=64)
def _names_serving(clause: str) -> bool:
    """Whether the clause names a server, a model, users or a serving measure (asked only once a kernel is found)."""
    return bool(_SERVING_HEAD.search(clause))


def _ends_with_a_number(clause_head: str) -> bool:
    """Whether the head ends as `_KERNEL_RATE_HEAD` must: a number, then at most a k/M/G or a multiple's x, and spaces."""
    tail = clause_head.rstrip()
    if tail[-1:] in ("k", "K", "M", "G", "x", "×"):
        tail = tail[:-1].rstrip()
    return tail[-1:] in tuple("0123456789.,")


class Subjects:
    """Kernel-level scopes, with the configuration's own kernel words (`g7.kernel_terms`)."""

    def __init__(self, kernel_terms: Iterable[str] = ()):
        extra = "|".join(re.escape(term) for term in kernel_terms if term.strip())
        self.kernel = re.compile(STRICT_KERNEL + (f"|(?<![A-Za-z0-9_])(?:{extra})(?![A-Za-z0-9_])" if extra else ""), _I)

    def measure_is_kernel_level(self, text: str, start: int, end: int, clause_start: int = 0) -> bool:
        """The measure at text[start:end] is scoped to a kernel, a memory, a route or a pass: "kernel latency", "the
        partial kernel's p99 latency", "latency of the partial kernel". Only words of its own clause count ("We keep the
        faster launch config, and serving is now 25% faster" is about serving)."""
        return bool(_KERNEL_SCOPE.search(without_denied_kernels(text[max(clause_start, start - 40):start]))
                    or _KERNEL_AFTER.match(text[end:end + 40]) or _COMPILE_BEFORE.search(text, max(0, start - 12), start))

    def clause_is_kernel_level(self, clause: str) -> str | None:
        """Why a clause about a generic measure (latency, throughput, 吞吐) is kernel-level, or None: it is set
        in a kernel's world (a kernel, a GEMM, L2, occupancy, one layer) or timed in microseconds only."""
        clause = without_replaced_kernels(without_denied_kernels(clause))
        world = _KERNEL_WORLD.search(clause) or self.kernel.search(clause)
        if world and _SERVING_WORKLOAD.search(clause):
            return None  # "Switching decode to the split-KV kernel raised throughput by 35% under our production traffic replay"
        if world:
            return f"kernel-level: the clause is about a kernel ({world.group(0)!r})"
        if _KERNEL_TIMES.search(clause) and not _MODEL_TIMES.search(clause):
            return "kernel-level: timed in microseconds"
        if _BANDWIDTH.search(clause) and not _MODEL_TIMES.search(clause):
            return "kernel-level: a memory's rate (GB/s, TB/s)"
        return None

    def rate_of_a_kernel(self, clause_head: str, clause: str) -> bool:
        """The rate that follows `clause_head` (the clause up to a tokens/s unit) is a kernel's: the kernel is the
        subject that reaches it ("In isolation the fused MoE kernel now processes 1.9M tokens/s"). A clause that
        names a server, a model, users or a serving measure anywhere ("… in our serving benchmark") is left to them."""
        own_note, isolated_anywhere, named_anywhere = _rate_words(clause)
        if own_note:
            return True  # "Tokens/s in this table is the kernel's own rate (…), not serving throughput"
        isolated = isolated_anywhere and _ISOLATED.search(clause_head)
        if isolated and self.kernel.search(clause_head) and not _names_serving(clause):
            return True  # "The microbenchmark reports tokens/s for the attention op alone: …"
        named = named_anywhere and _KERNEL_THROUGHPUT.search(clause_head)
        if named:
            return not _SERVING_HEAD.search(_MODEL_DENIED.sub(" ", clause[:named.start()] + " " + clause[named.end():]))
        if not _ends_with_a_number(clause_head):
            return False
        found = _KERNEL_RATE_HEAD.match(clause_head)
        return bool(found and self.kernel.fullmatch(found.group("subject").split()[-1].strip("`"))
                    and not _names_serving(clause))

    def scope_word_level(self, clause: str, start: int, end: int, model_level_in_clause: bool) -> str | None:
        """Why the scope word at clause[start:end] is not model-level ("kernel-level: …"), or None."""
        before = clause[max(0, start - 80):start]
        if _SPANNED_BEFORE.search(before):
            return "kernel-level: end to end of the kernel or pass before it"
        chain = _CHAIN_BEFORE.search(before)
        if chain and not _SERVING_STAGE.search(chain.group(0)):
            return f"kernel-level: end to end of a chain of ops ({chain.group(0).strip()!r})"
        op = _PASS_OF_BEFORE.search(before)
        if op and (self.kernel.search(op.group("op")) or re.search(r"\bfused\b", op.group("op"), _I)):
            return "kernel-level: end to end of an op's pass before it"
        after = clause[end:end + 140]
        chain = _OP_CHAIN.search(after[:160])
        if chain and chain.start() < 80 and not _SERVING_STAGE.search(chain.group(0)):
            return f"kernel-level: end to end of a chain of ops ({chain.group(0)!r})"
        spans = None if _SPANS_A_MODEL.match(after) else _SCOPE_SPANS_KERNEL.match(after)
        if spans:
            return f"kernel-level: end to end of a kernel or pass ({spans.group(0).strip(' (,:')!r})"
        testing = _SCOPE_IS_TESTING.match(after)
        if testing:
            return f"about tests, not a level of results ({testing.group(0).strip()!r})"
        if not model_level_in_clause:
            kernel = self.kernel.search(without_denied_kernels(clause))
            if kernel:
                return f"kernel-level: the clause is about a kernel ({kernel.group(0)!r})"
        return None

    def model_is_setting(self, clause: str, start: int, end: int) -> bool:
        """A model, an engine or a step named as the setting of a kernel measurement: "on Llama-3-8B shapes",
        "for Qwen2 the kernel …", "the Triton kernel in vLLM", "each iteration of the kernel's loop"."""
        if re.search(r"\bper\s+$", clause[:start], _I) and (self.kernel.search(clause) or _KERNEL_WORLD.search(clause)):
            return True  # "Per training step of the 7B run, the fused kernel accounts for 14 ms": a normalizer
        if _TRAINING_STEP.fullmatch(clause[start:end]) and re.search(r"training|epoch", clause[start:end], _I) \
                and not re.search(r"\bper\s*$", clause[:start], _I):
            return False  # "each training step" is a training run's, whatever kernel the clause names
        if _ENGINE_NAME.fullmatch(clause[start:end]) or _TRAINING_STEP.fullmatch(clause[start:end]):
            return bool(_KERNEL_WORLD.search(clause) or self.kernel.search(clause))
        if not _MODEL_NAME.fullmatch(clause[start:end]):
            return False
        if _FLAG_VALUE_BEFORE.search(clause[max(0, start - 40):start]):
            return True  # "`benchmark_moe.py --model mixtral --tp 2`": the run's argument
        if _SHAPES_FROM.search(clause[:start]) or (_LAYER_NAME_AFTER.match(clause[end:end + 24])
                                                    and not _WHOLE_MODEL.search(clause)):
            return True  # "the shapes are from a Llama-3-8B trace", "这些形状取自 Qwen3-235B": a kernel benchmark's setting
        if self._names_shapes_in_parentheses(clause, start, end):
            return True
        if _SETTING_PREPOSITION.search(clause[:start]) and _SHAPE_WORD_AFTER.match(clause[end:end + 48]):
            return True  # "for the Llama-2-7B MLP up-projection shape this is 0.31 ms → 0.24 ms"
        return bool(_SETTING_PREPOSITION.search(clause[:start]) or _SHAPE_SOURCE_AFTER.match(clause[end:end + 24])) \
            and (self._about_a_kernel(clause) or bool(_KERNEL_CONFIG.search(clause)
                                                      or re.search(r"\b(?:fused|pass|launch|permute|unpermute|template|wrapper|profiler)\b", clause, _I)))

    def _about_a_kernel(self, clause: str) -> bool:
        """The clause names a kernel or its world, or is timed in microseconds only."""
        return bool(self.kernel.search(clause) or _KERNEL_WORLD.search(clause)
                    or (_KERNEL_TIMES.search(clause) and not _MODEL_TIMES.search(clause)))

    def _names_shapes_in_parentheses(self, clause: str, start: int, end: int) -> bool:
        """The model at clause[start:end] stands in parentheses as where a kernel benchmark's shapes come from: after a
        shape parameter it sets ("head_dim 256 (Gemma-2)"), or beside shape settings in a clause about a kernel
        ("（Llama-3-70B 的 intermediate_size=28672）… 4.3us -> 3.1us")."""
        opening = max(clause.rfind("(", max(0, start - 60), start), clause.rfind("（", max(0, start - 60), start))
        if opening < 0 or re.search(r"[)）]", clause[opening:start]):
            return False
        if _SHAPE_PARAMETER_BEFORE.search(clause[max(0, opening - 60):start]):
            # "For vocab 128256 (Llama-3): 263 MB -> 2 MB of scratch"; not "hidden 4096 (Llama-3-8B): a request takes 3.9 s"
            return self._about_a_kernel(clause) or not _TIMED.search(clause)
        closing = re.search(r"[)）]", clause[end:end + 80])
        inside = clause[opening + 1:start] + " " + clause[end:end + (closing.start() if closing else 80)]
        return bool(_SHAPE_ITEMS.search(inside)) and self._about_a_kernel(clause)
