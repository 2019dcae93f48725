#!/usr/bin/env bash
# One H200 call (<= 8 min): compile every route in 8 processes, then time them; $OUT/quant-lab.json + table.
#   bash lab/quantized/measure.sh [TIMED_BUDGET_SECONDS=240]
set -uo pipefail; budget=${1:-240}; export OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=1; start=$(date +%s)
for i in 0 1 2 3 4 5 6 7; do timeout 150 python3 -m lab.quantized.measure --compile-only --worker $i/8 > "$OUT/warm-$i.log" 2>&1 & done; wait
echo "warm-up: $(( $(date +%s) - start )) s"; grep -h "compiled\|error" "$OUT"/warm-*.log | head -40
timeout -s INT $(( budget + 60 )) python3 -m lab.quantized.measure --out "$OUT/quant-lab.json" --budget-s "$budget" 2> "$OUT/quant-lab.log"
echo "timed: exit $?, $(( $(date +%s) - start )) s in all"; tail -n 5 "$OUT/quant-lab.log"
