#!/usr/bin/env bash
# Time the layer's route, every split count, the single pass and cuDNN / flash SDPA on a
# spread of model-matrix rows (lab/routing/rows.txt), on the H200. Writes $OUT/routing-models.json
# (partial if the time runs out: the benchmark writes after every shape).
#   bash lab/routing/measure.sh WARM_SECONDS TIMED_SECONDS [ROWS_FILE=lab/routing/rows.txt] [PROFILE]
# With PROFILE (a path inside the checkout, e.g. docs/evidence/routing-split-choice-h200.json) the
# run's rows are also written as the routing profile (evidence.py), signed when the runner's key is
# in the environment (DESIGN_GATES_SIGNING_KEY_FILE, DESIGN_GATES_SIGNING_KEY_ID), and copied to $OUT.
set -uo pipefail
warm=${1:-120}; timed=${2:-400}; rows=${3:-lab/routing/rows.txt}; profile=${4:-}
export OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=1
start=$(date +%s)
# Eight compile processes, each warming the kernel cache for an eighth of the rows.
warm_dir=$(mktemp -d)
split -n r/8 "$rows" "$warm_dir/group-"
for group in "$warm_dir"/group-*; do
  timeout "$warm" python3 -m validation.bench --matrix models --compile-only --sweep --peers sdpa_cudnn,sdpa_flash \
    --shapes $(cat "$group") > "/tmp/warm-$(basename "$group").log" 2>&1 &
done
wait
echo "warm-up: $(( $(date +%s) - start )) s"; tail -n 1 /tmp/warm-group-*.log
timeout -s INT "$timed" python3 -m validation.bench --matrix models --sweep --peers sdpa_cudnn,sdpa_flash \
  --shapes $(cat "$rows") --out "$OUT/routing-models.json" > "$OUT/routing-models.log" 2>&1
echo "timed: exit $?, $(( $(date +%s) - start )) s in all"
if [ -n "$profile" ]; then
  python3 lab/routing/evidence.py "$OUT/routing-models.json" "$profile" || exit 1
  if [ -n "${DESIGN_GATES_SIGNING_KEY_FILE:-}${DESIGN_GATES_SIGNING_KEY:-}" ]; then
    python3 -m gates.frontends.cli attest sign "$profile" || exit 1
  fi
  # Copied before it is verified: a verify step that cannot run (a missing package) loses nothing.
  cp "$profile" "$OUT/"
  if [ -n "${DESIGN_GATES_SIGNING_KEY_FILE:-}${DESIGN_GATES_SIGNING_KEY:-}" ]; then
    python3 -m gates.frontends.cli attest verify "$profile" || exit 1
  fi
fi
