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
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -c requirements/constraints.txt -e '.[dev]'
# Make `ansible_collections.gpurack.bootstrap` importable for the driver and the tests: the
# repository root is the collection, linked from .collections (see ansible.cfg).
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/.collections" > "$site/gpurack-collection.pth"
echo "setup: $venv ready ($("$venv/bin/ansible" --version | head -1))"
