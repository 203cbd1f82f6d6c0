#!/usr/bin/env bash
# Validate a real GPU node straight from a checkout: capture, facts, quick checks, the
# preflight playbook with a local connection, then the measured standard tier (and a short
# burn-in when BURN_IN_S is set). Writes its evidence into OUT_DIR.
#
# Usage: benchmarks/gpu_node_validation.sh OUT_DIR [EXPECT_FILE]
# The node needs python3 with PyTorch; ansible-core, SQLAlchemy and Alembic may come from
# wheels unpacked into PYTHONPATH (air-gapped nodes), see docs/validation-tiers.md.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR [EXPECT_FILE]}
expect=${2:-inventory/example/group_vars/h200_inference/expect.yml}
cd "$(dirname "$0")/.."
mkdir -p "$out"
# NVLink multicast stays off: on shared hosts it can take every GPU out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD/tools:$PWD/.collections"
export ANSIBLE_CONFIG=$PWD/ansible.cfg LC_ALL=C.UTF-8 LANG=C.UTF-8
export GPURACK_DB=${GPURACK_DB:-$out/inventory.db} GPURACK_STATE_DIR=${GPURACK_STATE_DIR:-/tmp/gpurack-state}
gpurack() { python3 -m gpurack "$@"; }
step() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%T)"; }

step "capture"
start=$SECONDS
gpurack capture --force --output /tmp/gpurack-capture
echo "capture took $((SECONDS - start)) s"
tar -C /tmp -czf "$out/capture.tgz" gpurack-capture
cat /tmp/gpurack-capture/nvidia-smi-topo-m.txt

step "facts"
gpurack facts --from-capture /tmp/gpurack-capture --format json > "$out/facts.json"
python3 - "$out/facts.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["facts"]["gpurack_gpu"]["gpus"]:
    print(g["index"], g["name"], g["memory_total_mib"], "MiB", "PCIe", g["pcie"], g["bus_id"], g["serial"])
print(json.dumps(d["labels"], indent=1))
PY

step "validate --from-capture (quick) against $expect"
gpurack validate --from-capture /tmp/gpurack-capture --expect "$expect"
echo "rc=$?"

step "preflight playbook, local connection"
start=$SECONDS
ansible-playbook -c local -i localhost, -e gpurack_hosts=localhost -e "@$expect" \
  -e preflight_report_dir="$out" playbooks/preflight.yml 2>&1 | tee "$out/preflight.log" | tail -25
echo "rc=${PIPESTATUS[0]} preflight took $((SECONDS - start)) s"

step "validate --local --tier standard"
start=$SECONDS
gpurack validate --local --tier standard --expect "$expect" --output "$out/standard"
echo "rc=$? standard tier took $((SECONDS - start)) s"

if [ -n "${BURN_IN_S:-}" ]; then
  step "validate --local --tier burn-in --duration $BURN_IN_S"
  start=$SECONDS
  gpurack validate --local --tier burn-in --duration "$BURN_IN_S" --expect "$expect" --output "$out/burn-in"
  echo "rc=$? burn-in took $((SECONDS - start)) s"
fi

step "inventory"
gpurack inventory history "$(hostname)" || gpurack inventory list
