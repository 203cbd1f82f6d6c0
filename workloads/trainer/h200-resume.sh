#!/usr/bin/env bash
# The restore half of h200-run.sh again (its first run's restores hit a bug, since fixed): write
# checkpoints with a short window, drop the page cache, restart with a longer window.
set -uo pipefail
ASSETS=${1:?assets folder}; OUT=${2:?output folder}
CK=${CKPT_DIR:-/tmp/gpurack-trainer-ckpt}
export PYTHONPATH=$PWD/workloads/trainer PYTHONUNBUFFERED=1
mkdir -p "$OUT"; rm -rf "$CK"; mkdir -p "$CK"
train() { python3 -m gpurack_trainer --data "$ASSETS/vader_lexicon.txt" --weights "$ASSETS/model" --device cuda "$@"; }
for m in minilm large; do
  extra=(); [[ $m == large ]] && extra=(--random-init-shape 24x1024x16x4096 --keep-checkpoints 1)
  train --checkpoints "$CK/$m" --window-s 12 --checkpoint-interval-steps 50 --batch-size 512 \
    --log-every-steps 50 "${extra[@]}" >"$OUT/$m-write.jsonl" 2>"$OUT/$m-write.err"; echo "rc=$?" >>"$OUT/$m-write.err"
  sync; echo 3 >/proc/sys/vm/drop_caches && echo "page cache dropped" >>"$OUT/$m-resume.err"
  train --checkpoints "$CK/$m" --window-s 20 --checkpoint-interval-steps 50 --batch-size 512 \
    --log-every-steps 50 "${extra[@]}" >"$OUT/$m-resume.jsonl" 2>>"$OUT/$m-resume.err"; echo "rc=$?" >>"$OUT/$m-resume.err"
  # the same restore again, from the page cache
  train --checkpoints "$CK/$m" --window-s 1 --checkpoint-interval-steps 50 --batch-size 512 \
    "${extra[@]}" >"$OUT/$m-resume-cached.jsonl" 2>"$OUT/$m-resume-cached.err"; echo "rc=$?" >>"$OUT/$m-resume-cached.err"
done
rm -rf "$CK"
tail -n 3 "$OUT"/*.err; grep -h -E '"(resume|checkpoint|done)"' "$OUT"/*.jsonl
