#!/usr/bin/env bash
# Build the model server's image, gpurack-serving (workloads/serving: vLLM's CPU build and
# gpurack's launcher, which fetches the model through the node-local cache and execs vLLM), as an
# OCI archive: lab/images/build-python-image.sh says how and where. Its entrypoint is
# `python -m gpurack_serving`. The last line printed is the archive's path.
#
# Usage: lab/images/build-serving-image.sh     (PIP_FIND_LINKS=DIR reuses downloaded wheels;
#        FORCE=1 rebuilds)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec "$ROOT/lab/images/build-python-image.sh" gpurack-serving "$ROOT/workloads/serving" gpurack_serving
