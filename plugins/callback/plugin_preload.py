# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Load the collection's filter and action plugins once, in the controller, before any task runs.

Ansible runs each task of each host in a forked worker. A worker that templates a gpurack
filter, or runs a gpurack action, imports the collection's plugin files and their module_utils
itself (about 0.2 s of imports on the lab's controller), and the import dies with the worker, so
every such task paid it again. Imported once in the controller, before the first fork, they are
inherited by every worker (docs/performance.md has the figures).
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: plugin_preload
type: aggregate
short_description: Load gpurack's filter and action plugins once, before Ansible forks its workers
description:
  - At the start of a playbook, loads every filter and action plugin of the C(gpurack.bootstrap)
    collection (and the module_utils they import) into the controller process, so the worker
    processes Ansible forks for each task and host inherit them instead of importing them again.
  - It changes no result and prints nothing; a plugin that cannot be loaded is left to the task
    that uses it, which reports the error as it would without this callback.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
requirements:
  - enabled in C(callbacks_enabled) (the checkout's C(ansible.cfg) enables it)
"""

from pathlib import Path
from typing import Any

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import action_loader, filter_loader

COLLECTION = "gpurack.bootstrap"
PLUGINS = Path(__file__).resolve().parents[1]


def _names(folder: str, suffix: str) -> list[str]:
    """The plugin names in one of the collection's plugin folders (a filter's name is its
    sidecar documentation file's, an action's its Python file's)."""
    return sorted(p.stem for p in (PLUGINS / folder).glob(f"*{suffix}") if not p.name.startswith("_"))


class CallbackModule(CallbackBase):  # type: ignore[misc]
    """Preloads at playbook start; every other event is ignored."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpurack.bootstrap.plugin_preload"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook: Any) -> None:
        for name in _names("filter", ".yml"):
            self._load(filter_loader.get, f"{COLLECTION}.{name}")
        for name in _names("action", ".py"):
            self._load(lambda fqcn: action_loader.get(fqcn, class_only=True), f"{COLLECTION}.{name}")

    def _load(self, load: Any, fqcn: str) -> None:
        try:
            load(fqcn)
        except Exception as exc:  # the task that uses it reports the error
            self._display.vvv(f"plugin_preload: {fqcn} not preloaded: {exc}")
