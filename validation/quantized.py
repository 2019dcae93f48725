"""Quantized-cache inputs of the suites: the seeded fixtures of `validation.fixtures`, with
K and V quantized to int8 (a scale per token and KV head) or FP8 e4m3 (a scale per KV
head or per tensor), and the calls of each route on them.

The truth is the dequantized cache (stored * scale, float32): the fp64 oracle reads it, so
a kernel is judged on its own arithmetic, not on the quantization error (that is
`validation.quant_error`). Everything that must not be read is poisoned: cache slots past a
request's visible count, unused pages and spare pages hold int8 127 (with a NaN scale) or
FP8 NaN; unused per-token scale slots hold NaN.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import torch

from kernels.decode_attention.quantize import dequantize_kv, quantize_kv_fp8, quantize_kv_int8

from .fixtures import DecodeFixture, build_fixture, tensor_bytes
from .routes import Route
from .shapes import Case

KV_FORMATS = ("int8", "int8-f16", "fp8-head", "fp8-tensor")
"""int8 with float32 / float16 per-token scales; fp8 e4m3 with a float32 scale per KV head / per tensor."""


@dataclass(frozen=True)
class QuantCase:
    """A case of `validation.shapes`, the q dtype and the cache format."""

    case: Case
    dtype: str
    kv_format: str

    @property
    def family(self) -> str:
        """"int8" or "fp8": the key under which the numeric suite records this case's worst metrics."""
        return self.kv_format.split("-")[0]

    @property
    def id(self) -> str:
        return f"{self.case.id}-{self.dtype}-{self.kv_format}"

    def __str__(self) -> str:
        return self.id


_A = Case(3, 1, 8, 2, 64, (70, 0, 33), page_size=16, seed=31)
_B = Case(2, 4, 4, 2, 32, (45, 17), page_size=8, seed=32)
QUANT_CPU_CASES = (
    QuantCase(_A, "bf16", "int8"),
    QuantCase(_A, "bf16", "fp8-head"),
    QuantCase(_B, "fp16", "int8-f16"),
    QuantCase(_B, "fp16", "fp8-tensor"),
)
"""Small on purpose: the interpreter runs each route of these in about a second."""

_G1 = Case(4, 1, 32, 8, 128, (8191, 4096, 1, 0), seed=10)
_G2 = Case(1, 16, 24, 4, 256, (20688,), seed=16)
QUANT_GPU_CASES = tuple(QuantCase(c, "bf16", f) for c in (_G1, _G2) for f in KV_FORMATS)

QUANT_ROUTES = (
    Route(paged=False),
    Route(paged=True),
    Route(paged=False, num_splits=2),
    Route(paged=True, num_splits=5),
)


@dataclass
class QuantFixture:
    """A `DecodeFixture`'s tokens in a quantized cache, contiguous and paged, with their scales."""

    qcase: QuantCase
    q: torch.Tensor
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    k_scale: torch.Tensor
    v_scale: torch.Tensor
    k_pages: torch.Tensor
    v_pages: torch.Tensor
    k_page_scale: torch.Tensor
    v_page_scale: torch.Tensor
    block_table: torch.Tensor
    visible_tokens: torch.Tensor

    @property
    def key(self) -> str:
        return self.qcase.id

    @property
    def case(self) -> Case:
        return self.qcase.case

    def sha256(self) -> str:
        digest = hashlib.sha256()
        for t in (self.q, self.k_cache, self.v_cache, self.k_scale, self.v_scale, self.k_pages, self.v_pages,
                  self.k_page_scale, self.v_page_scale, self.block_table, self.visible_tokens):
            digest.update(quant_tensor_bytes(t))
        return digest.hexdigest()

    def poisoned_out(self) -> torch.Tensor:
        return torch.full_like(self.q, float("nan"))

    def dequantized(self, paged: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """(K, V) as float32 stored * scale: the cache the oracle takes as truth."""
        if paged:
            return dequantize_kv(self.k_pages, self.k_page_scale), dequantize_kv(self.v_pages, self.v_page_scale)
        return dequantize_kv(self.k_cache, self.k_scale), dequantize_kv(self.v_cache, self.v_scale)

    def request(self, b: int) -> "QuantFixture":
        """Request b alone, as a batch of one over the same cache contents and pages."""
        per_token = self.k_cache.dtype == torch.int8
        return replace(
            self, q=self.q[b: b + 1].clone(), k_cache=self.k_cache[b: b + 1].clone(),
            v_cache=self.v_cache[b: b + 1].clone(),
            k_scale=self.k_scale[b: b + 1].clone() if per_token else self.k_scale,
            v_scale=self.v_scale[b: b + 1].clone() if per_token else self.v_scale,
            block_table=self.block_table[b: b + 1].clone(), visible_tokens=self.visible_tokens[b: b + 1].clone())


def quant_tensor_bytes(t: torch.Tensor) -> bytes:
    """Raw bytes of any tensor of the fixture (fp8 and int8 read as uint8)."""
    if t.dtype in (torch.float8_e4m3fn, torch.int8):
        return t.detach().contiguous().cpu().view(torch.uint8).numpy().tobytes()
    return tensor_bytes(t)


def _quantize(kind: str, x: torch.Tensor, fp8_scale=None):
    if kind.startswith("int8"):
        return quantize_kv_int8(x, scale_dtype=torch.float16 if kind == "int8-f16" else torch.float32)
    return quantize_kv_fp8(x, fp8_scale, per_head=kind == "fp8-head")


def _poison(values: torch.Tensor, scales: torch.Tensor, unused: torch.Tensor) -> None:
    """Poison the slots where `unused` ([N, Hkv, S] bool) is true, in place."""
    if values.dtype == torch.int8:
        values[unused] = 127
        scales[unused] = float("nan")
    else:
        values.view(torch.uint8)[unused] = 0x7F  # e4m3fn NaN


def build_quant_fixture(qcase: QuantCase, device="cpu") -> QuantFixture:
    """The seeded inputs of `validation.fixtures.build_fixture`, quantized and poisoned."""
    if qcase.kv_format not in KV_FORMATS:
        raise ValueError(f"kv_format must be one of {KV_FORMATS}, got {qcase.kv_format!r}")
    fx: DecodeFixture = build_fixture(qcase.case, qcase.dtype, "cpu")
    caches = {}
    for name, cont, pages in (("k", fx.k_cache, fx.k_pages), ("v", fx.v_cache, fx.v_pages)):
        unused_c = ~torch.isfinite(cont).all(dim=-1)  # [B, Hkv, S_max]: the poisoned tails
        unused_p = ~torch.isfinite(pages).all(dim=-1)  # [num_pages, Hkv, P]
        clean_c = torch.nan_to_num(cont.float(), nan=0.0, posinf=0.0)
        clean_p = torch.nan_to_num(pages.float(), nan=0.0, posinf=0.0)
        values_c, scale_c = _quantize(qcase.kv_format, clean_c)
        # paged tokens take the contiguous cache's per-head/tensor scale: the same stored values
        values_p, scale_p = _quantize(qcase.kv_format, clean_p, None if qcase.family == "int8" else scale_c)
        _poison(values_c, scale_c, unused_c)
        _poison(values_p, scale_p, unused_p)
        caches[name] = (values_c, scale_c, values_p, scale_p)
    (kc, ksc, kp, ksp), (vc, vsc, vp, vsp) = caches["k"], caches["v"]
    return QuantFixture(
        qcase=qcase, q=fx.q.to(device), k_cache=kc.to(device), v_cache=vc.to(device), k_scale=ksc.to(device),
        v_scale=vsc.to(device), k_pages=kp.to(device), v_pages=vp.to(device), k_page_scale=ksp.to(device),
        v_page_scale=vsp.to(device), block_table=fx.block_table.to(device), visible_tokens=fx.visible_tokens.to(device))


def run_quant_route(fx: QuantFixture, route: Route, *, out: torch.Tensor | None = None,
                    workspace=None) -> torch.Tensor:
    """Call the entry point of `route` on the quantized fixture, into a NaN-poisoned `out` by default."""
    import kernels

    out = fx.poisoned_out() if out is None else out
    if route.paged:
        k, v, scales = fx.k_pages, fx.v_pages, dict(k_scale=fx.k_page_scale, v_scale=fx.v_page_scale)
        if route.num_splits is None:
            return kernels.attention_decode_paged(fx.q, k, v, fx.block_table, fx.visible_tokens, out=out, **scales)
        return kernels.attention_decode_paged_splitkv(fx.q, k, v, fx.block_table, fx.visible_tokens,
                                                      num_splits=route.num_splits, workspace=workspace, out=out,
                                                      **scales)
    k, v, scales = fx.k_cache, fx.v_cache, dict(k_scale=fx.k_scale, v_scale=fx.v_scale)
    if route.num_splits is None:
        return kernels.attention_decode(fx.q, k, v, fx.visible_tokens, out=out, **scales)
    return kernels.attention_decode_splitkv(fx.q, k, v, fx.visible_tokens, num_splits=route.num_splits,
                                            workspace=workspace, out=out, **scales)
