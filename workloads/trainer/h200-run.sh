#!/usr/bin/env bash
# The trainer on one real GPU, no Kubernetes: MiniLM at two batch sizes, a checkpoint write and a
# restore from local disk, a random-init BERT-large-shaped model for a checkpoint of several GB,
# and the machine's own ceilings (local disk direct write/read, host-memory copy) to compare with.
# Run from the repository root: workloads/trainer/h200-run.sh ASSETS OUTDIR
# ASSETS holds vader_lexicon.txt and model/{config.json,vocab.txt,model.safetensors}.
set -uo pipefail
ASSETS=${1:?assets folder}; OUT=${2:?output folder}
CK=${CKPT_DIR:-/tmp/gpurack-trainer-ckpt}
export PYTHONPATH=$PWD/workloads/trainer PYTHONUNBUFFERED=1
mkdir -p "$OUT"; rm -rf "$CK"; mkdir -p "$CK"
py=${PYTHON:-python3}
train() { "$py" -m gpurack_trainer --data "$ASSETS/vader_lexicon.txt" --weights "$ASSETS/model" --device cuda "$@"; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$py" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
  df -h "$CK" | tail -1; nproc; grep MemTotal /proc/meminfo
  echo "MiniLM copies on the machine:"; find / -xdev -name model.safetensors -path '*MiniLM*' 2>/dev/null | head -3
} >"$OUT/machine.txt" 2>&1
# Ceilings: 4 GiB direct I/O on the checkpoint disk, and host-memory copies (pageable, pinned).
{
  dd if=/dev/zero of="$CK/dd.bin" bs=16M count=256 oflag=direct conv=fsync 2>&1 | tail -1
  dd if="$CK/dd.bin" of=/dev/null bs=16M iflag=direct 2>&1 | tail -1
  rm -f "$CK/dd.bin"
  "$py" - <<'PY'
import time, torch
n = 4 << 30
a = torch.empty(n, dtype=torch.uint8).fill_(1); b = torch.empty_like(a)
b.copy_(a); t = time.perf_counter(); b.copy_(a); s = time.perf_counter() - t
print(f"host memcpy pageable: {n/s/1e9:.2f} GB/s ({n} bytes, {s:.3f} s)")
p = torch.empty(n, dtype=torch.uint8, pin_memory=True); g = torch.empty(n, dtype=torch.uint8, device="cuda")
for name, dst, src in (("pinned host->device", g, p), ("device->pinned host", p, g), ("pageable host->device", g, a)):
    dst.copy_(src); torch.cuda.synchronize(); t = time.perf_counter(); dst.copy_(src); torch.cuda.synchronize()
    s = time.perf_counter() - t; print(f"{name}: {n/s/1e9:.2f} GB/s")
PY
} >"$OUT/ceilings.txt" 2>&1
sync
# 1. MiniLM (pretrained, bf16 autocast), batch 256: 40 s window, checkpoint every 200 steps.
train --checkpoints "$CK/minilm" --window-s 40 --checkpoint-interval-steps 200 --batch-size 256 \
  --log-every-steps 100 >"$OUT/minilm-b256.jsonl" 2>"$OUT/minilm-b256.err"; echo "rc=$?" >>"$OUT/minilm-b256.err"
# 2. The same run restarted with a longer window: resumes from the newest checkpoint (page cache dropped first).
sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
train --checkpoints "$CK/minilm" --window-s 55 --checkpoint-interval-steps 200 --batch-size 256 \
  --log-every-steps 100 >"$OUT/minilm-b256-resume.jsonl" 2>"$OUT/minilm-b256-resume.err"; echo "rc=$?" >>"$OUT/minilm-b256-resume.err"
# 3. A larger batch.
train --checkpoints "$CK/minilm-b4096" --window-s 30 --checkpoint-interval-steps 100 --batch-size 4096 \
  --log-every-steps 25 >"$OUT/minilm-b4096.jsonl" 2>"$OUT/minilm-b4096.err"; echo "rc=$?" >>"$OUT/minilm-b4096.err"
# 4. Random-init BERT-large shape (24 layers, 1024 hidden, 16 heads, 4096): a checkpoint of ~4 GB.
train --checkpoints "$CK/large" --random-init-shape 24x1024x16x4096 --window-s 45 --checkpoint-interval-steps 150 \
  --batch-size 512 --log-every-steps 50 --keep-checkpoints 1 >"$OUT/large.jsonl" 2>"$OUT/large.err"; echo "rc=$?" >>"$OUT/large.err"
ls -la "$CK/large" >>"$OUT/large.err"
sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
train --checkpoints "$CK/large" --random-init-shape 24x1024x16x4096 --window-s 60 --checkpoint-interval-steps 150 \
  --batch-size 512 --log-every-steps 50 --keep-checkpoints 1 >"$OUT/large-resume.jsonl" 2>"$OUT/large-resume.err"; echo "rc=$?" >>"$OUT/large-resume.err"
rm -rf "$CK"
tail -n 3 "$OUT"/*.err; cat "$OUT/machine.txt" "$OUT/ceilings.txt" "$OUT"/*.jsonl
