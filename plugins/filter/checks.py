# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Check filters: expect_errors (docs: sidecar .yml files)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect


def expect_errors(expect: Any) -> list[str]:
    """Every problem with a pool's expectations (gpurack_expect), each naming its full path; []
    when valid. The rules node_checks applies, in the controller's process: a module run per
    host cost 0.15 s each, 15 s of a 100-host preflight."""
    return validate_expect(expect)


class FilterModule:
    """gpurack.bootstrap check filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"expect_errors": expect_errors}
