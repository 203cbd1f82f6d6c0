"""Start a lab host's container and provision it: the key, the (faulted) profile and its shims,
a worker's stand-in driver, then wait for SSH."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gpurack_lab import disks, docker, driver, faults, profiles, ssh
from gpurack_lab.state import LIGHT_MEMORY, MEMORY, MEMORY_BY_PROFILE, LabHost, LabState

# Each host's provisioning is a few `docker exec`s and waits: eight at once bring a light lab of
# 100 hosts up in about 100 s on 2 cores.
PROVISION_THREADS = 8


def run_host(state: LabState, host: LabHost, root: Path) -> LabHost:
    """Start one host's container (a worker's with its loop disks); the host as started."""
    if host.role == "light":
        docker.run_light_container(
            host.name, state.image, network=state.network, ip=host.ip, memory=LIGHT_MEMORY, owner=root
        )
        return host
    attached: tuple[disks.Disk, ...] = ()
    if host.role == "worker":
        attached = tuple(disks.create(root / "hosts" / host.name / "disks"))
    docker.run_container(
        host.name,
        state.image,
        network=state.network,
        ip=host.ip,
        memory=MEMORY_BY_PROFILE.get(host.profile, MEMORY),
        owner=root,
        devices=[(d.loop, d.device) for d in attached],
    )
    return LabHost(host.name, host.role, host.ip, host.profile, host.group, host.faults, attached)


def provision_all(
    planned: Sequence[tuple[LabHost, profiles.Profile, tuple[faults.Fault, ...]]],
    hosts: Sequence[LabHost],
    key: Path,
    root: Path,
    step: Callable[[str], None],
) -> None:
    """Provision the started hosts, several at once, and wait until each accepts SSH.

    Raises:
        LabError, DockerError: a host could not be provisioned or reached.
    """
    repo = driver.ensure_repo(root / "nvidia-repo") if any(h.role == "worker" for h in hosts) else None

    def one(pair: tuple[tuple[LabHost, profiles.Profile, tuple[faults.Fault, ...]], LabHost]) -> LabHost:
        (_, profile, own_faults), host = pair
        local = ssh.provision(host, profile, own_faults, key, root)
        if repo is not None and host.role == "worker":
            driver.install(host.name, repo, local)
        ssh.wait_ssh(host, key)
        return host

    with ThreadPoolExecutor(max_workers=PROVISION_THREADS) as pool:
        for host in pool.map(one, zip(planned, hosts, strict=True)):
            step(f"profile {host.profile} on {host.name}, SSH")
