#!/usr/bin/env bash
# Run the Molecule scenarios under molecule/ and print how long each action took in each
# (the `make bench-molecule` figures; per-task times are in the logs, from profile_tasks).
#
#   tools/molecule.sh                      every scenario (nvme_scratch_raid0, then default)
#   tools/molecule.sh default              the named ones (make molecule-default, molecule-raid0)
#   GPURACK_MOLECULE_CHECK=0 tools/molecule.sh    skip the `molecule check` (--check --diff) pass
#   GPURACK_MOLECULE_KEEP=1 tools/molecule.sh X   leave the container (and its loop disks) up
#   GPURACK_MOLECULE_RERUN=1 tools/molecule.sh    run a scenario even if it passed on the same inputs
#
# A pass is kept: a scenario that passed every action is recorded under the digest of every
# file it reads (tools/molecule_inputs.py: the scenario, the roles and plugins it reaches, the
# image scripts, the pinned tools), in ~/.cache/gpurack/molecule-passed/, and is not run again
# while that digest is the same; a change to any of those files runs it. docs/molecule.md says
# why this is safe.
#
# Per scenario: fresh 1 GiB sparse files under /tmp/gpurack-molecule/<scenario>/, attached
# as loop devices and given to the container as /dev/nvme0n1 and /dev/nvme1n1
# (GPURACK_MOLECULE_NVME0/1, read by .config/molecule/config.yml); then destroy (only when
# an instance is left over), syntax, create, prepare, converge, idempotence, verify, check
# and destroy, as `molecule test` would, but one action at a time so each can be timed. The loops are detached and the files removed
# on the way out, also on failure or Ctrl-C. Only loop devices this script attached are
# touched: never the machine's disks.
#
# Needs root (losetup, dockerd), docker.io, debootstrap and, for nvme_scratch_raid0, QEMU
# (qemu-system-x86, qemu-utils): Debian packages tools/setup.sh installs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
# Plain logs: the check step greps the recap.
export ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1 NO_COLOR=1
WORK=/tmp/gpurack-molecule
LOGDIR=${GPURACK_MOLECULE_LOGDIR:-$ROOT/.cache/molecule-logs}
DISK_SIZE=${GPURACK_MOLECULE_DISK_SIZE:-1G}
RUN_CHECK=${GPURACK_MOLECULE_CHECK:-1}
PASSED_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/gpurack/molecule-passed
mkdir -p "$WORK" "$LOGDIR"

die() { echo "molecule.sh: $*" >&2; exit 1; }
[[ $EUID -eq 0 ]] || die "needs root (losetup and dockerd)"

ensure_dockerd() {
  if docker info >/dev/null 2>&1; then return; fi
  command -v dockerd >/dev/null || die "dockerd missing: apt-get install docker.io"
  echo "starting dockerd (log: /var/log/gpurack-dockerd.log)"
  setsid dockerd >/var/log/gpurack-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return
    sleep 1
  done
  die "dockerd did not answer on its socket within 60 s (see /var/log/gpurack-dockerd.log)"
}

LOOPS=()
attach_disks() {   # $1 scenario
  local dir="$WORK/$1" i
  rm -rf "$dir" && mkdir -p "$dir"
  for i in 0 1; do
    truncate -s "$DISK_SIZE" "$dir/nvme$i.img"
    LOOPS+=("$(losetup -f --show "$dir/nvme$i.img")")
  done
  export GPURACK_MOLECULE_NVME0=${LOOPS[0]} GPURACK_MOLECULE_NVME1=${LOOPS[1]}
}

detach_disks() {
  local loop holder name
  for loop in "${LOOPS[@]}"; do
    name=${loop#/dev/}
    # An md array the container built on the loops lives in the host kernel: stop it first.
    for holder in /sys/block/"$name"/holders/*; do
      [[ -e $holder/md/array_state ]] && echo clear >"$holder/md/array_state" || true
    done
    losetup -d "$loop" 2>/dev/null || echo "molecule.sh: could not detach $loop" >&2
  done
  LOOPS=()
  unset GPURACK_MOLECULE_NVME0 GPURACK_MOLECULE_NVME1
}

CURRENT=""
cleanup() {
  if [[ -n $CURRENT && -z ${GPURACK_MOLECULE_KEEP:-} ]]; then
    molecule destroy -s "$CURRENT" >>"$LOGDIR/$CURRENT.log" 2>&1 || true
  fi
  if [[ -z ${GPURACK_MOLECULE_KEEP:-} ]]; then
    detach_disks
    if [[ -n $CURRENT ]]; then rm -rf "${WORK:?}/$CURRENT"; fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# An instance a leading destroy would have to clean up: the scenario's container, a VM
# that vm.sh started, or Molecule's state saying created (a run killed half-way). When
# there is none the leading destroy is skipped: on a clean machine it only costs
# Molecule's start-up and a playbook (10-20 s per scenario).
instance_exists() {   # $1 scenario
  [[ -n $(docker ps -aq --filter "name=^gpurack-molecule-$1\$") ]] && return 0
  compgen -G "${GPURACK_VM_STATE:-/tmp/gpurack-vm}/*" >/dev/null && return 0
  grep -qs '^created: true' "$HOME"/.ansible/tmp/molecule.*."$1"/state.yml
}

ACTIONS=(destroy syntax create prepare converge idempotence verify check destroy)
declare -A RESULT TOTAL SECS   # SECS[scenario:index into ACTIONS]
run_scenario() {   # $1 scenario
  local s=$1 log="$LOGDIR/$1.log" t0 t1 i action
  CURRENT=$s
  : >"$log"
  attach_disks "$s"
  echo "== $s (disks ${LOOPS[*]}; log $log)"
  t0=$(now)
  RESULT[$s]=failed
  for i in "${!ACTIONS[@]}"; do
    action=${ACTIONS[$i]}
    if [[ $action == check && $RUN_CHECK == 0 ]] || [[ $i -gt 0 && $action == destroy && -n ${GPURACK_MOLECULE_KEEP:-} ]]; then
      continue
    fi
    printf '   %-12s' "$action"
    if [[ $i -eq 0 ]] && ! instance_exists "$s"; then
      echo "skipped (no instance)"
      SECS[$s:$i]=skip
      continue
    fi
    t1=$(now)
    if ! molecule "$action" -s "$s" >"$WORK/$s/action.log" 2>&1; then
      cat "$WORK/$s/action.log" >>"$log"
      echo "FAILED ($(elapsed "$t1" "$(now)") s)"
      tail -40 "$WORK/$s/action.log" | sed 's/^/   | /'
      RESULT[$s]="failed:$action"
      break
    fi
    cat "$WORK/$s/action.log" >>"$log"
    SECS[$s:$i]=$(elapsed "$t1" "$(now)")
    # molecule check only runs --check --diff; a converged node must report no change.
    if [[ $action == check ]] && grep -Eq 'changed=[1-9]' "$WORK/$s/action.log"; then
      echo "FAILED (check mode reports changes on the converged node)"
      grep -E 'TASK \[|changed:' "$WORK/$s/action.log" | grep -B1 'changed:' | sed 's/^/   | /' | tail -40
      RESULT[$s]="failed:check-changed"
      break
    fi
    echo "ok (${SECS[$s:$i]} s)"
    [[ $action == verify ]] && RESULT[$s]=verified
  done
  [[ ${RESULT[$s]} == verified ]] && RESULT[$s]=passed
  TOTAL[$s]=$(elapsed "$t0" "$(now)")
  cleanup   # destroys again only when an action failed before the last destroy
  CURRENT=""
}

if [[ $# -gt 0 ]]; then
  SCENARIOS=("$@")
else
  # default (every prep role on one node) last, after the other scenarios.
  mapfile -t SCENARIOS < <(find molecule -mindepth 2 -maxdepth 2 -name molecule.yml -printf '%h\n' \
    | xargs -n1 basename | grep -vx default | sort)
  [[ -f molecule/default/molecule.yml ]] && SCENARIOS+=(default)
fi

# Two scenarios may run at once (`make molecule-raid0` beside `make molecule-default`): one
# of them starts dockerd and builds the node image, the other waits for it.
exec 8>/run/lock/gpurack-molecule-setup.lock
flock 8
ensure_dockerd
lab/images/build-node-image.sh
flock -u 8

# The scenario's pass on these exact inputs, when one is recorded (empty otherwise).
passed_before() {   # $1 scenario, $2 digest
  [[ -z ${GPURACK_MOLECULE_RERUN:-} && -f $PASSED_DIR/$1.$2 ]] && cat "$PASSED_DIR/$1.$2"
}

# Only a full run (every action, check included, the instance destroyed) is recorded.
record_pass() {   # $1 scenario, $2 digest
  [[ ${RESULT[$1]} == passed && $RUN_CHECK == 1 && -z ${GPURACK_MOLECULE_KEEP:-} ]] || return 0
  mkdir -p "$PASSED_DIR"
  printf 'passed %s in %s s (%s)\n' "$(date -u +%FT%TZ)" "${TOTAL[$1]}" "$(git rev-parse --short HEAD 2>/dev/null || echo '-')" \
    >"$PASSED_DIR/$1.$2"
}

for s in "${SCENARIOS[@]}"; do
  [[ -f molecule/$s/molecule.yml ]] || die "no scenario molecule/$s"
  read -r digest nfiles < <(python3 tools/molecule_inputs.py "$s") || true
  [[ -n ${digest:-} ]] || die "tools/molecule_inputs.py gave no digest for $s"
  if before=$(passed_before "$s" "$digest"); then
    echo "== $s: not run: $before on these exact inputs ($nfiles files, digest ${digest:0:16});" \
      "GPURACK_MOLECULE_RERUN=1 runs it"
    RESULT[$s]=kept
    TOTAL[$s]=0
    continue
  fi
  run_scenario "$s"
  record_pass "$s" "$digest"
done

# One row per scenario, one column per action in the order they ran (seconds; skip: the
# leading destroy found no instance; -: not run).
echo
row() { printf '| %s ' "$@"; echo '|'; }
row scenario result "${ACTIONS[@]}" total
row $(printf -- '--- %.0s' $(seq $(( ${#ACTIONS[@]} + 3 ))))
rc=0
for s in "${SCENARIOS[@]}"; do
  cells=()
  for i in "${!ACTIONS[@]}"; do cells+=("${SECS[$s:$i]:--}"); done
  row "$s" "${RESULT[$s]}" "${cells[@]}" "${TOTAL[$s]}"
  [[ ${RESULT[$s]} == passed || ${RESULT[$s]} == kept ]] || rc=1
done
exit $rc
