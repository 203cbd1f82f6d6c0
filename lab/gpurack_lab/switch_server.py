"""The lab's switches over SSH: fakenos's SSH server in front of a FakeSwitch per switch.

fakenos (the dev extra) provides the SSH server and the command shell; the shell here keeps
the CLI's modes (exec, enable, config, interface, a nested mode) and answers from the
switch's state, so a netmiko session sees an EOS or NX-OS prompt, its show outputs and a
config mode whose changes the next show prints.

Run as `python -m gpurack_lab.switch_server SPEC.json` (what `gpurack lab up --switches N`
starts, detached); it serves until SIGTERM.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from fakenos.core.nos import Nos
from fakenos.plugins.servers.ssh_server_paramiko import ParamikoSshServer
from fakenos.plugins.shell.cmd_shell import CMDShell

from gpurack_lab.fake_switch import EOS, FakeSwitch, load_startup, save_startup, switch_from_dict

SAVED = "Copy completed successfully."
INVALID = "% Invalid input"


class SwitchShell(CMDShell):
    """One SSH session's CLI on a FakeSwitch."""

    def __init__(self, *, switch: FakeSwitch, startup: Path, fingerprint: str, **kwargs: Any) -> None:
        self.switch = switch
        self.startup = startup
        self.fingerprint = fingerprint
        self.enabled = False
        self.config = False
        self.port: str | None = None
        self.nested: str | None = None
        super().__init__(**kwargs)
        self._set_prompt()

    def _set_prompt(self) -> None:
        name = self.switch.name
        if self.nested is not None and self.port is not None:
            mode = f"(config-if-{self.port}-{self.nested.replace(' ', '-')})#"
        elif self.port is not None:
            mode = f"(config-if-{self.port})#"
        elif self.config:
            mode = "(config)#"
        else:
            mode = "#" if self.enabled else ">"
        self.prompt = f"{name}{mode}"

    def default(self, line: str) -> bool:
        command = " ".join(line.split())
        if command in ("exit", "quit") and not self.config:
            return True
        self._reply(self._answer(command))
        self._set_prompt()
        return False

    def _reply(self, text: str | None) -> None:
        if text:
            self.writeline(text)

    def _answer(self, command: str) -> str | None:
        if command.startswith(("terminal ", "term ")):
            return "Pagination disabled." if "length" in command else "Width set to 511 columns."
        if command == "enable":
            self.enabled = True
            return None
        if command == "end":
            self.config, self.port, self.nested = False, None, None
            return None
        if self.config:
            return self._config_line(command)
        if command in ("configure terminal", "configure", "conf t"):
            self.config = self.enabled = True
            return None
        if command == "copy running-config startup-config":
            save_startup(self.switch, self.startup, self.fingerprint)
            return (
                SAVED
                if self.switch.platform == EOS
                else "[########################################] 100%\nCopy complete."
            )
        output = self.switch.show(command)
        return INVALID if output is None else output

    def _config_line(self, command: str) -> str | None:
        if command == "exit":
            if self.nested is not None:
                self.nested = None
            elif self.port is not None:
                self.port = None
            else:
                self.config = False
            return None
        words = command.split()
        if words[0] == "interface" and len(words) == 2:
            port = self.switch.port_named(words[1])
            if port is None:
                return INVALID
            self.port, self.nested = port, None
            return None
        if self.port is None:
            return INVALID
        self.nested = self.switch.configure(self.port, command, self.nested)
        return None


def serve(spec: dict[str, Any], folder: Path) -> list[ParamikoSshServer]:
    """Start one SSH server per switch of `spec` on loopback; the servers, started."""
    servers = []
    fingerprint = str(spec["fingerprint"])
    for entry in spec["switches"]:
        startup = folder / f"{entry['name']}.startup.json"
        switch = load_startup(startup, fingerprint) or switch_from_dict(entry)

        def shell(switch: FakeSwitch = switch, startup: Path = startup, **kwargs: Any) -> SwitchShell:
            return SwitchShell(switch=switch, startup=startup, fingerprint=fingerprint, **kwargs)

        server = ParamikoSshServer(
            shell=shell,
            nos=Nos(name=entry["platform"], initial_prompt="{base_prompt}>"),
            nos_inventory_config={},
            port=int(entry["port"]),
            username=str(spec["username"]),
            password=str(spec["password"]),
            ssh_banner=f"{entry['name']} (gpurack lab switch)",
            shell_configuration={"base_prompt": entry["name"]},
            address="127.0.0.1",
            timeout=1,
        )
        server.start()
        servers.append(server)
    return servers


def main(argv: list[str]) -> int:
    """Serve the switches of the spec file until SIGTERM or SIGINT."""
    spec_file = Path(argv[0])
    spec = json.loads(spec_file.read_text())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    servers = serve(spec, spec_file.parent)
    print(f"serving {len(servers)} switches", flush=True)
    stop.wait()
    for server in servers:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
