#!/usr/bin/env bash
# Start and stop a test VM from the image lab/images/build-vm-image.sh builds: QEMU under
# software emulation (TCG), the image's own kernel, root on an NVMe namespace (nvme0n1)
# backed by a copy-on-write overlay, and one more NVMe namespace per DISK given, each a
# loop device the caller attached (tools/molecule.sh does): never the machine's disks.
# SSH is forwarded from 127.0.0.1:PORT only.
#
#   lab/images/vm.sh start NAME PORT [DISK...]   boot, wait for SSH (up to 15 min)
#   lab/images/vm.sh stop NAME                    power off, remove the overlay
#
# State lives in ${GPURACK_VM_STATE:-/tmp/gpurack-vm}/NAME/: the overlay, qemu.pid and
# console.log (the serial console, the first place to look when a boot fails).
set -euo pipefail

STATE_ROOT=${GPURACK_VM_STATE:-/tmp/gpurack-vm}
IMAGE=$("$(dirname "${BASH_SOURCE[0]}")/build-vm-image.sh" --print-dir)
SSH_WAIT_S=${GPURACK_VM_SSH_WAIT_S:-900}

die() { echo "vm.sh: $*" >&2; exit 1; }

ssh_vm() {   # $1 port, then the command
  local port=$1; shift
  ssh -q -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o ConnectTimeout=5 -i "$IMAGE/id_ed25519" -p "$port" root@127.0.0.1 "$@"
}

start() {   # NAME PORT [DISK...]
  local name=$1 port=$2 dir="$STATE_ROOT/$1" disk i=0
  shift 2
  [[ -f $IMAGE/.complete ]] || die "no VM image at $IMAGE: run lab/images/build-vm-image.sh"
  command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: apt-get install qemu-system-x86 qemu-utils"
  [[ -e $dir/qemu.pid ]] && die "$name is already running (or was not stopped): lab/images/vm.sh stop $name"
  for disk in "$@"; do
    [[ -b $disk ]] && losetup "$disk" >/dev/null 2>&1 || die "$disk is not an attached loop device: only loop devices are given to the VM"
  done
  mkdir -p "$dir"
  qemu-img create -q -f qcow2 -b "$IMAGE/rootfs.raw" -F raw "$dir/os.qcow2"
  # Under emulation every guest syscall and page-table switch is costly: mitigations=off
  # drops the kernel's Meltdown/Spectre work-arounds (page-table isolation above all), which
  # protect nothing in a throw-away test VM and slow every process start (each Ansible task
  # starts Python). The kexec reboot reuses this command line.
  local args=(
    -name "gpurack-$name" -machine q35 -accel tcg,thread=multi -smp 2 -m 1536 -display none
    -serial "file:$dir/console.log" -daemonize -pidfile "$dir/qemu.pid"
    -kernel "$IMAGE/vmlinuz" -initrd "$IMAGE/initrd.img"
    -append "root=LABEL=gpurack-root rw console=ttyS0 quiet mitigations=off"
    -drive "file=$dir/os.qcow2,if=none,id=os,format=qcow2" -device nvme,serial=gpurack-os,drive=os
    -netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$port-:22" -device virtio-net-pci,netdev=net0,romfile=
  )
  for disk in "$@"; do
    i=$((i + 1))
    args+=(-drive "file=$disk,if=none,id=data$i,format=raw,cache=none"
           -device "nvme,serial=gpurack-data$i,drive=data$i")
  done
  qemu-system-x86_64 "${args[@]}" || { rm -rf --one-file-system "$dir"; die "qemu-system-x86_64 did not start $name"; }
  local t0=$SECONDS
  until ssh_vm "$port" true; do
    (( SECONDS - t0 < SSH_WAIT_S )) || { tail -20 "$dir/console.log" >&2; die "$name: no SSH on 127.0.0.1:$port after $SSH_WAIT_S s"; }
    sleep 3
  done
  # The image's package lists were fetched natively when it was built (build-vm-image.sh):
  # mark them fresh, as on a node that ran `apt update` within the hour, so that an apt task
  # with a cache_valid_time does not fetch and parse them again under emulation.
  ssh_vm "$port" touch /var/lib/apt/lists
  echo "$name: up in $((SECONDS - t0)) s (ssh -p $port root@127.0.0.1, key $IMAGE/id_ed25519)"
}

stop() {   # NAME
  local dir="$STATE_ROOT/$1" pid
  [[ -d $dir ]] || return 0
  if [[ -f $dir/qemu.pid ]]; then
    pid=$(cat "$dir/qemu.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf --one-file-system "$dir"
}

case ${1:-} in
  start) [[ $# -ge 3 ]] || die "usage: vm.sh start NAME PORT [DISK...]"; start "${@:2}" ;;
  stop) [[ $# -eq 2 ]] || die "usage: vm.sh stop NAME"; stop "$2" ;;
  *) die "usage: vm.sh start NAME PORT [DISK...] | stop NAME" ;;
esac
