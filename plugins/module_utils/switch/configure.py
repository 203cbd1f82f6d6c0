# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The configuration round trip of a switch's cabled ports: what differs from the running
configuration (as a diff per port), and the config-mode commands that make it so.

Only the settings gpurack intends are compared and sent; a port's other settings stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.config_text import (
    after,
    config_commands,
    missing,
    section_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Block
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import Platform


@dataclass(frozen=True)
class PortChange:
    """One port whose running settings differ from the intended: its section before and after,
    and the commands that change it."""

    port: str
    before: str
    after: str
    commands: tuple[str, ...]


def port_changes(
    platform: Platform, running: Mapping[str, Sequence[Block]], intents: Sequence[PortIntent]
) -> list[PortChange]:
    """The ports whose running configuration lacks an intended setting, in the intents' order."""
    changes = []
    for intent in intents:
        intended = platform.intended(intent)
        have = tuple(running.get(intent.port, ()))
        lacking = missing(intended, have)
        if not lacking:
            continue
        changes.append(
            PortChange(
                port=intent.port,
                before=section_text(intent.port, have),
                after=section_text(intent.port, after(intended, have)),
                commands=tuple(config_commands(intent.port, lacking)),
            )
        )
    return changes


def all_commands(changes: Sequence[PortChange]) -> list[str]:
    """Every change's commands, for one config-mode session."""
    return [command for change in changes for command in change.commands]
