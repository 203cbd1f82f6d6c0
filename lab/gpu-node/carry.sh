#!/usr/bin/env bash
# Make what runtime-stage.sh takes to a GPU machine that has no network (docs/gpu-node.md):
# .gpu-carry/stage2/ (git-excluded; the device tool carries at most 64 MiB a trip) with
#   bin/*.xz        containerd, its runc shim, runc, ctr, crictl (the lab build) and
#                   nvidia-ctk, nvidia-cdi-hook (built on request: build.sh --only ...)
#   images/*.tar    the lab's pause image, and gpu-probe: busybox and the glibc libraries that
#                   nvidia-smi needs (CDI brings the driver's own libraries, not the C library)
#   wheels/*.whl    ansible-core and what `gpurack validate` needs (rich, SQLAlchemy, Alembic)
#                   for the GPU machine's Python (PY=3.12)
#   collection/     this collection's tarball
# and, for node-stage.sh, three more trips: .gpu-carry/stage3a/ (kube-apiserver,
# kube-controller-manager, etcd) and .gpu-carry/stage3b/ (kubelet, kube-scheduler, the CNI
# bridge plugins, NVIDIA's device plugin and GFD, the one-node PKI of pki.py, and the
# host-python image: busybox, an empty /usr for the host's, and /bin and /lib64 of its own) and
# .gpu-carry/stage3c/ (the Python client of Kubernetes, for the validation role there).
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
  "ansible-core==$(.venv/bin/python -c 'from ansible.release import __version__; print(__version__)')" \
  rich sqlalchemy alembic
.venv/bin/pip wheel -q --no-deps -w "$dest/wheels" .  # the driver, installed there as on a node
.venv/bin/ansible-galaxy collection build --force --output-path "$dest/collection" . >/dev/null
du -sh "$dest"

# Stage 3: the one-node cluster, in two trips under 64 MiB each.
for part in stage3a stage3b stage3c; do rm -rf ".gpu-carry/$part" && mkdir -p ".gpu-carry/$part/bin"; done
for b in kube-apiserver kube-controller-manager etcd; do
  xz -T0 -9 -c "$build/bin/$b" >".gpu-carry/stage3a/bin/$b.xz"
done
lab/k8s-build/build.sh --only nvidia-device-plugin gpu-feature-discovery >/dev/null
for b in kubelet kube-scheduler bridge host-local loopback nvidia-device-plugin gpu-feature-discovery; do
  xz -T0 -9 -c "$build/bin/$b" >".gpu-carry/stage3b/bin/$b.xz"
done
.venv/bin/python lab/gpu-node/pki.py .gpu-carry/stage3b/pki h200-node
mkdir -p .gpu-carry/stage3b/images "$stage/etc"
printf 'root:x:0:0:root:/tmp:/bin/sh\n' >"$stage/etc/passwd"; printf 'root:x:0:\n' >"$stage/etc/group"
python3 lab/k8s-build/mkimage.py --ref registry.gpurack.lab/host-python:1 --out .gpu-carry/stage3b/images/host-python.tar \
  --file "$stage/root/bin/busybox:/bin/busybox:0755" --symlink /bin/sh:busybox --symlink /bin/ls:busybox \
  --file "$stage/etc/passwd:/etc/passwd:0644" --file "$stage/etc/group:/etc/group:0644" \
  --symlink /lib:usr/lib --dir /lib64:0755 \
  --symlink /lib64/ld-linux-x86-64.so.2:/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
  --dir /usr:0755 --dir /work:0755 --dir /opt/gpurack-ansible:0755 --dir /tmp:1777 \
  --env PATH=/bin:/usr/bin:/usr/local/bin --cmd '["/bin/sh"]'
# stage3c: the Python client of Kubernetes and what it needs beyond stage2's wheels.
mkdir -p .gpu-carry/stage3c/wheels "$stage/kw"
.venv/bin/pip download -q -d "$stage/kw" --only-binary=:all: --python-version "$PY" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  "kubernetes==$(.venv/bin/python -c 'import kubernetes; print(kubernetes.__version__)')"
for w in "$stage"/kw/*.whl; do [[ -e $dest/wheels/$(basename "$w") ]] || cp "$w" .gpu-carry/stage3c/wheels/; done
du -sh .gpu-carry/stage3a .gpu-carry/stage3b .gpu-carry/stage3c
