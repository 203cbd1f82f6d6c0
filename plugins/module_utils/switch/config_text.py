# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Interface sections of an EOS or NX-OS running configuration, compared with gpurack's intended
settings for a port.

Both platforms print `interface NAME` at the margin and the port's settings indented below it,
a nested mode (EOS's `tx-queue 3`) one step deeper, ending at the next line at the margin. A
setting is a `Block`: its line, and the lines nested under it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Block, canonical_port

_INDENT = "   "


def interface_sections(running: str) -> dict[str, tuple[Block, ...]]:
    """Each interface's settings by canonical port name."""
    sections: dict[str, list[Block]] = {}
    current: list[Block] | None = None
    base = -1
    for raw in running.splitlines():
        line = raw.rstrip()
        text = line.strip()
        if not text or text == "!":
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            words = text.split()
            current = None
            if words[0] == "interface" and len(words) == 2:
                current = sections.setdefault(canonical_port(words[1]), [])
                base = -1
            continue
        if current is None:
            continue
        if base < 0 or indent <= base:
            base = indent
            current.append((text, ()))
        elif current:
            head, nested = current[-1]
            current[-1] = (head, (*nested, text))
    return {port: tuple(blocks) for port, blocks in sections.items()}


def setting_key(head: str) -> str:
    """What a setting sets, so that an intended `mtu 9214` replaces a running `mtu 1500`: the
    first word, with the words that pick one of several settings of that name."""
    words = head.split()
    if words[0] in ("priority-flow-control", "service-policy", "tx-queue") and len(words) > 1:
        return " ".join(words[:3] if words[1] in ("type", "priority") else words[:2])
    return words[0]


def missing(intended: Sequence[Block], running: Sequence[Block]) -> list[Block]:
    """The intended settings that the running section lacks or sets otherwise."""
    have = {head: set(nested) for head, nested in running}
    return [(head, nested) for head, nested in intended if head not in have or not set(nested) <= have[head]]


def after(intended: Sequence[Block], running: Sequence[Block]) -> list[Block]:
    """The section once the intended settings are applied: they replace the running settings of
    the same key, and the port's other settings stay."""
    ours = {setting_key(head) for head, _body in intended}
    return [*intended, *(block for block in running if setting_key(block[0]) not in ours)]


def section_text(port: str, blocks: Sequence[Block]) -> str:
    """The section as the switch would print it (for diffs)."""
    lines = [f"interface {port}"]
    for head, nested in blocks:
        lines.append(f"{_INDENT}{head}")
        lines.extend(f"{_INDENT * 2}{line}" for line in nested)
    return "\n".join(lines) + "\n"


def config_commands(port: str, blocks: Sequence[Block]) -> list[str]:
    """The config-mode commands that set these settings on the port (netmiko's send_config_set)."""
    commands = [f"interface {port}"]
    for head, nested in blocks:
        commands.append(head)
        if nested:
            commands.extend(nested)
            commands.append("exit")
    return commands
