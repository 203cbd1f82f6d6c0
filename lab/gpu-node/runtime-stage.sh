#!/usr/bin/env bash
# Issue 28, stage 2 in part, on a real GPU machine without systemd (docs/gpu-node.md): the lab
# build's containerd, runc and crictl with CDI on, and two containers started through CRI, one
# asking for the CDI device nvidia.com/gpu=all and one asking for nothing. The containerd
# config here is the CRI part of what roles/container_runtime writes for containerd 2.x
# (cri-macros.j2, cri_v3: enable_cdi, cdi_spec_dirs; runc, no systemd cgroups); the role itself
# does not run here. Binaries and images come xz-compressed in .gpu-carry/ (see gfd-stage.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to a folder for the results}
driver_root=${DRIVER_ROOT:-/usr/local/nvidia}
for f in .gpu-carry/bin/{containerd,containerd-shim-runc-v2,runc,ctr,crictl,nvidia-ctk,nvidia-cdi-hook}.xz; do
  xz -dc "$f" >"/usr/local/bin/$(basename "$f" .xz)" && chmod +x "/usr/local/bin/$(basename "$f" .xz)"
done
step() { echo "== $*"; }
# RUNC_DEBUG=1: containerd calls runc through a wrapper that adds --debug and keeps its log.
runc_binary=/usr/local/bin/runc
if [[ ${RUNC_DEBUG:-0} == 1 ]]; then
  printf '#!/bin/sh\nexec /usr/local/bin/runc --debug "$@" 2>>%s/runc-debug.log\n' "$OUT" >/usr/local/bin/runc-debug
  chmod +x /usr/local/bin/runc-debug; runc_binary=/usr/local/bin/runc-debug
fi

step "CDI spec"
mkdir -p /etc/cdi /etc/containerd
nvidia-ctk cdi generate --driver-root="$driver_root" --dev-root=/ \
  --nvidia-cdi-hook-path=/usr/local/bin/nvidia-cdi-hook --output=/etc/cdi/nvidia.yaml 2>&1 | tail -1

step "containerd with CDI (config version 3)"
cat >/etc/containerd/config.toml <<TOML
version = 3
[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "registry.gpurack.lab/pause:3.10.2"
[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$runc_binary"
        SystemdCgroup = false
TOML
cp /etc/containerd/config.toml "$OUT/containerd-config.toml"
containerd --config /etc/containerd/config.toml >"$OUT/containerd.log" 2>&1 &
for _ in $(seq 1 30); do [[ -S /run/containerd/containerd.sock ]] && break; sleep 1; done
export CONTAINER_RUNTIME_ENDPOINT=unix:///run/containerd/containerd.sock IMAGE_SERVICE_ENDPOINT=unix:///run/containerd/containerd.sock
crictl version
# crictl cannot import an archive; the CRI image service reads containerd's k8s.io namespace.
for image in .gpu-carry/images/pause.tar .gpu-carry/images/gpu-probe.tar; do
  ctr -n k8s.io images import "$image" 2>&1 | tail -1
done
crictl images

step "a pod on the host network, then two containers"
cat >/tmp/pod.json <<JSON
{"metadata": {"name": "gpu-probe", "namespace": "default", "uid": "gpu-probe-1"},
 "linux": {"security_context": {"namespace_options": {"network": 2}}}, "log_directory": "/tmp/pod-logs"}
JSON
mkdir -p /tmp/pod-logs
pod=$(crictl runp /tmp/pod.json) || {
  echo "runp failed"; tail -n 30 "$OUT/containerd.log"
  for f in /run/containerd/io.containerd.runtime.v2.task/k8s.io/*/log.json; do [[ -f $f ]] && tail -n 20 "$f"; done
  exit 1
}
for name in with-gpu without-gpu; do
  devices='[]'; [[ $name == with-gpu ]] && devices='[{"name": "nvidia.com/gpu=all"}]'
  cat >"/tmp/$name.json" <<JSON
{"metadata": {"name": "$name"}, "image": {"image": "registry.gpurack.lab/gpu-probe:1"},
 "command": ["/bin/sh", "-c", "ls -la /dev/nvidia* 2>&1; nvidia-smi -L 2>&1; echo nvidia-smi rc=\$?"],
 "CDI_devices": $devices, "log_path": "$name.log"}
JSON
  ctr_id=$(crictl create "$pod" "/tmp/$name.json" /tmp/pod.json) && crictl start "$ctr_id" >/dev/null
  sleep 3
  echo "-- $name"; crictl logs "$ctr_id" 2>&1 | tee "$OUT/$name.txt"
done
crictl inspect "$(crictl ps -a -q --name with-gpu)" 2>/dev/null | grep -i -A3 '"devices"' | head -20
tail -n 20 "$OUT/containerd.log" >"$OUT/containerd-tail.log"
