#!/usr/bin/env bash
# Build the gpurack node image: Debian 12 (bookworm) with systemd as PID 1, offline-capable.
# No container registry is reachable from the build machines, so the image is made with
# debootstrap and `docker import` instead of `docker build FROM debian`.
#
# Tags: gpurack-node:<hash> (hash of this script, so a changed package list rebuilds) and
# gpurack-node:bookworm (what Molecule and the lab use). The build is skipped when the hash
# tag already exists. FORCE=1 rebuilds anyway.
#
# Usage: tools/images/build-node-image.sh        (needs root, debootstrap and a docker daemon)
set -euo pipefail

IMAGE_REPO=${GPURACK_NODE_IMAGE_REPO:-gpurack-node}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=(
  systemd systemd-sysv dbus openssh-server python3 python3-apt iproute2 kmod
  mdadm xfsprogs udev sudo procps ca-certificates apt-transport-https gnupg
  # roles/observability: installed here, so the lab needs no network for it.
  prometheus prometheus-node-exporter
)

hash=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
tag_hash="${IMAGE_REPO}:${hash}"
tag_suite="${IMAGE_REPO}:${SUITE}"

if [[ -z "${FORCE:-}" ]] && docker image inspect "$tag_hash" >/dev/null 2>&1; then
  docker tag "$tag_hash" "$tag_suite"
  echo "image cached: $tag_hash (= $tag_suite)"
  exit 0
fi

for tool in debootstrap docker; do
  command -v "$tool" >/dev/null || { echo "build-node-image: $tool is not installed" >&2; exit 64; }
done

rootfs=$(mktemp -d /tmp/gpurack-rootfs.XXXXXX)
trap 'rm -rf --one-file-system "$rootfs"' EXIT

start=$SECONDS
echo "debootstrap $SUITE into $rootfs ..."
include=$(IFS=,; echo "${PACKAGES[*]}")
debootstrap --variant=minbase --include="$include" "$SUITE" "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 || {
  tail -20 "$rootfs.log" >&2; echo "build-node-image: debootstrap failed (log: $rootfs.log)" >&2; exit 1; }
rm -f "$rootfs.log"

# A container has no consoles, no hardware clock and no kernel to tune: these units only
# fail or wait there. mdadm's monitor and the udev trigger stay: the disks roles need them.
for unit in getty@tty1.service serial-getty@.service console-getty.service \
            systemd-remount-fs.service systemd-timesyncd.service e2scrub_reap.service; do
  ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
done
# Prometheus runs only where roles/observability enables it (the control plane), not on
# every node the image boots; the node exporter keeps the package's default (enabled).
rm -f "$rootfs/etc/systemd/system/multi-user.target.wants/prometheus.service"
# An empty machine-id is filled on first boot, so each container gets its own.
: >"$rootfs/etc/machine-id"
# apt inside the container reaches Debian's mirror; keep docs out to keep the image small.
printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://security.debian.org/debian-security %s-security main\n' \
  "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$SUITE" >"$rootfs/etc/apt/sources.list"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
# Empty package lists dated 1970: apt's cache_valid_time then refreshes them on first use
# (a fresh mtime would make Ansible trust the empty lists and find no package).
install -d -m 0700 "$rootfs/var/lib/apt/lists/partial"
chroot "$rootfs" chown _apt:root /var/lib/apt/lists/partial
touch -d @0 "$rootfs/var/lib/apt/lists"
# sshd host keys are made per container on first boot, not baked into the image; the
# drop-in resets ExecStartPre so the keys exist before Debian's `sshd -t` check runs.
rm -f "$rootfs"/etc/ssh/ssh_host_*
mkdir -p "$rootfs/etc/systemd/system/ssh.service.d"
cat >"$rootfs/etc/systemd/system/ssh.service.d/gpurack-hostkeys.conf" <<'UNIT'
[Service]
ExecStartPre=
ExecStartPre=/usr/bin/ssh-keygen -A
ExecStartPre=/usr/sbin/sshd -t
UNIT

tar -C "$rootfs" -c . | docker import \
  --change 'ENTRYPOINT ["/sbin/init"]' \
  --change 'ENV container=docker' \
  --message "gpurack node image ($SUITE, ${#PACKAGES[@]} packages, script $hash)" \
  - "$tag_hash" >/dev/null
docker tag "$tag_hash" "$tag_suite"
echo "image built: $tag_hash (= $tag_suite) in $((SECONDS - start)) s"
