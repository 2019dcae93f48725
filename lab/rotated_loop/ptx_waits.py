"""Where the compiled KV loop waits on its tensor-core dots: the PTX of the split partial kernel,
committed or rotated loop, compiled for sm_90 without a GPU (as `validation.bench.loop_sass` does).

    python lab/rotated_loop/ptx_waits.py committed|rotated B,Hq,Hkv,D,S[,R] NUM_SPLITS

Prints, in program order, the loop labels and branches, the wgmma fences, commits and waits
(`wgmma.wait_group N`: N dot groups may still run), and the count of mma.sync instructions.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str]) -> int:
    variant, shape_text, splits = argv
    if variant == "rotated":
        import rotated

        rotated.install()
    import torch

    from validation.bench import loop_sass

    launch, tensors = loop_sass.split_launch(loop_sass.parse_shape(shape_text), "bf16", torch.bfloat16, int(splits))
    ptx = loop_sass.compile_launch(launch, tensors, 90).asm["ptx"]
    mma_sync = 0
    for number, line in enumerate(ptx.splitlines(), 1):
        text = line.strip()
        mma_sync += text.startswith("mma.sync")
        if re.search(r"wgmma\.(wait_group|commit_group|fence)|^\$L__BB\d+_\d+:|\bbra\b", text):
            print(f"{number:6d}  {text[:100]}")
    print(f"mma.sync instructions: {mma_sync}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
