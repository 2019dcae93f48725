"""Attention shapes of public models, per GPU at the tensor-parallel degrees they are served with.

Each entry gives a model's query heads, KV heads and head dim as its Hugging Face
`config.json` states them (`num_attention_heads`, `num_key_value_heads`, and `head_dim`
where the config has one, else `hidden_size / num_attention_heads`), and the URL of that
file. `per_gpu_configs()` turns them into what one GPU's decode kernel sees at tensor
parallelism TP: Hq / TP query heads and max(1, Hkv / TP) KV heads (KV heads are replicated
when Hkv < TP, as vLLM and SGLang do); a TP that does not divide Hq, or where neither of
Hkv and TP divides the other, is not a way the model is served and is left out.

`validation.shapes.CPU_CASES` covers every group size and head dim these produce (the
interpreter runs a few small cases each); `model_cases()` is the full matrix for a GPU,
and `python -m validation.bench --matrix models` times it.

Not included, with the reason:
* DeepSeek-V2-Lite (and V2/V3): multi-head latent attention. Its decode attends with a
  compressed latent KV (kv_lora_rank 512 plus a 64-dim rope key shared by all heads); run
  as plain attention it is MHA with a 192-dim key and a 128-dim value, two head dims,
  which this kernel (one D for K and V) does not compute. Served by MLA kernels.
* Falcon-7B (71 query heads, one KV head): a group of 71 rows is served by MQA kernels
  with the heads as the M dimension; it is admissible here (group sizes are not limited
  by the kernel) but no current serving stack ships it, so it is not in the matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

HF = "https://huggingface.co/{}/blob/main/config.json"


@dataclass(frozen=True)
class ModelAttention:
    """One model's attention as its config.json states it."""

    name: str
    repo: str
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    tensor_parallel: tuple[int, ...]
    head_dim_source: str = "head_dim"

    @property
    def source(self) -> str:
        return HF.format(self.repo)


def _m(name, repo, hq, hkv, d, tp=(1,), how="head_dim"):
    return ModelAttention(name, repo, hq, hkv, d, tuple(tp), how)


H = "hidden_size / num_attention_heads"
MODELS: tuple[ModelAttention, ...] = (
    # Llama 3.x
    _m("Llama-3.2-1B", "meta-llama/Llama-3.2-1B", 32, 8, 64, (1,), "head_dim (hidden_size 2048 / 32)"),
    _m("Llama-3.2-3B", "meta-llama/Llama-3.2-3B", 24, 8, 128, (1,), "head_dim (hidden_size 3072 / 24)"),
    _m("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", 32, 8, 128, (1, 2, 4), H + " (4096 / 32)"),
    _m("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", 64, 8, 128, (2, 4, 8), H + " (8192 / 64)"),
    _m("Llama-3.1-405B", "meta-llama/Llama-3.1-405B", 128, 8, 128, (8,), H + " (16384 / 128)"),
    # Qwen2.5
    _m("Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", 14, 2, 64, (1,), H + " (896 / 14)"),
    _m("Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B", 12, 2, 128, (1,), H + " (1536 / 12)"),
    _m("Qwen2.5-3B", "Qwen/Qwen2.5-3B", 16, 2, 128, (1,), H + " (2048 / 16)"),
    _m("Qwen2.5-7B", "Qwen/Qwen2.5-7B", 28, 4, 128, (1, 2, 4), H + " (3584 / 28)"),
    _m("Qwen2.5-14B", "Qwen/Qwen2.5-14B", 40, 8, 128, (1, 2, 4, 8), H + " (5120 / 40)"),
    _m("Qwen2.5-32B", "Qwen/Qwen2.5-32B", 40, 8, 128, (1, 2, 4, 8), H + " (5120 / 40)"),
    _m("Qwen2.5-72B", "Qwen/Qwen2.5-72B", 64, 8, 128, (2, 4, 8), H + " (8192 / 64)"),
    # Qwen3 (config.json has head_dim 128 for every size)
    _m("Qwen3-0.6B", "Qwen/Qwen3-0.6B", 16, 8, 128, (1,)),
    _m("Qwen3-1.7B", "Qwen/Qwen3-1.7B", 16, 8, 128, (1,)),
    _m("Qwen3-4B", "Qwen/Qwen3-4B", 32, 8, 128, (1,)),
    _m("Qwen3-8B", "Qwen/Qwen3-8B", 32, 8, 128, (1, 2)),
    _m("Qwen3-14B", "Qwen/Qwen3-14B", 40, 8, 128, (1, 2, 4)),
    _m("Qwen3-32B", "Qwen/Qwen3-32B", 64, 8, 128, (1, 2, 4, 8)),
    _m("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", 32, 4, 128, (1, 2, 4)),
    _m("Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B", 64, 4, 128, (4, 8)),
    # Mistral
    _m("Mistral-7B-v0.3", "mistralai/Mistral-7B-v0.3", 32, 8, 128, (1, 2), H + " (4096 / 32)"),
    _m("Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", 32, 8, 128, (2, 4, 8), H + " (4096 / 32)"),
    _m("Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-v0.1", 48, 8, 128, (4, 8), H + " (6144 / 48)"),
    _m("Mistral-Large-Instruct-2407", "mistralai/Mistral-Large-Instruct-2407", 96, 8, 128, (4, 8),
       H + " (12288 / 96)"),
    # Gemma 2 and 3 (config.json has head_dim)
    _m("Gemma-2-2B", "google/gemma-2-2b", 8, 4, 256, (1,)),
    _m("Gemma-2-9B", "google/gemma-2-9b", 16, 8, 256, (1, 2)),
    _m("Gemma-2-27B", "google/gemma-2-27b", 32, 16, 128, (1, 2, 4)),
    _m("Gemma-3-1B", "google/gemma-3-1b-pt", 4, 1, 256, (1,)),
    _m("Gemma-3-4B", "google/gemma-3-4b-pt", 8, 4, 256, (1,)),
    _m("Gemma-3-12B", "google/gemma-3-12b-pt", 16, 8, 256, (1, 2)),
    _m("Gemma-3-27B", "google/gemma-3-27b-pt", 32, 16, 128, (1, 2, 4)),
    # Phi
    _m("Phi-2", "microsoft/phi-2", 32, 32, 80, (1,), H + " (2560 / 32)"),
    _m("Phi-3-mini-4k", "microsoft/Phi-3-mini-4k-instruct", 32, 32, 96, (1,), H + " (3072 / 32)"),
    _m("Phi-3.5-mini", "microsoft/Phi-3.5-mini-instruct", 32, 32, 96, (1,), H + " (3072 / 32)"),
    _m("Phi-3-medium-4k", "microsoft/Phi-3-medium-4k-instruct", 40, 10, 128, (1, 2), H + " (5120 / 40)"),
    _m("Phi-4", "microsoft/phi-4", 40, 10, 128, (1, 2), H + " (5120 / 40)"),
    _m("Phi-4-mini", "microsoft/Phi-4-mini-instruct", 24, 8, 128, (1,), H + " (3072 / 24)"),
    # Others
    _m("GLM-4-9B", "THUDM/glm-4-9b", 32, 2, 128, (1, 2, 4),
       "kv_channels (hidden_size 4096 / 32); KV heads: multi_query_group_num"),
    _m("Yi-1.5-34B", "01-ai/Yi-1.5-34B", 56, 8, 128, (2, 4, 8), H + " (7168 / 56)"),
    _m("StarCoder2-3B", "bigcode/starcoder2-3b", 24, 2, 128, (1,), H + " (3072 / 24)"),
    _m("StarCoder2-15B", "bigcode/starcoder2-15b", 48, 4, 128, (1, 2, 4), H + " (6144 / 48)"),
    _m("Command-R-Plus", "CohereForAI/c4ai-command-r-plus", 96, 8, 128, (4, 8), H + " (12288 / 96)"),
)


@dataclass(frozen=True)
class PerGpuAttention:
    """What one GPU's decode kernel sees for `model` at tensor parallelism `tp`."""

    model: str
    tp: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads

    @property
    def id(self) -> str:
        return f"{self.model}-tp{self.tp}"


def per_gpu(model: ModelAttention, tp: int) -> PerGpuAttention | None:
    """Hq / TP and max(1, Hkv / TP) (replicated KV heads), or None if TP does not shard the model."""
    if model.num_q_heads % tp or (model.num_kv_heads % tp and tp % model.num_kv_heads):
        return None
    return PerGpuAttention(model.name, tp, model.num_q_heads // tp, max(1, model.num_kv_heads // tp), model.head_dim)


def per_gpu_configs(models=MODELS) -> tuple[PerGpuAttention, ...]:
    """Every (model, TP) the models list, as one GPU sees it."""
    return tuple(c for m in models for c in (per_gpu(m, tp) for tp in m.tensor_parallel) if c is not None)


def group_sizes(models=MODELS) -> set[int]:
    return {c.group for c in per_gpu_configs(models)}


def head_dims(models=MODELS) -> set[int]:
    return {c.head_dim for c in per_gpu_configs(models)}


BATCHES = (1, 4, 16, 64)
CONTEXTS = (2048, 8192, 32768, 131072)
KV_BUDGET_BYTES = 40 << 30  # of the H200's 141 GB: K and V of one layer, bf16, with room for peers


def model_matrix(models=MODELS, *, batches=BATCHES, contexts=CONTEXTS, kv_budget_bytes=KV_BUDGET_BYTES):
    """(per-GPU config, batch, context) rows whose K and V (bf16, one layer) fit the budget."""
    rows = []
    for config in per_gpu_configs(models):
        for batch in batches:
            for context in contexts:
                if 2 * 2 * batch * config.num_kv_heads * context * config.head_dim <= kv_budget_bytes:
                    rows.append((config, batch, context))
    return tuple(rows)
