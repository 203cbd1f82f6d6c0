# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What gpurack wants on a switch port that a server's NIC is cabled to (PortIntent), platform-neutral."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PortIntent:
    """The settings of one cabled port: a description naming the far end, the pool's MTU and speed,
    and for a RoCE pool its lossless priority (PFC) and ECN. A platform that keeps the lossless
    class and the ECN thresholds in QoS policies (NX-OS) attaches the two policies named here."""

    port: str
    description: str
    mtu: int | None = None
    speed_gbps: int | None = None
    pfc_priority: int | None = None
    ecn: bool = False
    qos_policy: str = "gpurack-roce"
    queuing_policy: str = "gpurack-roce-ecn"
