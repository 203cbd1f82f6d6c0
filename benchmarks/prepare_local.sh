#!/usr/bin/env bash
# Run playbooks/prepare.yml on this machine (local connection) four times: --check --diff
# (the preview), apply, apply again (must change nothing), --check --diff again (must
# change nothing). Prints each step's recap line and time; logs go to OUT_DIR.
#
# Usage: benchmarks/prepare_local.sh OUT_DIR [ansible-playbook args...]
#   e.g. benchmarks/prepare_local.sh /tmp/out --tags os_tuning -e os_tuning_irqbalance_enabled=false
# Changes the machine it runs on (that is the point): use a node you are preparing anyway.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR [ansible-playbook args...]}
shift
cd "$(dirname "$0")/.."
mkdir -p "$out"
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1
for step in "check:--check --diff" "apply:--diff" "rerun:--diff" "recheck:--check --diff"; do
  name=${step%%:*}
  read -r -a mode <<<"${step#*:}"
  start=$SECONDS
  ansible-playbook -c local -i localhost, -e gpurack_hosts=localhost -e gpurack_control_plane_hosts=none \
    "${mode[@]}" "$@" playbooks/prepare.yml >"$out/prepare-$name.log" 2>&1
  rc=$?
  printf '%-8s rc=%s %3d s  %s\n' "$name" "$rc" "$((SECONDS - start))" \
    "$(grep -E '^localhost +:' "$out/prepare-$name.log" | tr -s ' ')"
done
