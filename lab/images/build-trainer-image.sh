#!/usr/bin/env bash
# Build the acceptance test's production image, gpurack-trainer (workloads/trainer), as an OCI
# archive: lab/images/build-python-image.sh says how and where. Its entrypoint is
# `python -m gpurack_trainer`. The last line printed is the archive's path.
#
# Usage: lab/images/build-trainer-image.sh     (PIP_FIND_LINKS=DIR reuses downloaded wheels;
#        FORCE=1 rebuilds)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec "$ROOT/lab/images/build-python-image.sh" gpurack-trainer "$ROOT/workloads/trainer" gpurack_trainer
