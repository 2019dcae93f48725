# One device call: the committed and the rotated KV loop on the same GPU, then the table.
#   bash lab/rotated_loop/measure.sh OUT_DIR
set -o pipefail
out=${1:?OUT_DIR}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/device.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$out/device.txt"
for v in committed rotated; do
  for s in "1,24,4,256,20688,16 16" "1,24,4,256,20688 32" "4,8,1,128,32768 64"; do
    echo "== $v $s"; python3 lab/rotated_loop/ptx_waits.py $v $s
  done
done > "$out/ptx-waits.txt" 2>&1
python3 lab/rotated_loop/measure.py --variant committed --out "$out/committed.json" 2> "$out/committed.log" || tail -5 "$out/committed.log"
python3 lab/rotated_loop/measure.py --variant rotated --out "$out/rotated.json" 2> "$out/rotated.log" || tail -5 "$out/rotated.log"
python3 lab/rotated_loop/measure.py --compare "$out/committed.json" "$out/rotated.json" | tee "$out/table.md"
