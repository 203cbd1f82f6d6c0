#!/usr/bin/env bash
# Issue 28 on a real GPU machine (run there through the device tool; docs/gpu-node.md):
# NVIDIA's own binaries from the lab build (`lab/k8s-build/build.sh --only nvidia-device-plugin
# gpu-feature-discovery nvidia-ctk nvidia-cdi-hook`, xz-compressed into .gpu-carry/bin/) meet
# the real GPU:
#   1. nvidia-ctk writes the node's CDI spec, its hooks pointing at the carried nvidia-cdi-hook;
#   2. GPU feature discovery labels the node once, into a file (no API server here);
#   3. NVIDIA's device plugin starts in CDI mode and finds the GPU through NVML (no kubelet
#      here, so it stops at registering: its log says how far it got);
#   4. gpurack's facts of the same GPU are compared with GFD's labels (gpurack_lab.gfd).
# Writes everything under $OUT (the device tool brings it back); exits non-zero when GFD and
# gpurack disagree or a binary cannot run.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to a folder for the results}
# The collection importable as the driver finds it (tools/setup.sh makes this link in a checkout).
if [[ ! -e .collections/ansible_collections/gpurack/bootstrap ]]; then
  mkdir -p .collections/ansible_collections/gpurack && ln -s ../../.. .collections/ansible_collections/gpurack/bootstrap
fi
BIN=$(mktemp -d)
for f in .gpu-carry/bin/*.xz; do xz -dc "$f" >"$BIN/$(basename "$f" .xz)"; done
chmod +x "$BIN"/*
export PATH="$BIN:$PATH" NCCL_NVLS_ENABLE=0
driver_root=${DRIVER_ROOT:-/usr/local/nvidia}
status=0
step() { echo "== $*"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

step "the GPU and the binaries"
nvidia-smi -L | tee "$OUT/nvidia-smi-L.txt"
for b in nvidia-ctk nvidia-cdi-hook gpu-feature-discovery nvidia-device-plugin; do "$b" --version | head -1; done

step "1. CDI spec (nvidia-ctk cdi generate)"
start=$(date +%s%N)
nvidia-ctk cdi generate --driver-root="$driver_root" --dev-root=/ --nvidia-cdi-hook-path="$BIN/nvidia-cdi-hook" \
  --output="$OUT/nvidia-cdi.yaml" >"$OUT/cdi-generate.log" 2>&1
rc=$?; (( rc == 0 )) || status=1
echo "cdi generate: rc $rc in $(ms_since "$start") ms"
nvidia-ctk cdi list --spec-dir="$OUT" 2>&1 | tee "$OUT/cdi-list.txt"

step "2. GPU feature discovery, once, to a file"
start=$(date +%s%N)
NODE_NAME=gpu-node timeout 120 gpu-feature-discovery --oneshot --no-timestamp --output-file="$OUT/gfd-labels" \
  --use-node-feature-api=false --mig-strategy=none --fail-on-init-error=true \
  --driver-root-ctr-path="$driver_root" >"$OUT/gfd.log" 2>&1
rc=$?; (( rc == 0 )) || status=1
echo "gfd: rc $rc in $(ms_since "$start") ms"; tail -n 5 "$OUT/gfd.log"
sort "$OUT/gfd-labels" 2>/dev/null | tee "$OUT/gfd-labels.sorted"

step "3. NVIDIA's device plugin in CDI mode, 15 s without a kubelet"
mkdir -p /var/lib/kubelet/device-plugins
timeout 15 nvidia-device-plugin --device-list-strategy=cdi-cri --cdi-annotation-prefix=cdi.k8s.io/ \
  --nvidia-cdi-hook-path="$BIN/nvidia-cdi-hook" --nvidia-driver-root="$driver_root" \
  --driver-root-ctr-path="$driver_root" --dev-root=/ --fail-on-init-error=true >"$OUT/device-plugin.log" 2>&1
echo "device plugin: rc $? (124: still running after 15 s, as it waits for the kubelet)"
tail -n 20 "$OUT/device-plugin.log"

step "4. GFD's labels beside gpurack's facts of the same GPU"
PYTHONPATH=.collections:lab python3 -m gpurack_lab.gfd "$OUT/gfd-labels" | tee "$OUT/gfd-compare.json" || status=1
exit $status
