"""Fresh-process A/B measurement of an end-to-end metric, written as an `e2e` evidence artifact.

    python -m gates.ab --id e2e-decode --out docs/evidence/e2e-decode.json \\
        --env-var DESIGN_GATES_SPLITKV --arm baseline=0 --arm split-kv=1 \\
        --metric tokens_per_s --samples 3 --fixture prompt=data/prompt.txt \\
        --source 'kernels/**' -- python -m examples.decode_loop --model qwen2.5-0.5b

Each sample is a new process; the arms run interleaved (A B A B ...) after one
discarded warm-up per arm, and differ only in the declared variable. See
`gates.ab.harness.run_ab` for the rules the harness refuses to break.
"""

from gates.ab.arms import Arm, ArmsError, Variable
from gates.ab.harness import AbError, AbPlan, run_ab

__all__ = ["AbError", "AbPlan", "Arm", "ArmsError", "Variable", "run_ab"]
