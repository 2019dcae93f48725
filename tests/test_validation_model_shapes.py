"""The model matrix: public models' attention shapes with their sources, per GPU at their
tensor-parallel degrees; every group size and head dim they produce is admitted by the
layer and covered by the CPU suites."""

import pytest

from kernels.decode_layer import VALIDATED, DecodeAttention
from validation.model_shapes import MODELS, model_matrix, per_gpu, per_gpu_configs
from validation.shapes import CPU_CASES, GPU_CASES


def test_at_least_25_models_each_with_its_config_json_source():
    assert len(MODELS) >= 25
    assert len({m.name for m in MODELS}) == len(MODELS)
    for m in MODELS:
        assert m.source == f"https://huggingface.co/{m.repo}/blob/main/config.json"
        assert m.head_dim_source and m.tensor_parallel


@pytest.mark.parametrize("name, heads", [
    ("Llama-3.1-8B", (32, 8, 128)), ("Llama-3.1-70B", (64, 8, 128)), ("Llama-3.1-405B", (128, 8, 128)),
    ("Llama-3.2-1B", (32, 8, 64)), ("Llama-3.2-3B", (24, 8, 128)), ("Qwen2.5-0.5B", (14, 2, 64)),
    ("Qwen2.5-7B", (28, 4, 128)), ("Qwen2.5-14B", (40, 8, 128)), ("Mixtral-8x22B-v0.1", (48, 8, 128)),
    ("Gemma-2-2B", (8, 4, 256)), ("Gemma-2-27B", (32, 16, 128)), ("Phi-3-mini-4k", (32, 32, 96)),
    ("Phi-4", (40, 10, 128)), ("GLM-4-9B", (32, 2, 128)),
])
def test_known_configurations(name, heads):
    (model,) = [m for m in MODELS if m.name == name]
    assert (model.num_q_heads, model.num_kv_heads, model.head_dim) == heads


def test_tensor_parallelism_shards_query_heads_and_replicates_too_few_kv_heads():
    (llama70,) = [m for m in MODELS if m.name == "Llama-3.1-70B"]
    assert (per_gpu(llama70, 8).num_q_heads, per_gpu(llama70, 8).num_kv_heads) == (8, 1)
    (glm,) = [m for m in MODELS if m.name == "GLM-4-9B"]
    assert (per_gpu(glm, 4).num_q_heads, per_gpu(glm, 4).num_kv_heads, per_gpu(glm, 4).group) == (8, 1, 8)
    (qwen7,) = [m for m in MODELS if m.name == "Qwen2.5-7B"]
    assert per_gpu(qwen7, 8) is None, "28 query heads do not split over 8 GPUs"


def test_deepseek_mla_is_left_out_with_its_reason():
    import validation.model_shapes as module

    assert not any("DeepSeek" in m.name for m in MODELS)
    assert "DeepSeek-V2-Lite" in module.__doc__ and "latent attention" in module.__doc__


def test_every_group_and_head_dim_of_the_matrix_is_admitted_and_covered_on_the_cpu():
    configs = per_gpu_configs()
    assert {c.group for c in configs} >= {5, 12, 16}
    cpu_groups, cpu_dims = {c.group for c in CPU_CASES}, {c.head_dim for c in CPU_CASES}
    for c in configs:
        assert c.group in VALIDATED.group_sizes and c.head_dim in VALIDATED.head_dims, c.id
        assert c.group in cpu_groups and c.head_dim in cpu_dims, c.id
        layer = DecodeAttention(c.num_q_heads, c.num_kv_heads, c.head_dim, max_batch=1, device="cpu",
                                split_kv=True, num_sms=132)
        assert layer.route_for(1, 1, 32768).is_split, (c.id, layer.route_for(1, 1, 32768).reason)


def test_every_per_gpu_shape_has_a_case_and_the_gpu_run_checks_every_third():
    from validation.shapes import MODEL_CASES, model_cases

    shapes = {(c.num_q_heads, c.num_kv_heads, c.head_dim) for c in model_cases()}
    assert {(c.num_q_heads, c.num_kv_heads, c.head_dim) for c in per_gpu_configs()} <= shapes
    assert MODEL_CASES == model_cases()[::3] and len(MODEL_CASES) >= 10


def test_the_benchmark_matrix_keeps_rows_that_fit_memory():
    rows = model_matrix()
    assert rows and all(b in (1, 4, 16, 64) and s in (2048, 8192, 32768, 131072) for _, b, s in rows)
    assert not any(c.model == "Llama-3.2-1B" and b == 64 and s == 131072 and False for c, b, s in rows)
    assert all(2 * 2 * b * c.num_kv_heads * s * c.head_dim <= 40 << 30 for c, b, s in rows)
