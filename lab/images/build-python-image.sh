#!/usr/bin/env bash
# Build a Python workload's production image (the trainer's, the model server's): Debian 12's
# python3.11 (this build machine's own, copied with the libraries ldd names, as the Kubernetes
# images are made), a venv with APP/requirements.txt installed without dependency resolution
# (every package is pinned there), and the package APP/PACKAGE, written as an OCI archive by
# lab/k8s-build/mkimage.py (no registry, no Docker daemon):
#   ${GPURACK_CACHE:-~/.cache/gpurack}/images/NAME-<inputs hash>.tar
# A second run with the same inputs is a no-op. The last line printed is the archive's path.
# The image runs as uid 65532, writes only to /tmp (a read-only root fs works) and its
# entrypoint is `python -m PACKAGE`. Ref: registry.gpurack.lab/NAME:<PACKAGE.__version__>.
#
# APP/trim.txt, when there, lists what the workload provably never loads (globs under
# site-packages, one per line, # comments): removed from the image. Its figures and the run that
# proves it are in the workload's README.
# APP/mkimage-args.txt, when there, adds mkimage.py options, one option and its value a line
# (# comments): the host programs the workload runs (with the libraries ldd names), links.
#
# Usage: lab/images/build-python-image.sh NAME APP PACKAGE
#        (Debian 12 with python3.11 and python3.11-venv; PIP_FIND_LINKS=DIR reuses downloaded
#        wheels; FORCE=1 rebuilds)
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: build-python-image.sh NAME APP PACKAGE" >&2; exit 64; }
NAME=$1 APP=$(cd "$2" && pwd) PACKAGE=$3
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=/usr/bin/python3.11
CACHE=${GPURACK_CACHE:-$HOME/.cache/gpurack}/images
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$APP/$PACKAGE/__init__.py")
REF=registry.gpurack.lab/$NAME:$VERSION
PREFIX=/opt/$NAME
TRIM=$APP/trim.txt
EXTRA=$APP/mkimage-args.txt

[[ -x $PY ]] || { echo "build-python-image: $PY is not installed (apt-get install python3.11-venv)" >&2; exit 64; }
[[ -n $VERSION ]] || { echo "build-python-image: no __version__ in $APP/$PACKAGE/__init__.py" >&2; exit 64; }
pyversion=$(dpkg-query -W -f '${Version}' python3.11-minimal 2>/dev/null || "$PY" -V)
hash=$({ cat "${BASH_SOURCE[0]}" "$ROOT/lab/k8s-build/mkimage.py" "$APP/requirements.txt" \
  "$APP/$PACKAGE"/*.py; cat "$TRIM" "$EXTRA" 2>/dev/null || true; echo "$NAME $pyversion"; } | sha256sum | cut -c1-12)
out=$CACHE/$NAME-$hash.tar
if [[ -z ${FORCE:-} && -s $out ]]; then
  echo "image cached: $REF" >&2; echo "$out"; exit 0
fi
mkdir -p "$CACHE"
stage=$(mktemp -d "$CACHE/$NAME-stage.XXXXXX")
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

# Trim the workload's own list, then what no image needs: headers and static libraries (no
# compiler runs in it), bytecode (timestamps would not match mkimage's fixed mtime), pip, and the
# venv's scripts, whose shebangs name the stage.
if [[ -f $TRIM ]]; then
  while read -r pattern; do
    [[ -z $pattern || $pattern == \#* ]] && continue
    # shellcheck disable=SC2086 # the pattern is a glob, expanded here on purpose
    (cd "$site" && rm -rf -- $pattern)
  done < <(sed 's/#.*//; s/[[:space:]]*$//' "$TRIM")
fi
rm -rf "$site"/pip "$site"/pip-*.dist-info
find "$site" -depth \( -name __pycache__ -o -name include -type d \) -exec rm -rf {} +
find "$site" -name '*.a' -delete
find "$venv/bin" -mindepth 1 ! -name 'python*' -delete
ln -sf "$PY" "$venv/bin/python3.11"; ln -sf python3.11 "$venv/bin/python3"; ln -sf python3.11 "$venv/bin/python"
printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = %s\n' \
  "$("$PY" -c 'import platform; print(platform.python_version())')" >"$venv/pyvenv.cfg"

# The workload's code, without bytecode.
mkdir -p "$stage/app/$PACKAGE"
cp "$APP/$PACKAGE"/*.py "$stage/app/$PACKAGE/"

# Python's standard library, without bytecode and the parts that need a terminal or a compiler.
cp -a /usr/lib/python3.11 "$stage/stdlib"
find "$stage/stdlib" -depth \( -name __pycache__ -o -name test -o -name idlelib -o -name tkinter \
  -o -name ensurepip -o -name lib-dynload -o -name site-packages -o -name dist-packages \) -exec rm -rf {} +

# ELF files whose libraries come from the host: python, its C extension modules, and the
# libraries the wheels link outside the venv (libstdc++, libgcc_s, rdma-core...).
host=("$PY" /usr/lib/python3.11/lib-dynload/*.so)
mapfile -t outside < <(find "$site" -name '*.so*' -type f -exec ldd {} + 2>/dev/null |
  awk '/=>/ && $3 ~ /^\// {print $3}' | grep -v "^$stage" | sort -u)
args=(--ref "$REF" --out "$out" --created 1970-01-01T00:00:00Z --gzip-level 1
  --tree "$venv:$PREFIX/venv" --tree "$stage/app:$PREFIX/app" --tree "$stage/stdlib:/usr/lib/python3.11"
  --user 65532:65532 --workdir /tmp
  --env PATH=$PREFIX/venv/bin:/usr/bin:/bin --env PYTHONPATH=$PREFIX/app --env HOME=/tmp
  --env PYTHONDONTWRITEBYTECODE=1 --env PYTHONUNBUFFERED=1
  --entrypoint "[\"$PREFIX/venv/bin/python\", \"-m\", \"$PACKAGE\"]"
  --label org.opencontainers.image.version=$VERSION --label io.gpurack.inputs=$hash)
for f in "${host[@]}" "${outside[@]}"; do args+=(--host-file "$f"); done
args+=(--symlink /usr/bin/python3:python3.11)
if [[ -f $EXTRA ]]; then
  while read -r option value; do
    [[ -n $option ]] && args+=("$option" "$value")
  done < <(sed 's/#.*//; s/[[:space:]]*$//' "$EXTRA")
fi
t_mk=$SECONDS
nice python3 "$ROOT/lab/k8s-build/mkimage.py" "${args[@]}" >&2
echo "image built: $REF, $(du -m "$out" | cut -f1) MiB archive, $(du -sm "$stage" | cut -f1) MiB staged," \
  "pip ${t_pip} s, mkimage $((SECONDS - t_mk)) s, total $((SECONDS - start)) s" >&2
# Old archives of this image go: one tag, one archive.
find "$CACHE" -maxdepth 1 -name "$NAME-*.tar" ! -name "$(basename "$out")" -delete
echo "$out"
