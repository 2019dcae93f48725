"""A read-only streaming kernel: the read ceiling's measuring stick and the L2 flush
(it leaves L2 full of clean lines of its own buffer, so the next kernel pays no
write-back for it)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096
TILES_PER_PROGRAM = 16
STREAM_READ = {"block": 4096, "tiles": 4, "num_warps": 16}
"""The kernel shape of the read ceiling and of the per-shape read pass. Of `read_floor`'s
32 shapes on an H200 it was the fastest at 32k, 70B and D256 and within 0.25 us of the
fastest at 4k, 128k and B8 (docs/results/runs/read-floor-v4.json); no other shape came as
close everywhere. The defaults (64 K elements per program) stay for the L2 flush, whose
time is subtracted."""


@triton.jit
def _read_kernel(p_x, p_out, n_elements, BLOCK: tl.constexpr, TILES_PER_PROGRAM: tl.constexpr):
    i_p = tl.program_id(0)
    o_x = tl.arange(0, BLOCK)
    b_acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = i_p.to(tl.int64) * (BLOCK * TILES_PER_PROGRAM)
    for i_t in range(TILES_PER_PROGRAM):
        o = base + i_t * BLOCK + o_x
        b_acc += tl.load(p_x + o, mask=o < n_elements, other=0.0).to(tl.float32)
    tl.store(p_out + i_p, tl.sum(b_acc, axis=0))


class ReadPass:
    """Reads a bf16 buffer of `nbytes` once per call; writes one float per program.

    `block`, `tiles` and `num_warps` shape the kernel (elements per load, loads per
    program, warps); the ceilings and the L2 flush use the defaults.
    """

    def __init__(self, nbytes: int, *, random: bool = True, block: int = BLOCK, tiles: int = TILES_PER_PROGRAM,
                 num_warps: int = 8) -> None:
        n = nbytes // 2
        self.nbytes = n * 2
        self.block, self.tiles, self.num_warps = block, tiles, num_warps
        self.x = torch.randn(n, dtype=torch.bfloat16, device="cuda") if random else \
            torch.ones(n, dtype=torch.bfloat16, device="cuda")
        self.grid = (triton.cdiv(n, block * tiles),)
        self.out = torch.empty(self.grid[0], dtype=torch.float32, device="cuda")

    def __call__(self) -> None:
        _read_kernel[self.grid](self.x, self.out, self.x.numel(), BLOCK=self.block, TILES_PER_PROGRAM=self.tiles,
                                num_warps=self.num_warps)

    def check(self) -> None:
        """The kernel summed what torch sums (so it really read every element)."""
        expected = self.x.sum(dtype=torch.float32).item()
        got = self.out.double().sum().item()
        if abs(got - expected) > 1e-3 * max(1.0, abs(expected)) + 1.0:
            raise RuntimeError(f"read kernel summed {got}, torch summed {expected}")
