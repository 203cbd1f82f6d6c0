# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Count, in the controller, each host's results that may have changed it in this run.

Ansible forks a worker for each task after the results of the one before were handed to the
callbacks, so a worker reads here how many changed, failed or unreachable results each host
had until then. converge_stamp's action plugin answers a role's check from a survey of the
host only while that count is what it was when the survey was read: any task in between that
changed the host, or failed half-way, makes the next check read the host again.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: host_changes
type: aggregate
short_description: Count each host's changed, failed and unreachable results, for gpurack's action plugins
description:
  - Keeps, in the controller process, a count per host of the results that report C(changed), failed
    (ignored or not) or found the host unreachable, delegated tasks included. Worker processes forked for
    later tasks inherit it.
  - M(gpurack.bootstrap.converge_stamp)'s action plugin reuses its survey of a host only while that
    host's count is unchanged; without this callback it never reuses one.
  - It changes no result and prints nothing.
version_added: "0.6.0"
author: gpurack maintainers (@gpurack)
requirements:
  - enabled in C(callbacks_enabled) (the checkout's C(ansible.cfg) enables it)
"""

from typing import Any

from ansible.plugins.callback import CallbackBase

_COUNTS: dict[str, int] = {}
_ENABLED: list[bool] = []


def changes_on(host: str) -> int | None:
    """The host's count so far; None when the callback is not enabled in this run."""
    return _COUNTS.get(host, 0) if _ENABLED else None


class CallbackModule(CallbackBase):  # type: ignore[misc]
    """Counts per host; every other event is ignored."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpurack.bootstrap.host_changes"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _ENABLED[:] = [True]

    @staticmethod
    def _count(result: Any) -> None:
        host = result._host.get_name()
        _COUNTS[host] = _COUNTS.get(host, 0) + 1

    def v2_runner_on_ok(self, result: Any) -> None:
        if result._result.get("changed"):
            self._count(result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._count(result)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._count(result)
