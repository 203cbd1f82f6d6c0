#!/usr/bin/env bash
# Make what runtime-stage.sh takes to a GPU machine that has no network (docs/gpu-node.md):
# .gpu-carry/stage2/ (git-excluded; the device tool carries at most 64 MiB a trip) with
#   bin/*.xz        containerd, its runc shim, runc, ctr, crictl (the lab build) and
#                   nvidia-ctk, nvidia-cdi-hook (built on request: build.sh --only ...)
#   images/*.tar    the lab's pause image, and gpu-probe: busybox and the glibc libraries that
#                   nvidia-smi needs (CDI brings the driver's own libraries, not the C library)
#   wheels/*.whl    ansible-core and its dependencies for the GPU machine's Python (PY=3.12)
#   collection/     this collection's tarball
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-3.12}
dest=.gpu-carry/stage2
build=$(lab/k8s-build/build.sh --print-dir)
rm -rf "$dest" && mkdir -p "$dest"/{bin,images,wheels,collection}
for b in nvidia-ctk nvidia-cdi-hook; do
  [[ -x $build/bin/$b ]] || lab/k8s-build/build.sh --only nvidia-ctk nvidia-cdi-hook
done
for b in containerd containerd-shim-runc-v2 runc ctr crictl nvidia-ctk nvidia-cdi-hook; do
  xz -T0 -6 -c "$build/bin/$b" >"$dest/bin/$b.xz"
done
cp "$build/images/pause.tar" "$dest/images/pause.tar"

stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
(cd "$stage" && apt-get download busybox-static >/dev/null && dpkg -x busybox-static_*.deb root)
libs=()
for lib in libc.so.6 libpthread.so.0 libdl.so.2 libm.so.6 librt.so.1; do
  libs+=(--host-file "/lib/x86_64-linux-gnu/$lib")
done
python3 lab/k8s-build/mkimage.py --ref registry.gpurack.lab/gpu-probe:1 --out "$dest/images/gpu-probe.tar" \
  --file "$stage/root/bin/busybox:/bin/busybox:0755" \
  --symlink /bin/sh:busybox --symlink /bin/ls:busybox --symlink /bin/cat:busybox --symlink /bin/sleep:busybox \
  "${libs[@]}" --host-file /sbin/ldconfig --symlink /lib64/ld-linux-x86-64.so.2:/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
  --dir /tmp:1777 --env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin --cmd '["/bin/sh"]'

.venv/bin/pip download -q -d "$dest/wheels" --only-binary=:all: --python-version "$PY" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  "ansible-core==$(.venv/bin/python -c 'from ansible.release import __version__; print(__version__)')"
.venv/bin/ansible-galaxy collection build --force --output-path "$dest/collection" . >/dev/null
du -sh "$dest"
