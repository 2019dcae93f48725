"""Seeded inputs of the suites, with sentinel poisoning of everything that must not be read.

A fixture holds the same tokens twice: in a contiguous cache and in a paged cache with a
shuffled block table. Cache slots past a request's visible count, unused pages, and the
block-table entries past the last needed page (which point at all-poison pages) hold NaN
in K and +Inf in V, so a read that should have been masked shows up in the output.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch

from .shapes import Case
from .tolerances import TORCH_DTYPES

SPARE_PAGES = 3


@dataclass
class DecodeFixture:
    case: Case
    dtype: str
    q: torch.Tensor
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    k_pages: torch.Tensor
    v_pages: torch.Tensor
    block_table: torch.Tensor
    visible_tokens: torch.Tensor

    @property
    def key(self) -> str:
        return f"{self.case.id}-{self.dtype}"

    def sha256(self) -> str:
        """SHA-256 of every input's bytes, in a fixed order."""
        digest = hashlib.sha256()
        for t in (self.q, self.k_cache, self.v_cache, self.k_pages, self.v_pages, self.block_table, self.visible_tokens):
            digest.update(tensor_bytes(t))
        return digest.hexdigest()

    def poisoned_out(self) -> torch.Tensor:
        """An output buffer full of NaN: an element the kernel does not write stays NaN."""
        return torch.full_like(self.q, float("nan"))

    def request(self, b: int) -> "DecodeFixture":
        """Request b alone, as a batch of one over the same cache contents and pages."""
        return DecodeFixture(
            case=self.case,
            dtype=self.dtype,
            q=self.q[b : b + 1].clone(),
            k_cache=self.k_cache[b : b + 1].clone(),
            v_cache=self.v_cache[b : b + 1].clone(),
            k_pages=self.k_pages,
            v_pages=self.v_pages,
            block_table=self.block_table[b : b + 1].clone(),
            visible_tokens=self.visible_tokens[b : b + 1].clone(),
        )


def tensor_bytes(t: torch.Tensor) -> bytes:
    """The raw bytes of a tensor in row-major order (bf16 read as int16)."""
    t = t.detach().contiguous().cpu()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def tensor_sha256(t: torch.Tensor) -> str:
    return hashlib.sha256(tensor_bytes(t)).hexdigest()


def build_fixture(case: Case, dtype: str, device="cpu") -> DecodeFixture:
    """The seeded inputs of one case in one dtype ("bf16" or "fp16"), on `device`."""
    torch_dtype = TORCH_DTYPES[dtype]
    gen = torch.Generator().manual_seed(case.seed * 1000 + (1 if dtype == "bf16" else 2))
    b, r, hq, hkv, d, p = case.batch, case.rows, case.num_q_heads, case.num_kv_heads, case.head_dim, case.page_size
    q_shape = (b, hq, d) if r == 1 else (b, r, hq, d)
    q = torch.randn(q_shape, generator=gen).to(torch_dtype)
    k = torch.randn((b, hkv, case.s_max, d), generator=gen).to(torch_dtype)
    v = torch.randn((b, hkv, case.s_max, d), generator=gen).to(torch_dtype)
    for i, visible in enumerate(case.visible):
        k[i, :, visible:] = float("nan")
        v[i, :, visible:] = float("inf")

    needed = [-(-visible // p) for visible in case.visible]
    max_blocks = max(needed) + 1
    num_pages = sum(needed) + SPARE_PAGES
    order = torch.randperm(num_pages, generator=gen)
    poison_pages = order[sum(needed) :]
    k_pages = torch.full((num_pages, hkv, p, d), float("nan")).to(torch_dtype)
    v_pages = torch.full((num_pages, hkv, p, d), float("inf")).to(torch_dtype)
    pick = torch.randint(0, SPARE_PAGES, (b, max_blocks), generator=gen)
    block_table = poison_pages[pick].to(torch.int32)
    used = 0
    for i, visible in enumerate(case.visible):
        for j in range(needed[i]):
            page = int(order[used])
            used += 1
            block_table[i, j] = page
            lo, hi = j * p, min((j + 1) * p, visible)
            k_pages[page, :, : hi - lo] = k[i, :, lo:hi]
            v_pages[page, :, : hi - lo] = v[i, :, lo:hi]
    visible_tokens = torch.tensor(case.visible, dtype=torch.int32)
    return DecodeFixture(
        case=case,
        dtype=dtype,
        q=q.to(device),
        k_cache=k.to(device),
        v_cache=v.to(device),
        k_pages=k_pages.to(device),
        v_pages=v_pages.to(device),
        block_table=block_table.to(device),
        visible_tokens=visible_tokens.to(device),
    )
