# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Switch checks: the cabling plan against LLDP, each cabled port's state, MTU, speed, error
counters and RoCE settings.

Registered here like every other check, so that docs/checks.md and `gpurack checks` list them;
they judge what is read off the host (the switches over SSH, the host's lldpd), so
`run_checks` does not run them over facts (`OFF_HOST`). Their functions sit with the switch
reads, in `module_utils/switch/checks.py`, as the measured checks' sit in gpubench.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import CheckSpec, register

PLAN = "gpurack_cabling (host_vars)"

CABLING = register(
    CheckSpec(
        "switch.cabling",
        "Cabled as planned",
        "quick",
        "LLDP neighbours of every switch (and of the host, where lldpd runs) against gpurack_cabling",
        "each planned NIC seen on its planned switch port, and no NIC of the server anywhere else",
        PLAN,
        "move the cable to the planned port, or correct gpurack_cabling if the plan is wrong",
    ),
    __name__,
)

CABLING_HOST = register(
    CheckSpec(
        "switch.cabling.host",
        "Cabled as planned (host LLDP)",
        "quick",
        "the switch and port that the server's own LLDP (lldpd) shows on each planned NIC's interface",
        "the planned switch and port",
        PLAN,
        "move the cable to the planned port, or correct gpurack_cabling if the plan is wrong",
    ),
    __name__,
)

PORT_STATE = register(
    CheckSpec(
        "switch.port.state",
        "Switch port up",
        "quick",
        "the planned switch port's administrative and operational state",
        "enabled and up",
        PLAN,
        "enable the port (no shutdown); if it stays down, check the cable, the optics and the NIC",
    ),
    __name__,
)

PORT_MTU = register(
    CheckSpec(
        "switch.port.mtu",
        "Switch port MTU",
        "quick",
        "the planned switch port's MTU",
        "at least gpurack_fabric.mtu",
        "gpurack_fabric.mtu (the pool's group_vars)",
        "set the port's MTU: playbooks/fabric.yml with switch_fabric_configure=true, or config mode",
    ),
    __name__,
)

PORT_SPEED = register(
    CheckSpec(
        "switch.port.speed",
        "Switch port speed",
        "quick",
        "the planned switch port's speed",
        "at least gpurack_expect.rdma.rate_gbps",
        "gpurack_expect.rdma.rate_gbps (the pool's expectations)",
        "check the optics and the port's speed setting; a lower speed often means a damaged cable",
    ),
    __name__,
)

PORT_ERRORS = register(
    CheckSpec(
        "switch.port.errors",
        "Switch port errors",
        "quick",
        "input and output error counters of the planned switch port since they were last cleared",
        "no errors (a warning: counters are cumulative)",
        "switch counters",
        "clear the counters and watch them; rising CRC errors mean a cable or optic to replace",
    ),
    __name__,
)

PORT_ROCE = register(
    CheckSpec(
        "switch.port.roce",
        "RoCE settings",
        "quick",
        "PFC (the lossless priority) and ECN in the planned switch port's running configuration",
        "PFC on for gpurack_fabric.pfc_priority, and ECN when gpurack_fabric.ecn",
        "gpurack_fabric (the pool's group_vars)",
        "apply the port's RoCE settings: playbooks/fabric.yml with switch_fabric_configure=true",
    ),
    __name__,
)
