"""A decoder with seeded random weights, decoding token by token over a KV cache.

Per layer: RMSNorm, a fused QKV projection, rotary embedding, the new token's K and V
written into the cache, attention over the cache, the output projection and a SwiGLU MLP,
each with a residual. The prompt is prefilled with torch's causal SDPA. A decode step reads
its position from device tensors and writes the chosen token back to one, so it can be
captured in a CUDA graph and replayed.

The attention of a decode step is one of (`ATTENTION`):

- `paged`: `kernels.DecodeAttention` over a paged cache (pages of `PAGE_SIZE` tokens in a
  shuffled order), its unused slots NaN;
- `contiguous`: `kernels.DecodeAttention` over a contiguous cache [B, Hkv, S_max, D], its
  unused slots NaN;
- `sdpa`: torch's `scaled_dot_product_attention` over the same contiguous cache with a mask of
  the visible tokens, as a static cache of fixed size is read in a captured decode step (the
  fixed shape is what lets the step be replayed). It reads every slot and multiplies the masked
  ones by zero, so its unused slots hold zeros, not NaN. Its backend is the first of cuDNN,
  flash, memory-efficient and math that accepts the call (`sdpa_backend`).
"""

from __future__ import annotations

import hashlib
import json

import torch

from kernels.decode_layer import DecodeAttention

from .configs import ModelShape

PAGE_SIZE = 16
WEIGHT_SAMPLE = 1024
ATTENTION = ("paged", "contiguous", "sdpa")
_SDPA_BACKENDS = ("CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH")
_SDPA_GQA = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    variance = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(variance + eps)).to(x.dtype) * weight


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x [..., D]; cos, sin broadcast to [..., D/2]
    first, second = x.float().chunk(2, dim=-1)
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1).to(x.dtype)


class Decoder:
    """Weights, caches and the decode step of one model shape, batch `batch`, attention `attention` (`ATTENTION`)."""

    def __init__(self, shape: ModelShape, *, batch: int, max_tokens: int, seed: int, dtype=torch.bfloat16, device="cuda",
                 attention: str = "paged"):
        if attention not in ATTENTION:
            raise ValueError(f"attention {attention!r}: expected one of {', '.join(ATTENTION)}")
        self.shape, self.batch, self.max_tokens, self.dtype = shape, batch, max_tokens, dtype
        self.kind = attention
        self.device = torch.device(device)
        generator = torch.Generator(device=self.device).manual_seed(seed)

        def weight(*size, fan_in):
            return (torch.randn(*size, generator=generator, device=self.device, dtype=torch.float32)
                    / fan_in ** 0.5).to(dtype)

        s = shape
        qkv_width = (s.num_q_heads + 2 * s.num_kv_heads) * s.head_dim
        self.embedding = weight(s.vocab, s.hidden, fan_in=1)
        self.layers = [
            {
                "ln1": torch.ones(s.hidden, device=self.device, dtype=dtype),
                "wqkv": weight(s.hidden, qkv_width, fan_in=s.hidden),
                "wo": weight(s.num_q_heads * s.head_dim, s.hidden, fan_in=s.num_q_heads * s.head_dim),
                "ln2": torch.ones(s.hidden, device=self.device, dtype=dtype),
                "w_gate_up": weight(s.hidden, 2 * s.intermediate, fan_in=s.hidden),
                "w_down": weight(s.intermediate, s.hidden, fan_in=s.intermediate),
            }
            for _ in range(s.layers)
        ]
        self.final_norm = torch.ones(s.hidden, device=self.device, dtype=dtype)
        inv_freq = 1.0 / (s.rope_theta ** (torch.arange(0, s.head_dim, 2, device=self.device, dtype=torch.float64) / s.head_dim))
        angles = torch.arange(max_tokens, device=self.device, dtype=torch.float64)[:, None] * inv_freq[None, :]
        self.cos, self.sin = angles.cos().float(), angles.sin().float()  # [max_tokens, D/2]

        if attention == "paged":
            pages_per_request = -(-max_tokens // PAGE_SIZE)
            num_blocks = batch * pages_per_request
            order = torch.randperm(num_blocks, generator=torch.Generator().manual_seed(seed + 1))
            self.block_table = order.view(batch, pages_per_request).to(torch.int32).to(self.device)
            cache_shape = (num_blocks, s.num_kv_heads, PAGE_SIZE, s.head_dim)
        else:
            self.block_table = None
            cache_shape = (batch, s.num_kv_heads, max_tokens, s.head_dim)
        unused = 0.0 if attention == "sdpa" else float("nan")
        self.k_caches = [torch.full(cache_shape, unused, device=self.device, dtype=dtype) for _ in range(s.layers)]
        self.v_caches = [torch.full(cache_shape, unused, device=self.device, dtype=dtype) for _ in range(s.layers)]
        self.attention = None if attention == "sdpa" else DecodeAttention(
            s.num_q_heads, s.num_kv_heads, s.head_dim, max_batch=batch, dtype=dtype, device=self.device,
            page_size=PAGE_SIZE if attention == "paged" else None)
        self.sdpa_backend: str | None = None  # chosen at the first step (`_sdpa`)
        self.slot_positions = torch.arange(max_tokens, device=self.device)
        self.requests = torch.arange(batch, device=self.device)
        self.tokens = torch.zeros(batch, dtype=torch.long, device=self.device)
        self.positions = torch.zeros(batch, dtype=torch.long, device=self.device)
        self.visible = torch.zeros(batch, dtype=torch.int32, device=self.device)
        self.attn_out = torch.empty(batch, s.num_q_heads, s.head_dim, device=self.device, dtype=dtype)
        self.generated = torch.zeros(max_tokens, batch, dtype=torch.long, device=self.device)
        self.step_index = torch.zeros(1, dtype=torch.long, device=self.device)
        self.logits: torch.Tensor | None = None  # the last step's logits [B, vocab]

    def weights_identity(self) -> str:
        """SHA-256 of the shape, and of a fixed sample of every weight tensor's bytes."""
        digest = hashlib.sha256(json.dumps(self.shape.as_dict(), sort_keys=True).encode())
        tensors = [self.embedding] + [layer[k] for layer in self.layers for k in sorted(layer)]
        for tensor in tensors:
            flat = tensor.reshape(-1)
            step = max(1, flat.numel() // WEIGHT_SAMPLE)
            digest.update(flat[::step][:WEIGHT_SAMPLE].float().cpu().numpy().tobytes())
        return digest.hexdigest()

    def _slots(self, positions: torch.Tensor):
        pages = self.block_table.gather(1, (positions // PAGE_SIZE).view(-1, 1).to(torch.int64)).view(-1).long()
        return pages, positions % PAGE_SIZE

    def _write(self, index: int, k: torch.Tensor, v: torch.Tensor) -> None:
        """The new token's K and V [B, Hkv, D] into layer `index`'s cache, at each request's position."""
        if self.kind == "paged":
            pages, offsets = self._slots(self.positions)
            self.k_caches[index][pages, :, offsets] = k
            self.v_caches[index][pages, :, offsets] = v
        else:
            self.k_caches[index][self.requests, :, self.positions] = k
            self.v_caches[index][self.requests, :, self.positions] = v

    def _attend(self, index: int, q: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Attention of q [B, Hq, D] over layer `index`'s cache: [B, Hq, D]."""
        k_cache, v_cache = self.k_caches[index], self.v_caches[index]
        if self.kind != "sdpa":
            return self.attention(q, k_cache, v_cache, self.visible, block_table=self.block_table,
                                  max_visible_tokens=self.max_tokens, out=self.attn_out)
        return self._sdpa(q[:, :, None, :], k_cache, v_cache, mask).squeeze(2)

    def _sdpa(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        if not _SDPA_GQA:  # torch < 2.5 has no enable_gqa: the KV heads are repeated for each query head
            group = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        extra = {"enable_gqa": True} if _SDPA_GQA else {}
        if self.sdpa_backend is None:
            for name in _SDPA_BACKENDS:
                backend = getattr(SDPBackend, name, None)
                if backend is None:
                    continue
                try:
                    with sdpa_kernel([backend]):
                        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, **extra)
                except RuntimeError:
                    continue  # this backend does not take the call (a mask, a head dim, the device)
                self.sdpa_backend = name
                break
            else:
                raise RuntimeError("no SDPA backend accepts the decode step's call")
        with sdpa_kernel([getattr(SDPBackend, self.sdpa_backend)]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, **extra)

    def route(self) -> dict:
        """What the decode step's attention runs: the layer's route, or the SDPA backend."""
        if self.kind == "sdpa":
            return {"path": "sdpa", "backend": self.sdpa_backend}
        route = self.attention.route_for(self.batch, 1, self.max_tokens, paged=self.kind == "paged")
        return {"path": route.path, "num_splits": route.num_splits}

    def prefill(self, prompt: torch.Tensor) -> None:
        """Run the prompt [B, P] through the model with causal SDPA, filling the caches."""
        s, batch, length = self.shape, prompt.shape[0], prompt.shape[1]
        group = s.num_q_heads // s.num_kv_heads
        positions = torch.arange(length, device=self.device)
        cos, sin = self.cos[positions][None, :, None, :], self.sin[positions][None, :, None, :]
        x = self.embedding[prompt]  # [B, P, H]
        for index, layer in enumerate(self.layers):
            h = _rms_norm(x, layer["ln1"])
            q, k, v = (h @ layer["wqkv"]).split(
                [s.num_q_heads * s.head_dim, s.num_kv_heads * s.head_dim, s.num_kv_heads * s.head_dim], dim=-1)
            q = _rotate(q.view(batch, length, s.num_q_heads, s.head_dim), cos, sin)
            k = _rotate(k.view(batch, length, s.num_kv_heads, s.head_dim), cos, sin)
            v = v.view(batch, length, s.num_kv_heads, s.head_dim)
            self._prefill_cache(index, positions, k, v)
            attn = torch.nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(group, dim=1),
                v.transpose(1, 2).repeat_interleave(group, dim=1), is_causal=True)
            x = x + attn.transpose(1, 2).reshape(batch, length, -1) @ layer["wo"]
            x = x + self._mlp(_rms_norm(x, layer["ln2"]), layer)
        logits = _rms_norm(x[:, -1], self.final_norm) @ self.embedding.t()
        self.tokens.copy_(logits.argmax(-1))
        self.positions.fill_(length)
        self.visible.fill_(length + 1)

    def _prefill_cache(self, index: int, positions: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """The prompt's K and V [B, P, Hkv, D] into layer `index`'s cache."""
        if self.kind == "paged":
            pages = self.block_table[:, positions // PAGE_SIZE].long()  # [B, P]
            offsets = (positions % PAGE_SIZE).expand(k.shape[0], positions.numel())
            self.k_caches[index][pages, :, offsets] = k
            self.v_caches[index][pages, :, offsets] = v
        else:
            self.k_caches[index][:, :, :positions.numel()] = k.transpose(1, 2)
            self.v_caches[index][:, :, :positions.numel()] = v.transpose(1, 2)

    def _mlp(self, h: torch.Tensor, layer: dict) -> torch.Tensor:
        gate, up = (h @ layer["w_gate_up"]).chunk(2, dim=-1)
        return (torch.nn.functional.silu(gate) * up) @ layer["w_down"]

    def step(self) -> None:
        """Decode one token for every request: reads and advances the device-side state only."""
        s, batch = self.shape, self.batch
        cos, sin = self.cos[self.positions][:, None, :], self.sin[self.positions][:, None, :]
        mask = (self.slot_positions[None, :] < self.visible[:, None].long())[:, None, None, :] \
            if self.kind == "sdpa" else None  # [B, 1, 1, S_max]: the visible tokens, the new one among them
        x = self.embedding[self.tokens]  # [B, H]
        for index, layer in enumerate(self.layers):
            h = _rms_norm(x, layer["ln1"])
            q, k, v = (h @ layer["wqkv"]).split(
                [s.num_q_heads * s.head_dim, s.num_kv_heads * s.head_dim, s.num_kv_heads * s.head_dim], dim=-1)
            q = _rotate(q.view(batch, s.num_q_heads, s.head_dim), cos, sin)
            k = _rotate(k.view(batch, s.num_kv_heads, s.head_dim), cos, sin)
            self._write(index, k, v.view(batch, s.num_kv_heads, s.head_dim))
            attn = self._attend(index, q, mask)
            x = x + attn.reshape(batch, -1) @ layer["wo"]
            x = x + self._mlp(_rms_norm(x, layer["ln2"]), layer)
        logits = _rms_norm(x, self.final_norm) @ self.embedding.t()
        self.logits = logits
        self.tokens.copy_(logits.argmax(-1))
        self.generated.index_copy_(0, self.step_index, self.tokens.view(1, -1))
        self.step_index.add_(1)
        self.positions.add_(1)
        self.visible.add_(1)
