#!/usr/bin/env bash
# Build the acceptance test's production image, gpurack-trainer: Debian 12's python3.11 (this
# build machine's own, copied with the libraries ldd names, as the Kubernetes images are made),
# a venv with workloads/trainer/requirements.txt, and the trainer code, written as an OCI
# archive by lab/k8s-build/mkimage.py (no registry, no Docker daemon):
#   ${GPURACK_CACHE:-~/.cache/gpurack}/images/gpurack-trainer-<inputs hash>.tar
# A second run with the same inputs is a no-op. The last line printed is the archive's path.
# It runs as uid 65532, writes only to /tmp (a read-only root fs works) and its entrypoint is
# `python -m gpurack_trainer`. Ref: registry.gpurack.lab/gpurack-trainer:<version> (a name only).
#
# Usage: lab/images/build-trainer-image.sh     (Debian 12 with python3.11 and python3.11-venv;
#        PIP_FIND_LINKS=DIR reuses downloaded wheels; FORCE=1 rebuilds)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
APP=$ROOT/workloads/trainer
PY=/usr/bin/python3.11
CACHE=${GPURACK_CACHE:-$HOME/.cache/gpurack}/images
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$APP/gpurack_trainer/__init__.py")
REF=registry.gpurack.lab/gpurack-trainer:$VERSION
PREFIX=/opt/gpurack-trainer

[[ -x $PY ]] || { echo "build-trainer-image: $PY is not installed (apt-get install python3.11-venv)" >&2; exit 64; }
pyversion=$(dpkg-query -W -f '${Version}' python3.11-minimal 2>/dev/null || "$PY" -V)
hash=$({ cat "${BASH_SOURCE[0]}" "$ROOT/lab/k8s-build/mkimage.py" "$APP/requirements.txt" \
  "$APP"/gpurack_trainer/*.py; echo "$pyversion"; } | sha256sum | cut -c1-12)
out=$CACHE/gpurack-trainer-$hash.tar
if [[ -z ${FORCE:-} && -s $out ]]; then
  echo "image cached: $REF" >&2; echo "$out"; exit 0
fi
mkdir -p "$CACHE"
stage=$(mktemp -d "$CACHE/trainer-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
start=$SECONDS

# The venv is made at its final path's name under the stage; nothing in it that runs refers to
# the stage (entrypoint `python -m`, the bin/ scripts with staged shebangs are removed below).
venv=$stage/venv
"$PY" -m venv "$venv"
"$venv/bin/pip" install --quiet --no-deps --no-compile --only-binary :all: --disable-pip-version-check \
  -r "$APP/requirements.txt"
site=$venv/lib/python3.11/site-packages
t_pip=$((SECONDS - start))

# Trim what the trainer provably never uses: triton (torch.compile only; torch imports without
# it, and the smoke test trains without it), headers and static libraries (no compiler runs in
# the image), bytecode (timestamps would not match mkimage's fixed mtime), pip, and the venv's
# scripts, whose shebangs name the stage.
rm -rf "$site"/triton "$site"/triton-*.dist-info "$site"/pip "$site"/pip-*.dist-info
find "$site" -depth \( -name __pycache__ -o -name include -type d \) -exec rm -rf {} +
find "$site" -name '*.a' -delete
find "$venv/bin" -mindepth 1 ! -name 'python*' -delete
ln -sf "$PY" "$venv/bin/python3.11"; ln -sf python3.11 "$venv/bin/python3"; ln -sf python3.11 "$venv/bin/python"
printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = %s\n' \
  "$("$PY" -c 'import platform; print(platform.python_version())')" >"$venv/pyvenv.cfg"

# The trainer code, without bytecode.
mkdir -p "$stage/app/gpurack_trainer"
cp "$APP"/gpurack_trainer/*.py "$stage/app/gpurack_trainer/"

# Python's standard library, without bytecode and the parts that need a terminal or a compiler.
cp -a /usr/lib/python3.11 "$stage/stdlib"
find "$stage/stdlib" -depth \( -name __pycache__ -o -name test -o -name idlelib -o -name tkinter \
  -o -name ensurepip -o -name lib-dynload -o -name site-packages -o -name dist-packages \) -exec rm -rf {} +

# ELF files whose libraries come from the host: python, its C extension modules, and the
# libraries torch and the CUDA wheels link outside the venv (libstdc++, libgcc_s, rdma-core...).
host=("$PY" /usr/lib/python3.11/lib-dynload/*.so)
mapfile -t outside < <(find "$site" -name '*.so*' -type f -exec ldd {} + 2>/dev/null |
  awk '/=>/ && $3 ~ /^\// {print $3}' | grep -v "^$stage" | sort -u)
args=(--ref "$REF" --out "$out" --created 1970-01-01T00:00:00Z --gzip-level 1
  --tree "$venv:$PREFIX/venv" --tree "$stage/app:$PREFIX/app" --tree "$stage/stdlib:/usr/lib/python3.11"
  --user 65532:65532 --workdir /tmp
  --env PATH=$PREFIX/venv/bin:/usr/bin:/bin --env PYTHONPATH=$PREFIX/app --env HOME=/tmp
  --env PYTHONDONTWRITEBYTECODE=1 --env PYTHONUNBUFFERED=1
  --entrypoint "[\"$PREFIX/venv/bin/python\", \"-m\", \"gpurack_trainer\"]"
  --label org.opencontainers.image.version=$VERSION --label io.gpurack.inputs=$hash)
for f in "${host[@]}" "${outside[@]}"; do args+=(--host-file "$f"); done
args+=(--symlink /usr/bin/python3:python3.11)
t_mk=$SECONDS
nice python3 "$ROOT/lab/k8s-build/mkimage.py" "${args[@]}" >&2
echo "image built: $REF, $(du -m "$out" | cut -f1) MiB archive, $(du -sm "$stage" | cut -f1) MiB staged," \
  "pip ${t_pip} s, mkimage $((SECONDS - t_mk)) s, total $((SECONDS - start)) s" >&2
# Old archives of this image go: one tag, one archive.
find "$CACHE" -maxdepth 1 -name 'gpurack-trainer-*.tar' ! -name "$(basename "$out")" -delete
echo "$out"
