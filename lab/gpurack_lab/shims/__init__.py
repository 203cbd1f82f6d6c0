"""Lab-only stand-ins for hardware tools, installed in a lab container's /usr/local/bin.

`replay.py` answers `nvidia-smi`, `ibstat`, `lspci` and `nvme` from the container's
profile through a manifest made here from CAPTURE_COMMANDS, so the shims know exactly
the commands a capture holds. Never used on real machines, never referenced from roles/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CAPTURE_COMMANDS,
    RC_NOT_FOUND,
    parse_capture_file,
)

SHIM_TOOLS: tuple[str, ...] = ("nvidia-smi", "ibstat", "lspci", "nvme")
REPLAY_SCRIPT = Path(__file__).with_name("replay.py")
# Paths inside the container.
CONTAINER_REPLAY = "/usr/local/lib/gpurack-lab/replay.py"
CONTAINER_MANIFEST = "/opt/gpurack-lab/manifest.json"
CONTAINER_BIN = "/usr/local/bin"


def build_manifest(profile: Path, container_profile: str) -> dict[str, Any]:
    """The replay table for one profile: per shimmed tool, argv -> capture file.

    Only runs that did not come back 127 are replayed, and a tool goes in `tools` only when
    it has one, so a profile without GPUs has no `nvidia-smi` at all, as on such a machine.
    """
    commands: dict[str, dict[str, str]] = {}
    present: set[str] = set()
    for command in CAPTURE_COMMANDS:
        tool = command.argv[0]
        path = profile / command.filename
        if tool not in SHIM_TOOLS or not path.is_file():
            continue
        _, output = parse_capture_file(path.read_text(encoding="utf-8"), name=str(path))
        table = commands.setdefault(tool, {})
        # A run that came back 127 was not recorded: the shim refuses it like an unknown command.
        if output.rc != RC_NOT_FOUND:
            table[" ".join(command.argv[1:])] = command.filename
            present.add(tool)
    tools = {tool: table for tool, table in commands.items() if tool in present}
    return {"profile": container_profile, "tools": tools}


def installed_tools(manifest: dict[str, Any]) -> list[str]:
    """The tools the manifest answers, in SHIM_TOOLS order."""
    return [tool for tool in SHIM_TOOLS if tool in manifest["tools"]]
