"""The switch command outputs of tests/fixtures/switch, by platform and command, and their views."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import SwitchView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import platform_for
from conftest import REPO

OUTPUTS = REPO / "tests" / "fixtures" / "switch"


def outputs(platform: str) -> dict[str, str]:
    """Each of the platform's commands' output, from the file named after the command."""
    return {
        command: (OUTPUTS / platform / f"{command.replace(' ', '_')}.txt").read_text()
        for command in platform_for(platform).commands
    }


def view(platform: str, name: str) -> SwitchView:
    """The switch `name` as the platform's parser reads the outputs."""
    return platform_for(platform).parse(name, outputs(platform))
