#!/usr/bin/env bash
# Build the gpurack VM image: Debian 12 with its own kernel (linux-image-amd64), for the
# tests that need a kernel feature the build machines' kernel lacks. The one user today is
# the nvme_scratch_raid0 Molecule scenario: these machines' kernel has no md driver
# (CONFIG_BLK_DEV_MD), so a RAID0 can only be built inside a VM with Debian's kernel,
# under QEMU's software emulation (KVM does not work here: shared/notes/lab-host-facts.md).
#
# Output, cached: ${GPURACK_VM_CACHE:-~/.cache/gpurack/vm}/<hash>/ with
#   rootfs.raw     ext4 root filesystem (made by mke2fs -d, no loop mount needed)
#   vmlinuz        the kernel, initrd.img its initramfs (copied out of the image's /boot)
#   id_ed25519     the key root logs in with (its .pub is in the image)
# and a `current` symlink to it. <hash> is the hash of this script, so a changed package
# list rebuilds. FORCE=1 rebuilds anyway.
#
# Usage: tools/images/build-vm-image.sh [--print-dir]   (needs root, debootstrap, e2fsprogs)
set -euo pipefail

SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE_ROOT=${GPURACK_VM_CACHE:-$HOME/.cache/gpurack/vm}
ROOTFS_SIZE=${GPURACK_VM_ROOTFS_SIZE:-3G}
PACKAGES=(
  linux-image-amd64 initramfs-tools systemd systemd-sysv dbus udev kmod openssh-server
  python3 python3-apt iproute2 busybox kexec-tools mdadm xfsprogs nvme-cli procps ca-certificates
)

hash=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
out="$CACHE_ROOT/$hash"
if [[ ${1:-} == --print-dir ]]; then echo "$out"; exit 0; fi

if [[ -z ${FORCE:-} && -f $out/.complete ]]; then
  ln -sfn "$hash" "$CACHE_ROOT/current"
  echo "vm image cached: $out"
  exit 0
fi

[[ $EUID -eq 0 ]] || { echo "build-vm-image: needs root (debootstrap)" >&2; exit 64; }
for tool in debootstrap mke2fs ssh-keygen; do
  command -v "$tool" >/dev/null || { echo "build-vm-image: $tool is not installed" >&2; exit 64; }
done

rootfs=$(mktemp -d /tmp/gpurack-vm-rootfs.XXXXXX)
trap 'rm -rf --one-file-system "$rootfs" "$rootfs.log"' EXIT
start=$SECONDS
echo "debootstrap $SUITE with Debian's kernel into $rootfs ..."
include=$(IFS=,; echo "${PACKAGES[*]}")
debootstrap --variant=minbase --include="$include" "$SUITE" "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 || {
  tail -20 "$rootfs.log" >&2; echo "build-vm-image: debootstrap failed" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out"
ssh-keygen -q -t ed25519 -N '' -C gpurack-vm -f "$out/id_ed25519"

# Root on the first NVMe namespace (the VM's OS disk), DHCP on the one NIC (QEMU's user
# network) by systemd-networkd, root's key, and a hostname.
echo 'gpurack-vm' >"$rootfs/etc/hostname"
printf 'LABEL=gpurack-root / ext4 defaults 0 1\n' >"$rootfs/etc/fstab"
printf '[Match]\nName=en*\n\n[Network]\nDHCP=ipv4\n' >"$rootfs/etc/systemd/network/50-dhcp.network"
ln -sf /lib/systemd/system/systemd-networkd.service \
  "$rootfs/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
install -d -m 0700 "$rootfs/root/.ssh"
install -m 0600 "$out/id_ed25519.pub" "$rootfs/root/.ssh/authorized_keys"
: >"$rootfs/etc/machine-id"
ln -sf /dev/null "$rootfs/etc/systemd/system/systemd-timesyncd.service"
printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://security.debian.org/debian-security %s-security main\n' \
  "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$SUITE" >"$rootfs/etc/apt/sources.list"
# Package lists and apt's binary cache, made natively here: under emulation `apt update` and
# the first parse of the lists cost the role's package task about 100 s. vm.sh marks the
# lists fresh after boot. (Every package nvme_scratch and the verify use is in PACKAGES
# above, so its install task finds them present; the install path itself, with a refresh
# and mdadm's update-initramfs trigger, runs in the default scenario's container.)
chroot "$rootfs" apt-get -q update >>"$rootfs.log" 2>&1 || {
  tail -20 "$rootfs.log" >&2; echo "build-vm-image: apt-get update in the image failed" >&2; exit 1; }
rm -f "$rootfs"/var/cache/apt/archives/*.deb
# Boot-time units the tests never use: kexec-tools' own load/kexec scripts (the verify
# loads the kernel itself before `systemctl kexec`) and e2scrub's reaper; each costs
# seconds of every emulated boot.
for unit in kexec-load.service kexec.service e2scrub_reap.service; do
  ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
done
# initramfs with the modules this VM uses, not most of them. The first initrd, made here in
# the chroot, lists them (NVMe and ext4, for the root): the chroot cannot tell which modules
# the VM needs, and with MODULES=most the emulated kernel unpacks about 37 MB at every boot.
# Inside the VM MODULES=dep then finds them itself: update-initramfs there takes about 2
# minutes instead of 10.
conf="$rootfs/etc/initramfs-tools/conf.d/gpurack-vm.conf"
printf '%s\n' nvme ext4 >>"$rootfs/etc/initramfs-tools/modules"
printf 'MODULES=list\n' >"$conf"
kver=$(basename "$(ls -d "$rootfs"/lib/modules/*)")
chroot "$rootfs" update-initramfs -u -k "$kver" >>"$rootfs.log" 2>&1 || {
  tail -20 "$rootfs.log" >&2; echo "build-vm-image: update-initramfs in the image failed" >&2; exit 1; }
printf 'MODULES=dep\n' >"$conf"

cp "$rootfs"/boot/vmlinuz-* "$out/vmlinuz"
cp "$rootfs"/boot/initrd.img-* "$out/initrd.img"
mke2fs -q -t ext4 -L gpurack-root -d "$rootfs" "$out/rootfs.raw" "$ROOTFS_SIZE"
touch "$out/.complete"
ln -sfn "$hash" "$CACHE_ROOT/current"
echo "vm image built: $out in $((SECONDS - start)) s"
