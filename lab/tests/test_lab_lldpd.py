"""LLDP names as real servers send them: Debian's lldpd in two lab containers on veth pairs.

A "server" container (host name gpu01, FQDN gpu01.rack1.example) runs lldpd with its defaults
and a Linux "switch" container (as SONiC or Cumulus switches do) runs lldpd too and reports its
neighbours with `lldpcli -f json0 show neighbors`. lldpd sends the FQDN as the system name and
each interface's MAC address as the port ID (docs/fabric.md); gpurack matches those to the
inventory name and the NIC facts' MACs, so a correctly cabled server passes, a swapped cable
fails, and the verdicts equal those of servers configured to send their short names.

Needs root, Docker and the lab's node image (gpurack-node:bookworm, which Molecule and
`gpurack lab up` build); lldpd is added to it once, into an image tagged by the base image's id.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.checks import check_fabric
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.fabric import plan_from_vars
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.host_lldp import parse_neighbors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Neighbor, SwitchView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import FabricExpect

BASE_IMAGE = "gpurack-node:bookworm"
# One rack per test process (pytest-xdist runs tests in several): names carry the pid.
PREFIX = f"gpurack-lldp-{os.getpid()}"
# (server interface, switch port): two cables.
CABLES = (("ens1f0np0", "Ethernet1"), ("ens1f1np1", "Ethernet2"))
WAIT_S = 20.0


def _docker(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *argv], capture_output=True, text=True, check=check, timeout=120)


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (veth pairs moved into containers' network namespaces)"
    if shutil.which("docker") is None or shutil.which("ip") is None or shutil.which("nsenter") is None:
        return "needs docker, ip and nsenter"
    if _docker("info", check=False).returncode != 0:
        return "the Docker engine is not running (make molecule or gpurack lab up starts it)"
    if _docker("image", "inspect", BASE_IMAGE, check=False).returncode != 0:
        return f"the lab's node image {BASE_IMAGE} is not built (make molecule-default or lab up builds it)"
    return None


def _lldpd_image() -> str:
    """The node image with Debian's lldpd, built once per base image (apt inside a container)."""
    base = _docker("image", "inspect", "--format", "{{.Id}}", BASE_IMAGE).stdout.strip()
    tag = f"gpurack-lldpd:{base.removeprefix('sha256:')[:12]}"
    if _docker("image", "inspect", tag, check=False).returncode == 0:
        return tag
    builder = f"{PREFIX}-build"
    _docker("rm", "-f", builder, check=False)
    install = (
        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive"
        " apt-get install -y -qq --no-install-recommends lldpd"
    )
    done = _docker(
        "run", "--name", builder, "--entrypoint", "/bin/bash", BASE_IMAGE, "-c", install, check=False
    )
    if done.returncode != 0:
        _docker("rm", "-f", builder, check=False)
        pytest.skip(f"could not install Debian's lldpd in {BASE_IMAGE}: {done.stderr.strip()[-200:]}")
    _docker("commit", builder, tag)
    _docker("rm", "-f", builder)
    return tag


@dataclass
class Rack:
    """A server and a switch container joined by two veth pairs, lldpd running on both."""

    server: str
    switch: str

    def sh(self, container: str, script: str) -> str:
        return _docker("exec", container, "bash", "-c", script).stdout

    def neighbors(self, count: int) -> str:
        """The switch's `lldpcli -f json0 show neighbors` once it shows `count` neighbours."""
        deadline = time.monotonic() + WAIT_S
        while True:
            text = self.sh(self.switch, "lldpcli -f json0 show neighbors")
            if len(parse_neighbors(text)) >= count or time.monotonic() > deadline:
                return text
            time.sleep(0.5)

    def macs(self) -> dict[str, Any]:
        """The server's NIC facts as gpurack's nic facts give them (sysfs addresses)."""
        net = [
            {"name": nic, "address": self.sh(self.server, f"cat /sys/class/net/{nic}/address").strip()}
            for nic, _ in CABLES
        ]
        return {"available": True, "net": net}

    def restart_lldpd(self, container: str, *config: str) -> None:
        """lldpd again with `config` lines (lldpcli's `configure ...`) and a 1 s transmit interval."""
        lines = "\n".join(["configure lldp tx-interval 1", *config])
        self.sh(container, f"pkill -x lldpd; sleep 0.3; printf '%s\\n' '{lines}' > /etc/lldpd.conf; lldpd")


def _pid(container: str) -> str:
    return _docker("inspect", "--format", "{{.State.Pid}}", container).stdout.strip()


@pytest.fixture
def rack() -> Iterator[Rack]:
    if why := _unavailable():
        pytest.skip(why)
    image = _lldpd_image()
    server, switch = f"{PREFIX}-gpu01", f"{PREFIX}-leaf1"
    for name, host in ((server, "gpu01"), (switch, "leaf1")):
        _docker("rm", "-f", name, check=False)
        caps = ("--cap-add", "NET_ADMIN", "--cap-add", "NET_RAW")
        _docker("run", "-d", "--name", name, "--hostname", host, "--network", "none", *caps,
                "--entrypoint", "sleep", image, "infinity")  # fmt: skip
    found = Rack(server, switch)
    try:
        # The server's FQDN, as a resolver would give it (lldpd sends the FQDN by default).
        found.sh(server, "echo '127.0.1.1 gpu01.rack1.example gpu01' >> /etc/hosts")
        for index, (nic, port) in enumerate(CABLES):
            left, right = f"gl{os.getpid() % 10**6}{index}a", f"gl{os.getpid() % 10**6}{index}b"
            subprocess.run(["ip", "link", "add", left, "type", "veth", "peer", "name", right], check=True)
            subprocess.run(["ip", "link", "set", left, "netns", _pid(server)], check=True)
            subprocess.run(["ip", "link", "set", right, "netns", _pid(switch)], check=True)
            for pid, old, new in ((_pid(server), left, nic), (_pid(switch), right, port)):
                subprocess.run(
                    ["nsenter", "-t", pid, "-n", "ip", "link", "set", old, "name", new], check=True
                )
                subprocess.run(["nsenter", "-t", pid, "-n", "ip", "link", "set", new, "up"], check=True)
        found.restart_lldpd(switch)
        found.restart_lldpd(server)
        yield found
    finally:
        _docker("rm", "-f", server, switch, check=False)


def _switch_view(text: str) -> SwitchView:
    """A Linux switch's view from its lldpcli neighbours: its port, the far system and port ID."""
    neighbors = tuple(Neighbor(n.interface, n.system, n.port) for n in parse_neighbors(text))
    return SwitchView(name="leaf1", platform="linux-lldpd", neighbors=neighbors)


def _cabling_verdicts(view: SwitchView, cabling: dict[str, Any], extra: dict[str, Any]) -> dict[str, Verdict]:
    plan = plan_from_vars({"gpu01": {"gpurack_cabling": cabling, **extra}}, ["leaf1"])
    results = check_fabric(plan.links, {"leaf1": view}, lambda _: FabricExpect())["gpu01"]
    return {r.component: r.verdict for r in results if r.id == "switch.cabling"}


PLAN = {nic: {"switch": "leaf1", "port": port} for nic, port in CABLES}
SWAPPED = {
    CABLES[0][0]: {"switch": "leaf1", "port": CABLES[1][1]},
    CABLES[1][0]: {"switch": "leaf1", "port": CABLES[0][1]},
}


def test_lldpd_defaults_send_the_fqdn_and_the_mac_and_gpurack_matches_them(rack: Rack) -> None:
    text = rack.neighbors(len(CABLES))
    sent = {(n.interface, n.system, n.port) for n in parse_neighbors(text)}
    facts = rack.macs()
    macs = {n["name"]: n["address"] for n in facts["net"]}
    # What lldpd really sends with its defaults: the FQDN, and each interface's MAC as port ID.
    assert sent == {(port, "gpu01.rack1.example", macs[nic]) for nic, port in CABLES}
    view = _switch_view(text)
    assert _cabling_verdicts(view, PLAN, {"gpurack_nic": facts}) == dict.fromkeys(macs, Verdict.PASS)
    assert _cabling_verdicts(view, SWAPPED, {"gpurack_nic": facts}) == dict.fromkeys(macs, Verdict.FAIL)
    # Without the NIC facts the plan cannot know the MACs: not a pass, and a declared MAC does.
    assert set(_cabling_verdicts(view, PLAN, {}).values()) == {Verdict.FAIL}
    declared = {nic: {**link, "mac": macs[nic].upper().replace(":", "-")} for nic, link in PLAN.items()}
    assert _cabling_verdicts(view, declared, {}) == dict.fromkeys(macs, Verdict.PASS)
    _assert_the_same_verdicts_as_servers_that_send_their_short_names(rack, view, facts)


def _assert_the_same_verdicts_as_servers_that_send_their_short_names(
    rack: Rack, defaults: SwitchView, facts: dict[str, Any]
) -> None:
    by_default = [_cabling_verdicts(defaults, plan, {"gpurack_nic": facts}) for plan in (PLAN, SWAPPED)]
    # The one configuration that makes lldpd send what a plan names without facts.
    rack.restart_lldpd(rack.server, "configure system hostname .", "configure lldp portidsubtype ifname")
    deadline = time.monotonic() + WAIT_S
    while True:
        short = _switch_view(rack.neighbors(len(CABLES)))
        if {n.system for n in short.neighbors} == {"gpu01"} or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert {(n.system, n.remote_port) for n in short.neighbors} == {("gpu01", nic) for nic, _ in CABLES}
    by_name = [_cabling_verdicts(short, plan, {}) for plan in (PLAN, SWAPPED)]
    assert by_default == by_name
