"""Timing on the device with CUDA events around CUDA-graph replays; every sample is kept.

Every implementation is timed the same way: its call is captured many times into one
CUDA graph, and each replay's elapsed time divided by the number of calls is one
sample, so the numbers are device time, not the host's launch overhead (a Python
wrapper can take longer to launch than a short kernel runs). Shapes under 64 MB of KV
replay back to back (warm L2, as a decode step loop does). For larger shapes a
256 MB read-only pass precedes every call, so each call starts with an L2 holding
none of its data (and no dirty lines to write back); the same graph of flushes alone
is timed and its median subtracted.

`time_eager` times the same call without a graph: CUDA events around a loop of back-to-back
eager calls, so each call's host path (validation, launch) is in the time wherever it is
longer than the kernel; that is what a caller without CUDA graphs gets.

`time_events` (``triton.testing.do_bench``: events around each eager call, L2 zeroed
before each) remains for the memory ceilings, whose single launches run for
milliseconds.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

import torch

FLUSH_BYTES = 256 << 20


@dataclass
class Timing:
    """Per-call times in microseconds and how they were taken."""

    method: str
    samples_us: list[float] = field(default_factory=list)

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us)

    def to_json(self) -> dict:
        return {"method": self.method, "median_us": self.median_us, "samples_us": self.samples_us}


_FLUSH = None


def _flush_pass():
    global _FLUSH
    if _FLUSH is None:
        from .read_kernel import ReadPass

        _FLUSH = ReadPass(FLUSH_BYTES)
    return _FLUSH


def _capture(fn: Callable[[], object] | None, calls: int, flush) -> torch.cuda.CUDAGraph:
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            if flush is not None:
                flush()
            if fn is not None:
                fn()
    return graph


def _replay_ms(graph: torch.cuda.CUDAGraph, replays: int) -> list[float]:
    graph.replay()
    torch.cuda.synchronize()
    out = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return out


def time_graph_replay(fn: Callable[[], object], *, flush_l2: bool, calls_per_graph: int = 0,
                      replays: int = 25) -> Timing:
    """Per-call device time of `fn` (graph-capturable: preallocated outputs and workspace)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    flush = _flush_pass() if flush_l2 else None
    if calls_per_graph <= 0:
        probe = _capture(fn, 5, None)
        per_call_ms = max(statistics.median(_replay_ms(probe, 3)) / 5, 1e-4)
        del probe
        calls_per_graph = int(min(200, max(10, 1.0 / per_call_ms)))
    graph = _capture(fn, calls_per_graph, flush)
    times = _replay_ms(graph, replays)
    del graph
    method = f"cuda-graph replay, {calls_per_graph} calls per graph, {replays} replays"
    if flush is not None:
        baseline = _capture(None, calls_per_graph, flush)
        base = statistics.median(_replay_ms(baseline, replays))
        del baseline
        times = [t - base for t in times]
        method += f", a {FLUSH_BYTES >> 20} MB read pass before each call (its time subtracted)"
    return Timing(method, [t * 1e3 / calls_per_graph for t in times])


def time_events(fn: Callable[[], object], *, warmup_ms: int = 25, rep_ms: int = 100) -> Timing:
    """`triton.testing.do_bench`: CUDA events around each call, L2 flushed before each."""
    import triton.testing

    samples_ms = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    return Timing("cuda events per call, L2 flushed (triton.testing.do_bench)", [t * 1e3 for t in samples_ms])


def time_call(fn: Callable[[], object], *, cold_l2: bool) -> Timing:
    """Graph replay; with `cold_l2` every call starts from an L2 without its data."""
    return time_graph_replay(fn, flush_l2=cold_l2)


def time_eager(fn: Callable[[], object], *, calls: int = 100, replays: int = 25) -> Timing:
    """Per-call time of `calls` back-to-back eager calls between two CUDA events (host path included)."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / calls)
    return Timing(f"eager, {calls} back-to-back calls between cuda events, {replays} rounds", samples)
