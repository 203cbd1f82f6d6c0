"""What a running lab is made of, kept as lab.json in the lab state dir for status and down."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpurack.errors import NotAssessedError
from gpurack.project import state_dir

from gpurack_lab.disks import Disk

NETWORK = "lab-net"
SUBNET = "172.30.42.0/24"
GATEWAY = "172.30.42.1"
# A light lab has a network of its own, so that it runs beside a rack (the lab cluster of
# `make test`, in another state dir): `make bench-scale-smoke` does.
LIGHT_NETWORK = "lab-light-net"
LIGHT_SUBNET = "172.30.43.0/24"
LIGHT_GATEWAY = "172.30.43.1"
CONTROL_PLANE = "lab-cp1"
MEMORY = "4g"  # 1 control plane + 4 workers fit the 24 GiB build machines (a limit, not a reservation)
# The inference pool's node runs two model servers at once during a rollout or a scale-up (each
# about 0.8 GiB of RSS, and the page cache of the libraries they map): in 4 GiB they thrash.
MEMORY_BY_PROFILE = {"h200x1": "6g"}
MAX_WORKERS = 16
# Light hosts (`lab up --light N`): sshd only, no systemd, a capture replayed; enough for facts,
# capture, preflight and validate at fleet size, not for prepare. Addresses .11 to .210.
MAX_LIGHT = 200
LIGHT_MEMORY = "160m"


def lab_dir() -> Path:
    """The lab's state folder: keys, disk files, assembled profiles, lab.json."""
    return state_dir() / "lab"


def network(light: bool) -> tuple[str, str, str]:
    """The network a lab runs on: (name, subnet, gateway), a light lab's or a rack's."""
    return (LIGHT_NETWORK, LIGHT_SUBNET, LIGHT_GATEWAY) if light else (NETWORK, SUBNET, GATEWAY)


def host_ip(index: int, gateway: str = GATEWAY) -> str:
    """Fixed addresses on the gateway's /24: .10 for the control plane (index 0), .11.. for workers."""
    return f"{gateway.rsplit('.', 1)[0]}.{10 + index}"


def worker_name(number: int) -> str:
    """lab-w1, lab-w2, ..."""
    return f"lab-w{number}"


def light_name(number: int) -> str:
    """lab-l1, lab-l2, ..."""
    return f"lab-l{number}"


@dataclass(frozen=True, slots=True)
class LabHost:
    """One lab container: its role, address, profile (and its pool group), faults and disks."""

    name: str
    role: Literal["control_plane", "worker", "light"]
    ip: str
    profile: str
    group: str
    faults: tuple[str, ...] = ()
    disks: tuple[Disk, ...] = ()


@dataclass(frozen=True, slots=True)
class LabState:
    """The whole lab: image, network, key and hosts."""

    image: str
    network: str
    subnet: str
    key: str
    hosts: tuple[LabHost, ...] = field(default_factory=tuple)
    # Kubernetes from the offline build was installed (`lab up --kubernetes`).
    kubernetes: bool = False
    # Fake top-of-rack switches on loopback (`lab up --switches N`), and their faults.
    switches: int = 0
    switch_faults: tuple[str, ...] = ()

    @property
    def light(self) -> bool:
        """A light lab (`lab up --light N`): on its own network, its inventory in its state folder."""
        return self.network == LIGHT_NETWORK

    @property
    def workers(self) -> tuple[LabHost, ...]:
        return tuple(h for h in self.hosts if h.role == "worker")

    @property
    def gpu_nodes(self) -> tuple[LabHost, ...]:
        """The hosts in the inventory's gpu_nodes: the workers, or a light lab's hosts."""
        return tuple(h for h in self.hosts if h.role in ("worker", "light"))

    def host(self, name: str) -> LabHost | None:
        """The host of that name, None when the lab has none."""
        return next((h for h in self.hosts if h.name == name), None)


def save(state: LabState, path: Path) -> None:
    """Write lab.json."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(state), indent=2) + "\n")


def load(path: Path) -> LabState | None:
    """Read lab.json; None when there is no lab.

    Raises:
        NotAssessedError: the file is unreadable.
    """
    if not path.is_file():
        return None
    try:
        raw: dict[str, Any] = json.loads(path.read_text())
        hosts = tuple(
            LabHost(**{**h, "faults": tuple(h["faults"]), "disks": tuple(Disk(**d) for d in h["disks"])})
            for h in raw.pop("hosts")
        )
        raw["switch_faults"] = tuple(raw.get("switch_faults", ()))
        return LabState(**raw, hosts=hosts)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise NotAssessedError(
            f"lab state {path} is unreadable ({exc}); remove it after 'docker ps'"
        ) from exc
