#!/usr/bin/env bash
# Issue 28, stage 2, on a real GPU machine without systemd and without a network
# (docs/gpu-node.md): the container_runtime role itself writes containerd's config with the
# NVIDIA runtime and CDI, twice (the second run must change nothing); containerd and runc are
# the lab build's; then one container asks CRI for the CDI device nvidia.com/gpu=all and one
# asks for nothing.
#
# Carried in .gpu-carry/stage2/ (lab/gpu-node/carry.sh makes it): bin/*.xz (containerd, its
# shim, runc, ctr, crictl, nvidia-ctk, nvidia-cdi-hook), images/ (pause, gpu-probe), wheels/
# (ansible-core and its dependencies for the machine's Python) and collection/ (the built
# collection tarball). Everything it learns goes under $OUT.
#
# runc runs behind a small wrapper that keeps, for every `create`, the OCI config containerd
# asked for and runc's own log (runc init's errors reach only that log). When the pod sandbox
# cannot start, the kept config is started again by runc alone, once per variant with one part
# of it taken out, to name the part this kernel refuses.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to a folder for the results}
# Few files come back from the device tool: the logs go in one archive at the end.
LOGS=$OUT/logs; mkdir -p "$LOGS"
trap 'tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$LOGS"' EXIT
CARRY=${CARRY:-.gpu-carry/stage2}
driver_root=${DRIVER_ROOT:-/usr/local/nvidia}
export LC_ALL=C.UTF-8 PATH="/usr/local/bin:$driver_root/bin:$PATH"
step() { echo "== $*"; }
status=0

step "binaries"
pkill -x containerd 2>/dev/null; pkill -f containerd-shim 2>/dev/null; sleep 1
mkdir -p /usr/local/lib/gpurack
for f in "$CARRY"/bin/*.xz; do
  name=$(basename "$f" .xz)
  dest=/usr/local/bin/$name; [[ $name == runc ]] && dest=/usr/local/lib/gpurack/runc
  xz -dc "$f" >"$dest" && chmod +x "$dest"
done
cat >/usr/local/bin/runc <<WRAP
#!/bin/sh
# Keep what containerd asked runc to create, and runc's log, under \$OUT (runtime-stage.sh).
log=""; bundle=""; prev=""; cmd=""
for a in "\$@"; do
  case "\$prev" in --log) log="\$a";; --bundle|-b) bundle="\$a";; esac
  case "\$a" in create|start|delete|kill|state|run) [ -z "\$cmd" ] && cmd="\$a";; esac
  prev="\$a"
done
if [ "\$cmd" = create ] && [ -f "\$bundle/config.json" ]; then
  n=\$(ls $LOGS/created 2>/dev/null | wc -l); mkdir -p $LOGS/created
  cp "\$bundle/config.json" "$LOGS/created/\$n-config.json"
fi
/usr/local/lib/gpurack/runc "\$@"; rc=\$?
if [ "\$cmd" = create ] && [ -n "\$log" ] && [ -f "\$log" ]; then
  { echo "--- runc create rc \$rc"; cat "\$log"; } >>$LOGS/runc-create.log
fi
exit \$rc
WRAP
chmod +x /usr/local/bin/runc
containerd --version; runc --version | head -1; nvidia-ctk --version | head -1

step "machine: namespaces and cgroups runc will use"
{
  uname -r
  for f in /proc/sys/user/max_*_namespaces; do echo "$f $(cat "$f")"; done
  grep cgroup /proc/mounts; cat /proc/self/cgroup
  echo "controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>&1)"
  echo "subtree: $(cat /sys/fs/cgroup/cgroup.subtree_control 2>&1)"
  echo "pid1: $(cat /proc/1/comm)"
} | tee "$LOGS/machine.txt"

step "ansible from wheels, the collection from its tarball"
site=/opt/gpurack-ansible; mkdir -p "$site" /opt/gpurack-collections
for w in "$CARRY"/wheels/*.whl; do python3 -m zipfile -e "$w" "$site" || status=1; done
export PYTHONPATH=$site ANSIBLE_COLLECTIONS_PATH=/opt/gpurack-collections ANSIBLE_CONFIG=$PWD/ansible.cfg
python3 -m ansible.cli.galaxy collection install --offline --no-deps -p /opt/gpurack-collections \
  "$CARRY"/collection/*.tar.gz 2>&1 | tail -1

step "the container_runtime role, twice"
for run in first second; do
  start=$(date +%s%N)
  python3 -m ansible.cli.playbook -i localhost, lab/playbooks/gpu_node_runtime.yml \
    -e "gpu_node_driver_root=$driver_root" -e "ansible_python_interpreter=$(command -v python3)" \
    >"$LOGS/role-$run.log" 2>&1
  rc=$?
  echo "$run run: rc $rc in $(( ($(date +%s%N) - start) / 1000000 )) ms; $(grep -E '^localhost' "$LOGS/role-$run.log")"
  (( rc == 0 )) || { status=1; tail -n 30 "$LOGS/role-$run.log"; }
done
cp /etc/containerd/config.toml "$LOGS/config.toml" 2>/dev/null
cp /etc/containerd/conf.d/99-nvidia.toml "$LOGS/99-nvidia.toml" 2>/dev/null
cp /etc/cdi/nvidia.yaml "$LOGS/cdi-nvidia.yaml" 2>/dev/null
grep -c "hostPath" /etc/cdi/nvidia.yaml 2>/dev/null | sed 's/^/CDI spec host paths: /'

step "containerd on the role's config"
rm -f /run/containerd/containerd.sock  # a socket left by an earlier run on this machine
containerd --config /etc/containerd/config.toml >"$LOGS/containerd.log" 2>&1 &
for _ in $(seq 1 30); do ctr version >/dev/null 2>&1 && break; sleep 1; done
crictl version || { status=1; tail -n 20 "$LOGS/containerd.log"; }
for image in "$CARRY"/images/*.tar; do ctr -n k8s.io images import "$image" 2>&1 | tail -1; done

step "a pod sandbox on the host network"
mkdir -p /tmp/pod-logs
cat >/tmp/pod.json <<JSON
{"metadata": {"name": "gpu-probe", "namespace": "default", "uid": "gpu-probe-1"},
 "linux": {"security_context": {"namespace_options": {"network": 2}}}, "log_directory": "/tmp/pod-logs"}
JSON
if ! pod=$(crictl runp /tmp/pod.json 2>"$LOGS/runp.err"); then
  status=1; cat "$LOGS/runp.err"
  echo "-- runc's own log of the failed create:"; grep -v '"level":"debug"' "$LOGS/runc-create.log" | tail -n 12
  [[ -f $LOGS/created/0-config.json ]] && python3 lab/gpu-node/runc_bisect.py "$LOGS"/created/0-config.json "$CARRY"/images/pause.tar "$LOGS"
  exit $status
fi
echo "sandbox $pod"

step "two containers: with the CDI device, and without"
for name in with-gpu without-gpu; do
  devices='[]'; [[ $name == with-gpu ]] && devices='[{"name": "nvidia.com/gpu=all"}]'
  cat >"/tmp/$name.json" <<JSON
{"metadata": {"name": "$name"}, "image": {"image": "registry.gpurack.lab/gpu-probe:1"},
 "command": ["/bin/sh", "-c", "ls /dev/nvidia* 2>&1; nvidia-smi -L 2>&1; echo nvidia-smi rc=\$?"],
 "CDI_devices": $devices, "log_path": "$name.log"}
JSON
  ctr_id=$(crictl create "$pod" "/tmp/$name.json" /tmp/pod.json) && crictl start "$ctr_id" >/dev/null || status=1
  sleep 3
  echo "-- $name"; crictl logs "$ctr_id" 2>&1 | tee "$LOGS/$name.txt"
done
grep -q "GPU 0: NVIDIA H200" "$LOGS/with-gpu.txt" || { echo "the container with the CDI device saw no H200"; status=1; }
grep -q "/dev/nvidia" "$LOGS/without-gpu.txt" && grep -v "No such file" "$LOGS/without-gpu.txt" | grep -q "^/dev/nvidia" \
  && { echo "the container without a device saw /dev/nvidia*"; status=1; }
grep -q "nvidia-smi rc=0" "$LOGS/without-gpu.txt" && { echo "nvidia-smi worked without a device"; status=1; }
exit $status
