# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""An S3-compatible object store (roles/object_store): the client (SigV4, versitygw's admin API)
and a team's tenant plan (`s3`). Stdlib and ansible.module_utils only.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.object_store.s3 import (
    Client,
    S3Error,
    describe,
    etag_matches,
    file_digests,
    seed_files,
    tenant_plan,
)

__all__ = [
    "Client",
    "S3Error",
    "describe",
    "etag_matches",
    "file_digests",
    "seed_files",
    "tenant_plan",
]
