"""Model shapes the decode loop runs, with where each number comes from.

Only the shapes are real: the weights are random from a seed (nothing is downloaded).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ModelShape:
    name: str
    layers: int
    hidden: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    rope_theta: float
    source: str

    def as_dict(self) -> dict:
        return asdict(self)


MODELS = {
    "qwen2.5-0.5b": ModelShape(
        "qwen2.5-0.5b", layers=24, hidden=896, num_q_heads=14, num_kv_heads=2, head_dim=64, intermediate=4864,
        vocab=151936, rope_theta=1_000_000.0,
        source="https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json (num_hidden_layers 24, "
               "hidden_size 896, num_attention_heads 14, num_key_value_heads 2, intermediate_size 4864, "
               "vocab_size 151936, rope_theta 1000000)"),
    "llama-3-8b": ModelShape(
        "llama-3-8b", layers=32, hidden=4096, num_q_heads=32, num_kv_heads=8, head_dim=128, intermediate=14336,
        vocab=128256, rope_theta=500_000.0,
        source="https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json (num_hidden_layers 32, "
               "hidden_size 4096, num_attention_heads 32, num_key_value_heads 8, intermediate_size 14336, "
               "vocab_size 128256, rope_theta 500000)"),
    "tiny": ModelShape(
        "tiny", layers=2, hidden=128, num_q_heads=4, num_kv_heads=2, head_dim=32, intermediate=256, vocab=97,
        rope_theta=10_000.0, source="a test shape: runs on the CPU through Triton's interpreter"),
}
