#!/usr/bin/env bash
# Build a signed, flat apt repository of STAND-IN packages for the Molecule scenarios
# of nvidia_driver, cuda, container_runtime and fabric.
#
# The packages carry NVIDIA's package names and versions so that the roles' real code
# paths run unchanged: repository + signed-by keyring, apt pin on the branch, install at
# the pinned version (a newer branch is in the repository too, so the pin is exercised),
# dpkg holds, systemd units enabled and started. They contain no NVIDIA software: each one
# only ships a README (and, where the role manages a service, a unit that sleeps). The real
# packages are exercised only on real machines.
#
# The signing key is generated here, per build, and thrown away with the GNUPGHOME.
#
# usage: build.sh OUTDIR [KERNEL_RELEASE]
#   OUTDIR          the repository root: *.deb, Packages, Release, InRelease, Release.gpg,
#                   standin.asc (the armored public key)
#   KERNEL_RELEASE  kernel for the linux-headers stand-in (default: uname -r; a container
#                   shares the kernel of its host, so the controller's is the node's)
#   STANDIN_DRIVER_VERSIONS (environment) the driver versions to build, default
#                   "580.95.05-1 590.48.01-1"; the lab adds a newer 580 for its patch test
# needs: dpkg-deb, gpg, and apt-ftparchive (apt-utils) or dpkg-scanpackages (dpkg-dev)
set -euo pipefail

out=${1:?usage: build.sh OUTDIR [KERNEL_RELEASE]}
krel=${2:-$(uname -r)}
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
rm -f "$out"/*.deb "$out"/Packages* "$out"/Release* "$out"/InRelease "$out"/standin.asc

STANDIN_NOTE="Stand-in package for gpurack's Molecule tests. It carries an NVIDIA (or distribution)
 package name and version and contains no software; the real package is exercised only on
 real machines."

# pkg NAME VERSION [unit=NAME.service] [dir=/path] [depends=...] [arch=all]
pkg() {
  local name=$1 version=$2; shift 2
  local unit="" dir="" depends="" parch=$arch opt
  for opt in "$@"; do
    case $opt in
      unit=*) unit=${opt#unit=} ;;
      dir=*) dir=${opt#dir=} ;;
      depends=*) depends=${opt#depends=} ;;
      arch=*) parch=${opt#arch=} ;;
      *) echo "build.sh: unknown option $opt" >&2; exit 2 ;;
    esac
  done
  local root="$work/$name-$version"
  mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$name"
  printf 'Stand-in for %s %s (gpurack Molecule tests only).\nThe real package is exercised only on real machines.\n' \
    "$name" "$version" >"$root/usr/share/doc/$name/README.standin"
  if [[ -n $unit ]]; then
    mkdir -p "$root/lib/systemd/system"
    cat >"$root/lib/systemd/system/$unit" <<UNIT
[Unit]
Description=Stand-in for $unit from $name $version (gpurack tests only)

[Service]
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
UNIT
  fi
  if [[ -n $dir ]]; then
    mkdir -p "$root$dir"
    printf 'stand-in placeholder from %s %s\n' "$name" "$version" >"$root$dir/STANDIN"
  fi
  {
    echo "Package: $name"
    echo "Version: $version"
    echo "Architecture: $parch"
    echo "Maintainer: gpurack maintainers <maintainers@gpurack.invalid>"
    echo "Section: misc"
    echo "Priority: optional"
    [[ -n $depends ]] && echo "Depends: $depends"
    echo "Description: STAND-IN for tests: $name $version"
    echo " $STANDIN_NOTE"
  } >"$root/DEBIAN/control"
  dpkg-deb --root-owner-group -Zgzip --build "$root" "$out/${name}_${version}_${parch}.deb" >/dev/null
}

# NVIDIA driver, branch 580 (pinned by the tests) and 590 (newer: apt would take it without the pin).
for v in ${STANDIN_DRIVER_VERSIONS:-580.95.05-1 590.48.01-1}; do
  pkg nvidia-kernel-open-dkms "$v" dir=/usr/src/nvidia-${v%-*}
  pkg nvidia-kernel-dkms "$v" dir=/usr/src/nvidia-${v%-*}
  pkg nvidia-driver-cuda "$v"
  pkg nvidia-persistenced "$v" unit=nvidia-persistenced.service
  pkg "nvidia-fabricmanager-${v%%.*}" "$v" unit=nvidia-fabricmanager.service
done
# Headers of the running kernel, as the distribution names them: the driver role asserts
# /lib/modules/<kernel>/build after installing them.
pkg "linux-headers-$krel" "${krel%%-*}-1" dir="/lib/modules/$krel/build"
# The distribution's kernel metapackages, which a patch upgrades in the driver's transaction.
# Empty: a container runs its host's kernel whatever is installed.
pkg "linux-image-$arch" "${krel%%-*}+standin1"
pkg "linux-headers-$arch" "${krel%%-*}+standin1" depends="linux-headers-$krel"
# CUDA toolkit, two minor versions.
pkg cuda-toolkit-13-0 13.0.2-1 dir=/usr/local/cuda-13.0/bin
pkg cuda-toolkit-13-1 13.1.0-1 dir=/usr/local/cuda-13.1/bin
# NVIDIA Container Toolkit.
pkg nvidia-container-toolkit-base 1.18.0-1
pkg nvidia-container-toolkit 1.18.0-1 depends="nvidia-container-toolkit-base (= 1.18.0-1)"
# DOCA-OFED profile package (fabric_stack: doca).
pkg doca-ofed 3.1.0-1

cd "$out"
if command -v apt-ftparchive >/dev/null; then
  apt-ftparchive packages . >Packages
else
  dpkg-scanpackages --multiversion . >Packages 2>/dev/null
fi
gzip -9nk Packages
if command -v apt-ftparchive >/dev/null; then
  apt-ftparchive -o APT::FTPArchive::Release::Origin=gpurack-standin \
    -o APT::FTPArchive::Release::Label="gpurack stand-in packages (tests only)" \
    -o APT::FTPArchive::Release::Suite=standin release . >"$work/Release"
  mv "$work/Release" Release
else
  {
    echo "Origin: gpurack-standin"
    echo "Label: gpurack stand-in packages (tests only)"
    echo "Suite: standin"
    echo "Date: $(LC_ALL=C date -Ru)"
    echo "SHA256:"
    for f in Packages Packages.gz; do printf ' %s %s %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$(stat -c%s "$f")" "$f"; done
  } >Release
fi

export GNUPGHOME="$work/gnupg"
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-generate-key \
  "gpurack stand-in repository (throwaway test key) <standin@gpurack.invalid>" ed25519 sign 1d
gpg --batch --quiet --armor --export >standin.asc
gpg --batch --quiet --yes --clearsign -o InRelease Release
gpg --batch --quiet --yes -abs -o Release.gpg Release
chmod -R a+rX "$out"
echo "stand-in repository: $out ($(ls ./*.deb | wc -l) packages, kernel $krel)"
