# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What the Kubernetes API server said, for an error message (stdlib only: no client needed)."""

from __future__ import annotations

import json
from typing import Any


def api_error_text(exc: Any) -> str:
    """HTTP status, reason and the API server's message of a kubernetes client ApiException."""
    text = f"HTTP {exc.status} {exc.reason}"
    try:
        message = json.loads(exc.body or "{}").get("message")
    except (ValueError, AttributeError):
        message = None
    return f"{text}: {message}" if message else text
