#!/usr/bin/env bash
# One GPU session of the benchmark, from the repository root:
#   bash validation/bench/h200_session.sh OUT_DIR [--ncu] [python -m validation.bench arguments...]
# With --ncu it first profiles the single-pass kernel at (1,14,2,64,2048) and the split
# kernel at (1,32,8,128,32768) with ncu and writes them as `profile` artifacts; then it
# runs the benchmark into OUT_DIR/bench.json. Logs go to OUT_DIR/session.log.
set -uo pipefail
out=$1; shift
ncu_wanted=0
if [ "${1:-}" = "--ncu" ]; then ncu_wanted=1; shift; fi
export PYTHONUNBUFFERED=1
# --commit X among the benchmark arguments also names the commit of the profile artifacts
prev=""; for arg in "$@"; do [ "$prev" = "--commit" ] && export DESIGN_GATES_COMMIT=${DESIGN_GATES_COMMIT:-$arg}; prev=$arg; done
export TRITON_CACHE_DIR=$PWD/.bench-cache/triton TORCHINDUCTOR_CACHE_DIR=$PWD/.bench-cache/inductor
mkdir -p "$TRITON_CACHE_DIR" "$TORCHINDUCTOR_CACHE_DIR" "$out"
# a compile cache from an earlier session, if one was carried along
[ -f .bench-cache/cache.tgz ] && tar xzf .bench-cache/cache.tgz && rm -f .bench-cache/cache.tgz
log=$out/session.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee "$log"

profile() {  # id kernel-regex shape impl [extra profile_target args]
  local id=$1 kernel=$2 shape=$3 impl=$4; shift 4
  local metrics cmd
  metrics=$(python3 -c "from validation.bench.ncu_artifact import METRICS; print(','.join(METRICS))")
  cmd="ncu --clock-control none --kernel-name regex:$kernel --launch-skip 3 --launch-count 1 --csv --page raw --metrics $metrics python3 -m validation.bench.profile_target --shape $shape --impl $impl $*"
  echo "== $id: $cmd" | tee -a "$log"
  timeout 180 $cmd > "$out/$id.csv" 2>>"$log"
  python3 -m validation.bench.ncu_artifact "$out/$id.csv" --id "$id" --kernel "${kernel//[^a-z_]/}" \
    --shape "$shape" --command "$cmd" --out "$out/$id.json" 2>&1 | tee -a "$log"
  rm -f "$out/$id.csv"
}

if [ $ncu_wanted = 1 ]; then
  profile ncu-single-pass-h200 decode_attention_partial_kernel seed-qwen0.5b-2k single_pass
  profile ncu-splitkv-h200 decode_attention_partial_kernel llama8b-b1-32k splitkv
fi
python3 -m validation.bench --out "$out/bench.json" "$@" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
tar czf "$out/cache.tgz" .bench-cache/triton .bench-cache/inductor 2>/dev/null
exit "$status"
