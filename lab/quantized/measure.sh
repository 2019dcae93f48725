#!/usr/bin/env bash
# One H200 call (<= 8 min): compile every route in 12 processes, then time them; $OUT/quant-lab.json + table.
#   bash lab/quantized/measure.sh [TIMED_BUDGET_SECONDS=220]
set -uo pipefail; budget=${1:-220}; export OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=1; start=$(date +%s)
for i in $(seq 0 11); do timeout 160 python3 -m lab.quantized.measure --compile-only --worker $i/12 > "$OUT/warm-$i.log" 2>&1 & done; wait
echo "warm-up: $(( $(date +%s) - start )) s"; grep -h "compiled\|error" "$OUT"/warm-*.log | head -40
timeout -s INT $(( budget + 60 )) python3 -m lab.quantized.measure --out "$OUT/quant-lab.json" --budget-s "$budget" 2> "$OUT/quant-lab.log"
echo "timed: exit $?, $(( $(date +%s) - start )) s in all"; tail -n 5 "$OUT/quant-lab.log"
