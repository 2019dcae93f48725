"""Timing on the device: CUDA-graph replay for launch-bound shapes, per-call CUDA events
with a cold L2 (``triton.testing.do_bench``) for the rest. Every sample is kept."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

import torch


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


def time_graph_replay(fn: Callable[[], object], *, calls_per_graph: int = 0, replays: int = 25,
                      flush_l2: bool = False) -> Timing:
    """Capture `calls_per_graph` back-to-back calls in one CUDA graph, replay it `replays`
    times and report elapsed / calls for each replay.

    `fn` must be graph-capturable (preallocated outputs and workspace). With `flush_l2`
    the graph also writes a 256 MB buffer before every call, and that write's own time,
    measured the same way, is subtracted.
    """
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    if calls_per_graph <= 0:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(10):
            fn()
        end.record()
        torch.cuda.synchronize()
        per_call_ms = max(start.elapsed_time(end) / 10, 1e-3)
        calls_per_graph = int(min(500, max(20, 2.0 / per_call_ms)))
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda") if flush_l2 else None

    def body(with_fn: bool):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls_per_graph):
                if flush is not None:
                    flush.zero_()
                if with_fn:
                    fn()
        return graph

    graph = body(True)
    baseline = body(False) if flush is not None else None

    def replay_ms(g) -> list[float]:
        g.replay()
        torch.cuda.synchronize()
        out = []
        for _ in range(replays):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            g.replay()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end))
        return out

    times = replay_ms(graph)
    if baseline is not None:
        base = statistics.median(replay_ms(baseline))
        times = [t - base for t in times]
    samples = [t * 1e3 / calls_per_graph for t in times]
    method = f"cuda-graph replay, {calls_per_graph} calls per graph" + (", L2 flushed per call" if flush_l2 else "")
    return Timing(method, samples)


def time_events(fn: Callable[[], object], *, warmup_ms: int = 25, rep_ms: int = 100) -> Timing:
    """`triton.testing.do_bench`: CUDA events around each call, L2 flushed before each."""
    import triton.testing

    samples_ms = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    return Timing("cuda events per call, L2 flushed (triton.testing.do_bench)", [t * 1e3 for t in samples_ms])


def time_call(fn: Callable[[], object], *, graph: bool, flush_l2: bool = False) -> Timing:
    """Graph replay for launch-bound shapes, per-call events otherwise."""
    if graph:
        return time_graph_replay(fn, flush_l2=flush_l2)
    return time_events(fn)
