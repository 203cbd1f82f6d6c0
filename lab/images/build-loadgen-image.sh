#!/usr/bin/env bash
# Build the load tool's image, gpurack-loadgen (workloads/loadgen: locust as a library, which the
# inference acceptance test runs as a Job against the model server and reads one JSON line from),
# as an OCI archive: lab/images/build-python-image.sh says how and where. Its entrypoint is
# `python -m gpurack_loadgen`. The last line printed is the archive's path.
#
# Usage: lab/images/build-loadgen-image.sh     (PIP_FIND_LINKS=DIR reuses downloaded wheels;
#        FORCE=1 rebuilds)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec "$ROOT/lab/images/build-python-image.sh" gpurack-loadgen "$ROOT/workloads/loadgen" gpurack_loadgen
