#!/usr/bin/env bash
# The product without a checkout (`make install-check`): build the driver's wheel and the
# collection tarball, install both into a fresh venv and collections path in a temporary
# folder outside the checkout, then from there run
#   gpurack facts --from-capture <../shared/fixtures/hw/h200x1>
#   ansible-playbook gpurack.bootstrap.preflight --syntax-check
# Fails on any error. Packages come from PyPI at requirements/constraints.txt's versions, through
# uv (from the dev venv) and its cache: pip spends minutes unpacking the `ansible` package's
# files, uv links them from its cache in seconds. The collection's dependencies are the ones
# the `ansible` package bundles (no Galaxy).
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$PWD
python=${PYTHON:-python3.11}
capture=$(cd "$checkout/.." && pwd)/shared/fixtures/hw/h200x1
[[ -d $capture ]] || { echo "check-install: no capture at $capture (check out ../shared)" >&2; exit 64; }

tmp=$(mktemp -d /tmp/gpurack-install-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
step() { echo "check-install [$((SECONDS - start)) s] $*"; }

step "building the wheel and the collection tarball"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$tmp/dist" . >/dev/null
rm -rf build tools/*.egg-info   # what setuptools leaves in the checkout
ANSIBLE_CONFIG=$checkout/ansible.cfg ansible-galaxy collection build --output-path "$tmp/dist" . >/dev/null
wheel=$(ls "$tmp"/dist/gpurack-*.whl)
tarball=$(ls "$tmp"/dist/gpurack-bootstrap-*.tar.gz)

step "installing $(basename "$wheel") into a fresh venv"
uv=${UV:-$checkout/.venv/bin/uv}
"$uv" venv --quiet --python "$python" "$tmp/venv"
"$uv" pip install --quiet --python "$tmp/venv/bin/python" -c requirements/constraints.txt "$wheel"

# From here on nothing may come from the checkout: a clean environment and another folder.
mkdir "$tmp/work"
cd "$tmp/work"
run() {
  env -i HOME="$HOME" PATH="$tmp/venv/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 \
    ANSIBLE_COLLECTIONS_PATH="$tmp/collections" ANSIBLE_LOCAL_TEMP="$tmp/ansible-tmp" \
    GPURACK_STATE_DIR="$tmp/state" GPURACK_DB="sqlite:///$tmp/state/inventory.db" "$@"
}

step "ansible-galaxy collection install $(basename "$tarball")"
run ansible-galaxy collection install --no-deps -p "$tmp/collections" "$tarball" >/dev/null

step "the driver and the collection come from the install"
run python - "$checkout" <<'EOF'
import sys
from pathlib import Path

import gpurack
import ansible_collections.gpurack.bootstrap.plugins.module_utils as utils

checkout = Path(sys.argv[1]).resolve()
for what, where in (("gpurack", gpurack.__file__), ("module_utils", list(utils.__path__)[0])):
    path = Path(where).resolve()
    print(f"  {what}: {path}")
    if path.is_relative_to(checkout):
        sys.exit(f"check-install: {what} was imported from the checkout")
EOF

step "gpurack facts --from-capture $capture"
run gpurack facts --from-capture "$capture" >"$tmp/facts.out"
grep -q 'H200' "$tmp/facts.out" || { cat "$tmp/facts.out"; echo "check-install: no H200 in the facts" >&2; exit 1; }

step "ansible-playbook gpurack.bootstrap.preflight --syntax-check"
run ansible-playbook -i localhost, gpurack.bootstrap.preflight --syntax-check

step "ok: wheel and tarball work outside the checkout"
