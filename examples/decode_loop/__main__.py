"""Decode token by token with `kernels.DecodeAttention` and print one JSON line of results.

    python -m examples.decode_loop --model llama-3-8b --context 32768 --steps 128

The decode step is captured in a CUDA graph and replayed (`--eager` runs it as plain
calls; on the CPU it always does). The split-KV switch is the layer's own:
DESIGN_GATES_SPLITKV=1 turns it on. `--attention` picks what a step's attention runs:
the layer over a paged cache (`paged`, the default), the layer over a contiguous cache
(`contiguous`), or torch's SDPA over that contiguous cache (`sdpa`, the backend a user
would otherwise pick; `examples/decode_loop/model.py` says how it is called). The JSON
line holds `tokens_per_s`, `step_ms`, `outputs_sha256` (the generated token ids),
`outputs_sample` (logits of the first decoded step, the same positions of every request:
different kernels are compared on them within a tolerance, since their bits differ and
a token chosen differently changes every later step), `fixtures` (the prompt's and the
seeded weights' identities), the route the attention took, and the environment, so that
`python -m gates.ab` can compare processes with the switch off and on, or one attention
with another (`--arg-option --attention`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time

import torch

from kernels.decode_layer import SWITCH_ENV

from .configs import MODELS
from .model import ATTENTION, Decoder

OUTPUTS_SAMPLE = 256  # logits per request in `outputs_sample`, evenly spaced over the vocabulary


def _environment(device: torch.device) -> dict:
    import triton

    on_gpu = device.type == "cuda"
    return {
        "backend": "cuda" if on_gpu else ("interpreter-cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cpu"),
        "device": torch.cuda.get_device_name(device) if on_gpu else platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda if on_gpu else None,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.decode_loop", description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-0.5b")
    parser.add_argument("--context", type=int, default=32768, help="prompt tokens prefilled before decoding")
    parser.add_argument("--steps", type=int, default=128, help="tokens decoded and timed")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--layers", type=int, help="run fewer layers than the model has")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eager", action="store_true", help="no CUDA graph")
    parser.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    parser.add_argument("--attention", choices=ATTENTION, default="paged",
                        help="the layer over a paged or a contiguous cache, or torch SDPA over a contiguous cache")
    args = parser.parse_args(argv)
    if args.context < 1 or args.steps < 1 or args.batch < 1:
        parser.error("--context, --steps and --batch must be positive")

    device = torch.device("cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu")
    shape = MODELS[args.model]
    if args.layers:
        from dataclasses import replace

        shape = replace(shape, layers=min(args.layers, shape.layers))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    max_tokens = args.context + args.steps + 1
    decoder = Decoder(shape, batch=args.batch, max_tokens=max_tokens, seed=args.seed, dtype=dtype, device=device,
                      attention=args.attention)
    prompt = torch.randint(0, shape.vocab, (args.batch, args.context),
                           generator=torch.Generator().manual_seed(args.seed + 2)).to(device)
    with torch.no_grad():
        decoder.prefill(prompt)
        decoder.step()  # the first decoded token, eager: compiles the kernels
        stride = max(1, shape.vocab // OUTPUTS_SAMPLE)
        outputs_sample = decoder.logits[:, ::stride][:, :OUTPUTS_SAMPLE].float().reshape(-1).cpu().tolist()
        use_graph = device.type == "cuda" and not args.eager
        if use_graph:
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                decoder.step()
            run_step = graph.replay
        else:
            run_step = decoder.step
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(args.steps - 1):
            run_step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    timed_steps = max(args.steps - 1, 1)
    generated = decoder.generated[:args.steps].cpu()
    print(json.dumps({
        "model": shape.name,
        "layers": shape.layers,
        "batch": args.batch,
        "context": args.context,
        "steps": args.steps,
        "cuda_graph": use_graph,
        "split_kv_switch": os.environ.get(SWITCH_ENV, "0"),
        "attention": args.attention,
        "route": decoder.route(),
        "tokens_per_s": args.batch * timed_steps / elapsed,
        "step_ms": 1e3 * elapsed / timed_steps,
        "outputs_sha256": hashlib.sha256(generated.numpy().astype("int64").tobytes()).hexdigest(),
        "outputs_sample": outputs_sample,
        "fixtures": {
            "prompt": hashlib.sha256(prompt.cpu().numpy().astype("int64").tobytes()).hexdigest(),
            "weights": decoder.weights_identity(),
        },
        "environment": _environment(device),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
