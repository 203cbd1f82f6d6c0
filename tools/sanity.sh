#!/usr/bin/env bash
# `make sanity`: ansible-test sanity on what the collection ships, offline, on this Python.
#
# ansible-test must run from a folder named ansible_collections/<namespace>/<name>, and it
# should see exactly what users install: so the collection tarball (galaxy.yml's build_ignore
# decides what it holds) is built and unpacked into a temporary folder of that shape, with
# tests/sanity/ (the ignore file) beside it. Each sanity test runs in a venv of its own that
# ansible-test creates and fills from PyPI at its own pinned versions. Only its pip bootstrap
# comes from elsewhere (a download site this machine cannot reach), so pip's own wheel is
# fetched from PyPI once and a small stand-in for that bootstrap script installs it.
# docs/development.md lists every ignore with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$PWD
bin=$checkout/.venv/bin
python_version=${SANITY_PYTHON:-3.11}

# ansible-test pins the pip it bootstraps into each venv; read the version from ansible-test itself.
pip_version=$("$bin/python" - <<'EOF'
import inspect
from ansible_test._internal import python_requirements as pr
src = inspect.getsource(pr.get_venv_packages)
print(src.split("pip='", 1)[1].split("'", 1)[0])
EOF
)
wheels=${XDG_CACHE_HOME:-$HOME/.cache}/gpurack/sanity
bootstrap=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
if ! ls "$wheels"/pip-"$pip_version"-*.whl >/dev/null 2>&1; then
  "$bin/pip" download --quiet --no-deps --dest "$wheels" "pip==$pip_version"
fi
mkdir -p "$(dirname "$bootstrap")"
cat >"$bootstrap" <<EOF
"""Stand-in for get-pip.py (written by gpurack's tools/sanity.sh): pip $pip_version from its PyPI wheel."""
import glob, runpy, sys

wheel = glob.glob("$wheels/pip-$pip_version-*.whl")[0]
sys.path.insert(0, wheel)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.argv = ["pip", "install", "--no-index", "--find-links", "$wheels", *args]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
EOF

tmp=$(mktemp -d /tmp/gpurack-sanity.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/ansible_collections/gpurack/bootstrap
mkdir -p "$root/tests"
"$bin/ansible-galaxy" collection build --output-path "$tmp" . >/dev/null
tar -xzf "$tmp"/gpurack-bootstrap-*.tar.gz -C "$root"
cp -r tests/sanity "$root/tests/"
cd "$root"
"$bin/ansible-test" sanity --python "$python_version" --color no "$@"
