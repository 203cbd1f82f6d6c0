#!/usr/bin/env bash
# Create the project's virtual environment from pinned versions; safe to run again.
# Only PyPI is needed: collections come from the `ansible` package, never from Galaxy.
set -euo pipefail
python=${1:-python3.11}
venv=${2:-.venv}
cd "$(dirname "$0")/.."

if ! command -v "$python" >/dev/null 2>&1; then
  echo "setup: $python not found; install Python 3.11 (ansible-core 2.19 needs it) and retry" >&2
  exit 64
fi
# System packages: a real PostgreSQL server for the inventory DB tests; the Docker engine,
# debootstrap, QEMU and an SSH client for Molecule and the lab rack.
need=()
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v ssh >/dev/null || need+=(openssh-client)
# The nvme_scratch_raid0 Molecule scenario boots a VM (these machines' kernel has no md).
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
# The offline Kubernetes build (make lab-k8s) links runc against libseccomp.
dpkg -s libseccomp-dev >/dev/null 2>&1 || need+=(libseccomp-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
# ... and copies Debian's nft and iptables (with their libraries) into the kube-proxy image.
[ -x /usr/sbin/nft ] || need+=(nftables)
[ -x /usr/sbin/xtables-nft-multi ] || need+=(iptables)
# ... and ipset (with iptables) into the kube-router image, the lab's NetworkPolicy agent.
[ -x /usr/sbin/ipset ] || need+=(ipset)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing ${need[*]} from the distribution"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "setup: ${need[*]} missing and not root: the tests that need them will skip with a reason" >&2
  fi
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# The driver, and the lab (lab/, its own distribution gpurack-lab: `gpurack lab` comes
# from its entry point). No .pth file: the driver finds the collection itself, in a checkout
# through ansible.cfg's ./.collections, elsewhere through Ansible's collections paths.
"$venv/bin/python" -m pip install --quiet -c requirements/constraints.txt -e '.[dev]' -e ./lab
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -f "$site/gpurack-collection.pth"   # left by earlier set-ups; it made the checkout shadow installs
echo "setup: $venv ready ($("$venv/bin/ansible" --version 2>/dev/null | sed -n 1p))"
