#!/usr/bin/env bash
# Smoke test of the trainer image (not part of `make unit`: it needs the image and Docker):
# two containers on a user-defined network, gloo, rank 1 started first (rank 0's name does
# not resolve yet), Pod Security restricted-like settings (uid 65532, read-only root fs,
# no capabilities, no privilege escalation), checkpoints on a shared host folder. Once two
# checkpoints exist, rank 1 is killed; rank 0 then fails its next all-reduce; both start
# again and must resume from the newest checkpoint and finish the window.
# Usage: workloads/trainer/smoke-docker.sh [IMAGE.tar]   (default: build-trainer-image.sh's output)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tar=${1:-$("$ROOT/lab/images/build-trainer-image.sh" | tail -1)}
ASSETS=${GPURACK_ACCEPTANCE_ASSETS:-$HOME/.cache/gpurack/acceptance}
WINDOW=${WINDOW:-45}
NET=gpurack-trainer-net
CK=$(mktemp -d /tmp/gpurack-trainer-smoke.XXXXXX)
start=$SECONDS
cleanup() {
  docker rm -f gpurack-trainer-0 gpurack-trainer-1 >/dev/null 2>&1 || true
  docker network rm "$NET" >/dev/null 2>&1 || true
  rm -rf "$CK"
}
trap cleanup EXIT
ref=$(docker load -i "$tar" | sed -n 's/^Loaded image: //p' | tail -1)
echo "smoke: loaded $ref in $((SECONDS - start)) s"
chown 65532:65532 "$CK"
docker network create "$NET" >/dev/null

launch() {  # rank; rank 1 gets its rank the Indexed Job way
  local env=(-e RANK="$1"); [[ $1 == 1 ]] && env=(-e JOB_COMPLETION_INDEX=1)
  docker rm -f "gpurack-trainer-$1" >/dev/null 2>&1 || true
  docker run -d --name "gpurack-trainer-$1" --hostname "gpurack-trainer-$1" --network "$NET" \
    --user 65532:65532 --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
    --cpus 1 "${env[@]}" -e WORLD_SIZE=2 -e MASTER_ADDR=gpurack-trainer-0 -e MASTER_PORT=29500 \
    -v "$ASSETS:/assets:ro" -v "$CK:/ckpt" "$ref" \
    --data /assets/dataset/vader_lexicon.txt --weights /assets/model/all-MiniLM-L6-v2 --checkpoints /ckpt \
    --window-s "$WINDOW" --checkpoint-interval-steps 3 --batch-size 8 --log-every-steps 1 \
    --allreduce-mib 16 --allreduce-iters 5 --device cpu --keep-checkpoints 3 >/dev/null
}
wait_exit() {  # container timeout_s -> prints the exit code
  local deadline=$((SECONDS + $2))
  while [[ $(docker inspect -f '{{.State.Running}}' "$1") == true ]]; do
    ((SECONDS < deadline)) || { echo "smoke: $1 still running after $2 s" >&2; return 1; }
    sleep 1
  done
  docker inspect -f '{{.State.ExitCode}}' "$1"
}
newest() { find "$CK" -maxdepth 1 -name 'ckpt-*.pt' -printf '%f\n' | sort | tail -1; }

t0=$SECONDS
launch 1; sleep 5; launch 0
until [[ $(find "$CK" -maxdepth 1 -name 'ckpt-*.pt' | wc -l) -ge 2 ]]; do
  ((SECONDS - t0 < 300)) || { docker logs gpurack-trainer-0 2>&1 | tail -20; exit 1; }
  sleep 1
done
docker kill gpurack-trainer-1 >/dev/null
rc0=$(wait_exit gpurack-trainer-0 120)
before=$(newest)
echo "smoke: first attempt: rank 1 killed after $(ls "$CK" | grep -c '^ckpt-') checkpoints, rank 0 exited $rc0, newest $before ($((SECONDS - t0)) s)"
docker logs gpurack-trainer-0 2>/dev/null >"$CK/attempt1.jsonl"

t1=$SECONDS
launch 0; launch 1
rc0=$(wait_exit gpurack-trainer-0 $((WINDOW * 4 + 120))); rc1=$(wait_exit gpurack-trainer-1 60)
docker logs gpurack-trainer-0 2>/dev/null >"$CK/attempt2.jsonl"
grep -E '"(staging|allreduce|resume|checkpoint|done)"' "$CK/attempt1.jsonl" "$CK/attempt2.jsonl" | sed "s|$CK/||"
resumed=$(sed -n 's/.*"gpurack":"resume","step":\([0-9]*\).*/\1/p' "$CK/attempt2.jsonl")
echo "smoke: second attempt: ranks exited $rc0 $rc1, resumed at step $resumed (newest was $before) ($((SECONDS - t1)) s)"
[[ $rc0 == 0 && $rc1 == 0 && "ckpt-$(printf %010d "$resumed").pt" == "$before" ]] && grep -q '"gpurack":"done"' "$CK/attempt2.jsonl" || {
  echo "smoke: FAILED" >&2; docker logs gpurack-trainer-0 2>&1 | tail -30 >&2; docker logs gpurack-trainer-1 2>&1 | tail -30 >&2; exit 1; }
echo "smoke: ok in $((SECONDS - start)) s"
