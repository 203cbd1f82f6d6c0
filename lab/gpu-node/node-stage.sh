#!/usr/bin/env bash
# Issue 28, stage 3, on a real GPU machine without systemd (docs/gpu-node.md): a one-node
# Kubernetes cluster of the lab build there (etcd, the API server, the controller-manager, the
# scheduler and the kubelet, started by this script), NVIDIA's device plugin in CDI mode
# registered with that kubelet, GPU feature discovery's labels on the Node, a pod that asks for
# nvidia.com/gpu: 1 and runs `gpurack validate --local --tier standard`, the same run on the
# host for the pod/host ratios, and a pod that asks for no GPU and must see none.
#
# Run after runtime-stage.sh on the same machine (its containerd config, CDI spec, runc and the
# unpacked wheels stay there while the machine is kept busy). What it needs comes in trips of at
# most 64 MiB with the checkout (lab/gpu-node/carry.sh makes .gpu-carry/stage3a, b and c):
#   OUT=... node-stage.sh unpack .gpu-carry/stage3a     (the API server, controller-manager, etcd)
#   OUT=... node-stage.sh unpack .gpu-carry/stage3c     (the Python client of Kubernetes)
#   OUT=... node-stage.sh run                           (.gpu-carry/stage3b: the rest, then all)
# The machine goes back after 30 s idle: call the next trip at once.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to a folder for the results}
driver_root=${DRIVER_ROOT:-/usr/local/nvidia}
NODE=h200-node
PKI=/etc/gpurack-node/pki
export LC_ALL=C.UTF-8 PATH="/usr/local/bin:$driver_root/bin:$PATH"
export CONTAINER_RUNTIME_ENDPOINT=unix:///run/containerd/containerd.sock
step() { echo "== $* ($(date -u +%T))"; }
unpack() {
  for f in "$1"/bin/*.xz; do
    [[ -f $f ]] || continue
    name=$(basename "$f" .xz); dest=/usr/local/bin/$name
    case $name in bridge|host-local|loopback) mkdir -p /opt/cni/bin; dest=/opt/cni/bin/$name;; esac
    xz -dc "$f" >"$dest" && chmod +x "$dest"
  done
  # Wheels join runtime-stage.sh's (the Python client of Kubernetes, for the node_labels module).
  for w in "$1"/wheels/*.whl; do [[ -f $w ]] && python3 -m zipfile -e "$w" /opt/gpurack-ansible; done
}
if [[ ${1:-run} == unpack ]]; then unpack "${2:?the carry folder}"; ls -la /usr/local/bin | wc -l; exit 0; fi

LOGS=$OUT/logs; mkdir -p "$LOGS"
trap 'tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$LOGS"' EXIT
status=0
kapi() { python3 lab/gpu-node/kapi.py "$PKI" "$@"; }
CARRY=.gpu-carry/stage3b
unpack "$CARRY"
mkdir -p "$PKI" && cp "$CARRY"/pki/* "$PKI"/
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet nvidia-device-plugin gpu-feature-discovery; do
  command -v "$b" >/dev/null || { echo "missing $b: run the unpack trip first"; exit 1; }
done

step "containerd (the role's config) with a bridge network for pods"
mkdir -p /etc/cni/net.d
cat >/etc/cni/net.d/10-gpu-node.conflist <<'JSON'
{"cniVersion": "1.0.0", "name": "gpu-node", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "loopback"}]}
JSON
pkill -x containerd 2>/dev/null; sleep 1; rm -f /run/containerd/containerd.sock
containerd --config /etc/containerd/config.toml >"$LOGS/containerd.log" 2>&1 &
for _ in $(seq 1 30); do ctr version >/dev/null 2>&1 && break; sleep 1; done
for image in .gpu-carry/stage2/images/*.tar "$CARRY"/images/*.tar; do
  [[ -f $image ]] && ctr -n k8s.io images import "$image" >/dev/null 2>&1
done
ctr -n k8s.io images ls -q | grep gpurack

step "etcd, the API server, the controller-manager and the scheduler"
etcd --data-dir /var/lib/gpu-node-etcd --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 >"$LOGS/etcd.log" 2>&1 &
kube-apiserver --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port=6443 --tls-cert-file=$PKI/apiserver.crt --tls-private-key-file=$PKI/apiserver.key \
  --client-ca-file=$PKI/ca.crt --authorization-mode=Node,RBAC --service-cluster-ip-range=10.96.0.0/16 \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file=$PKI/sa.pub \
  --service-account-signing-key-file=$PKI/sa.key --allow-privileged=true \
  --kubelet-client-certificate=$PKI/admin.crt --kubelet-client-key=$PKI/admin.key >"$LOGS/apiserver.log" 2>&1 &
kapi wait /api/v1/namespaces/default 'o["metadata"]["name"] == "default"' 90 || { status=1; tail -n 5 "$LOGS/apiserver.log"; }
kube-controller-manager --kubeconfig=$PKI/admin.conf --service-account-private-key-file=$PKI/sa.key \
  --root-ca-file=$PKI/ca.crt --use-service-account-credentials=true --leader-elect=false \
  --controllers='*,-nodeipam' >"$LOGS/controller-manager.log" 2>&1 &
kube-scheduler --kubeconfig=$PKI/admin.conf --leader-elect=false >"$LOGS/scheduler.log" 2>&1 &

step "the kubelet (cgroupfs, no systemd), registering $NODE with the validating taint"
mkdir -p /var/lib/kubelet
cat >/var/lib/kubelet/config.yaml <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
failSwapOn: false
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $PKI/ca.crt}}
authorization: {mode: AlwaysAllow}
registerWithTaints: [{key: gpurack.io/validating, value: "true", effect: NoSchedule}]
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
localStorageCapacityIsolation: false
YAML
kubelet --config=/var/lib/kubelet/config.yaml --kubeconfig=$PKI/kubelet.conf --hostname-override=$NODE \
  --oom-score-adj=0 >"$LOGS/kubelet.log" 2>&1 &
kapi wait /api/v1/nodes/$NODE \
  'any(c["type"] == "Ready" and c["status"] == "True" for c in o["status"]["conditions"])' 120 || {
  status=1; grep -E "^E|error" "$LOGS/kubelet.log" | tail -n 15; }

step "NVIDIA's device plugin (CDI) registers with the kubelet"
# The plugin looks for the device nodes below the driver root (its --dev-root did not change
# that here), and this driver root is read-only: a tmpfs root of binds, the driver's folders
# and /dev, stands in for it, as the GPU Operator's driver container root does.
plugin_root=/run/gpu-node-driver-root
mkdir -p $plugin_root && mount -t tmpfs tmpfs $plugin_root
for entry in "$driver_root"/*; do
  name=$(basename "$entry")
  if [[ -d $entry ]]; then mkdir -p "$plugin_root/$name"; else touch "$plugin_root/$name"; fi
  mount --bind "$entry" "$plugin_root/$name"
done
mkdir -p $plugin_root/dev && mount --rbind /dev $plugin_root/dev
nvidia-device-plugin --device-list-strategy=cdi-cri --nvidia-driver-root=$plugin_root --dev-root=$plugin_root \
  --driver-root-ctr-path=$plugin_root --nvidia-cdi-hook-path=/usr/local/bin/nvidia-cdi-hook \
  --fail-on-init-error=true >"$LOGS/device-plugin.log" 2>&1 &
kapi wait /api/v1/nodes/$NODE 'o["status"]["allocatable"].get("nvidia.com/gpu") == "1"' 90 || {
  status=1; tail -n 15 "$LOGS/device-plugin.log"; }

step "GPU feature discovery's labels on the Node, beside gpurack's facts"
NODE_NAME=$NODE timeout 120 gpu-feature-discovery --oneshot --no-timestamp --output-file="$LOGS/gfd-labels.txt" \
  --use-node-feature-api=false --mig-strategy=none --fail-on-init-error=true \
  --driver-root-ctr-path="$driver_root" >"$LOGS/gfd.log" 2>&1 || { status=1; tail -n 5 "$LOGS/gfd.log"; }
# Without node-feature-discovery here (GFD's usual way to the Node), the file's nvidia.com/
# labels are put on the Node as they are.
python3 - "$LOGS/gfd-labels.txt" >"$LOGS/gfd-patch.json" <<'PY'
import json, sys
labels = dict(line.strip().split("=", 1) for line in open(sys.argv[1]) if "=" in line)
print(json.dumps({"metadata": {"labels": {k: v for k, v in labels.items() if k.startswith("nvidia.com/")}}}))
PY
kapi patch /api/v1/nodes/$NODE "$(cat "$LOGS/gfd-patch.json")" || status=1
kapi get /api/v1/nodes/$NODE >"$LOGS/node.json"
python3 - "$LOGS/node.json" <<'PY'
import json, sys
node = json.load(open(sys.argv[1]))
labels = node["metadata"]["labels"]
for key in ("nvidia.com/gpu.product", "nvidia.com/gpu.memory", "nvidia.com/gpu.count",
            "nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.runtime-version.full"):
    print(f"{key}={labels.get(key)}")
print("allocatable nvidia.com/gpu:", node["status"]["allocatable"].get("nvidia.com/gpu"))
print("taints:", [t["key"] for t in node["spec"].get("taints", [])])
PY
if [[ ! -e .collections/ansible_collections/gpurack/bootstrap ]]; then
  mkdir -p .collections/ansible_collections/gpurack && ln -s ../../.. .collections/ansible_collections/gpurack/bootstrap
fi
PYTHONPATH=/opt/gpurack-ansible:tools:.collections:lab python3 -m gpurack_lab.gfd "$LOGS/gfd-labels.txt" \
  | tee "$LOGS/gfd-vs-gpurack.txt" || status=1

step "the standard tier on the host, then in a pod with nvidia.com/gpu: 1"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
host_python=$(python3 -c 'import sys; print(sys.executable)')
torch_site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
echo "python $host_python, torch under ${torch_site:-none}"
# gpurack as installed on a node: the driver's wheel and the collection from its tarball (out of
# the checkout, so that the installed collection is the one found).
(cd /tmp && PYTHONPATH=/opt/gpurack-ansible ANSIBLE_COLLECTIONS_PATH=/opt/gpurack-collections \
  GPURACK_STATE_DIR=/tmp/gpurack-host python3 -m gpurack validate --local --tier standard --json --no-record \
  >"$LOGS/host-standard.json" 2>"$LOGS/host-standard.err")
echo "host: rc $?"
python3 lab/gpu-node/pods.py "${torch_site:-/usr}" >"$LOGS/pods.json"
kapi post /api/v1/namespaces/default/pods "$LOGS/pods.json" >/dev/null || status=1
python3 lab/gpu-node/pods.py "${torch_site:-/usr}" --no-gpu >"$LOGS/pod-no-gpu.json"
kapi post /api/v1/namespaces/default/pods "$LOGS/pod-no-gpu.json" >/dev/null || status=1
for pod in gpurack-validate no-gpu; do
  kapi wait /api/v1/namespaces/default/pods/$pod 'o["status"]["phase"] in ("Succeeded", "Failed")' 180 || status=1
  kapi get /api/v1/namespaces/default/pods/$pod >"$LOGS/$pod.pod.json"
  # The container's log through CRI (the Node has no address for the API server's log proxy).
  crictl logs "$(crictl ps -a -q --label io.kubernetes.pod.name=$pod | head -n 1)" >"$LOGS/$pod.log" 2>&1
done
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print("gpu pod on", p["spec"].get("nodeName"), p["status"]["phase"], json.dumps(p["status"].get("containerStatuses"))[:300])' \
  "$LOGS/gpurack-validate.pod.json"
grep -E "gpu\.|counters|verdict" "$LOGS/gpurack-validate.log" | tail -n 8
echo "-- the pod without a GPU:"; cat "$LOGS/no-gpu.log"
grep -q "nvidia-smi rc=0" "$LOGS/no-gpu.log" && { echo "nvidia-smi worked without a GPU"; status=1; }
python3 lab/gpu-node/ratios.py "$LOGS/host-standard.json" "$LOGS/gpurack-validate.log" | tee "$LOGS/ratios.txt" || status=1

step "the validation role: the quick checks on the host, then the Node's validating taint"
PYTHONPATH=/opt/gpurack-ansible python3 -c 'import kubernetes' 2>/dev/null || { echo "no Python client of Kubernetes: run the stage3c unpack trip"; exit 1; }
PYTHONPATH=/opt/gpurack-ansible ANSIBLE_COLLECTIONS_PATH=/opt/gpurack-collections ANSIBLE_CONFIG=$PWD/ansible.cfg \
  python3 -m ansible.cli.playbook -i localhost, -c local playbooks/validate.yml -e gpurack_hosts=localhost \
  -e @lab/inventory/group_vars/lab_h200x1/pool.yml -e @lab/inventory/group_vars/lab_h200x1/expect.yml \
  -e node_labels_node_name=$NODE -e node_labels_kubeconfig=$PKI/admin.conf -e validation_textfile_dir= \
  -e "ansible_python_interpreter=$(command -v python3)" >"$LOGS/validate-role.log" 2>&1
echo "validation role: rc $?; $(grep -E '^localhost' "$LOGS/validate-role.log")"
grep -E "fatal|FAILED" -A5 "$LOGS/validate-role.log" | head -n 20
kapi get /api/v1/nodes/$NODE >"$LOGS/node-after.json"
python3 - "$LOGS/node-after.json" <<'PY' || status=1
import json, sys
node = json.load(open(sys.argv[1]))
taints = [t["key"] for t in node["spec"].get("taints", [])]
gpurack = {k: v for k, v in node["metadata"]["labels"].items() if k.startswith("gpurack.io/")}
condition = [c for c in node["status"]["conditions"] if c["type"] == "GpurackValidated"]
print("taints after:", taints)
print("gpurack labels:", gpurack)
print("GpurackValidated:", [(c["status"], c.get("reason")) for c in condition])
sys.exit(1 if "gpurack.io/validating" in taints else 0)
PY
exit $status
