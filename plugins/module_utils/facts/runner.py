# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The one piece of AnsibleModule glue every facts module shares: a `Runner` over run_command.

Facts modules build their source with
`open_source(module.params["root"], make_runner(module))`; the gatherers then never see
AnsibleModule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CommandOutput,
    not_found,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    Runner,
    Source,
    source_warnings,
)

# Tool output is parsed, so it must not be translated.
_C_LOCALE = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


class CommandModule(Protocol):
    """The part of AnsibleModule that `make_runner` uses."""

    def get_bin_path(self, arg: str, required: bool = ..., opt_dirs: Any = ...) -> str | None: ...

    def run_command(self, args: Any, **kwargs: Any) -> tuple[int, str, str]: ...


class WarningModule(Protocol):
    """The part of AnsibleModule that `warn_about` uses."""

    def warn(self, warning: str) -> None: ...


def make_runner(module: CommandModule) -> Runner:
    """A Runner that runs argv through `module.run_command` (a list, never a shell string).

    A tool that `module.get_bin_path` cannot find gives rc 127, as a shell would, so a
    missing tool reaches the gatherers as a fact, not as an exception.
    """

    def run(argv: Sequence[str]) -> CommandOutput:
        path = module.get_bin_path(argv[0])
        if path is None:
            return not_found(argv[0])
        rc, out, err = module.run_command([path, *argv[1:]], environ_update=_C_LOCALE)
        return CommandOutput(rc=rc, stdout=out, stderr=err)

    return run


def warn_about(module: WarningModule, source: Source) -> None:
    """Pass what reading a capture warned about (undecodable files) on as Ansible warnings."""
    for warning in source_warnings(source):
        module.warn(warning)
