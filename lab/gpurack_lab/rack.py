"""Bring the lab rack up and down: engine, image, network, containers, disks, profiles, inventory."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from gpurack.errors import NotAssessedError, UsageError

from gpurack_lab import (
    disks,
    docker,
    fabric_plan,
    faults,
    inventory_writer,
    lab_kubernetes,
    ownership,
    profiles,
    provision,
    ssh,
    switches,
)
from gpurack_lab.paths import inventory_dir, node_image_script
from gpurack_lab.state import (
    CONTROL_PLANE,
    MAX_LIGHT,
    MAX_WORKERS,
    LabHost,
    LabState,
    host_ip,
    lab_dir,
    light_name,
    load,
    network,
    save,
    worker_name,
)

Step = Callable[[str], None]
Planned = tuple[LabHost, profiles.Profile, tuple[faults.Fault, ...]]
CONTROL_PLANE_PROFILE = "cpu-only"


@dataclass(frozen=True, slots=True)
class UpResult:
    """What `lab up` did: the lab, whether it was already up, and where the time went."""

    state: LabState
    already_up: bool
    engine: str = "running"
    image_cached: bool = True
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class HostStatus:
    """One lab host as recorded and as Docker sees it now."""

    host: LabHost
    state: str  # running | exited | missing


@dataclass(frozen=True, slots=True)
class DownResult:
    """What `lab down` removed."""

    containers: tuple[str, ...]
    network: str | None  # the network removed
    loops: tuple[str, ...]
    images: tuple[str, ...]
    switches: bool = False


def state_file() -> Path:
    """lab.json in the lab state folder."""
    return lab_dir() / "lab.json"


def hosts_file(light: bool = False) -> Path:
    """The generated inventory: a rack's lab/inventory/hosts.yml; a light lab's in its state
    folder (lab/inventory's group_vars linked there), so that it runs beside a rack."""
    return (lab_dir() / "inventory" if light else inventory_dir()) / "hosts.yml"


def build_script() -> Path:
    """lab/images/build-node-image.sh in the checkout."""
    return node_image_script()


def plan(
    workers: int, profile_specs: Sequence[str], fault_specs: Sequence[str], *, light: int = 0
) -> list[tuple[LabHost, profiles.Profile, tuple[faults.Fault, ...]]]:
    """The hosts a `lab up` would create, checked before anything starts: a control plane and
    `workers`, or with `light` a light lab of that many sshd-only hosts and nothing else.

    Raises:
        UsageError: bad worker count, profile or fault, or a fault on a host the lab lacks.
    """
    if light and not 1 <= light <= MAX_LIGHT:
        raise UsageError(f"--light must be between 1 and {MAX_LIGHT}, got {light}")
    if not light and not 1 <= workers <= MAX_WORKERS:
        raise UsageError(f"--workers must be between 1 and {MAX_WORKERS}, got {workers}")
    count, name_of = (light, light_name) if light else (workers, worker_name)
    assigned = profiles.assign(list(profile_specs), count)
    parsed = [faults.parse_fault(s) for s in fault_specs]
    names = {name_of(i + 1) for i in range(count)}
    for fault in parsed:
        if fault.host not in names:
            raise UsageError(f"fault {fault}: no host {fault.host} (hosts: {', '.join(sorted(names))})")
    role: Literal["worker", "light"] = "light" if light else "worker"
    gateway = network(bool(light))[2]
    hosts: list[Planned] = []
    if not light:
        cp_profile = profiles.resolve(CONTROL_PLANE_PROFILE)
        cp_host = LabHost(CONTROL_PLANE, "control_plane", host_ip(0), cp_profile.name, cp_profile.group)
        hosts.append((cp_host, cp_profile, ()))
    for i, profile in enumerate(assigned):
        name = name_of(i + 1)
        own = tuple(f for f in parsed if f.host == name)
        if own:
            _try_faults(profile, own)
        ip = host_ip(i + 1, gateway)
        host = LabHost(name, role, ip, profile.name, profile.group, tuple(str(f) for f in own))
        hosts.append((host, profile, own))
    return hosts


def _try_faults(profile: profiles.Profile, own: tuple[faults.Fault, ...]) -> None:
    """Apply faults to a scratch copy of the profile, so one that does not apply stops `up` early.

    Raises:
        FaultError: the profile lacks what the fault breaks.
    """
    with tempfile.TemporaryDirectory(prefix="gpurack-lab-") as scratch:
        copy = profiles.assemble(
            profile, Path(scratch) / "p", "ID=debian\n", "Linux lab 6.1.0 #1 SMP x86_64\n"
        )
        for fault in own:
            faults.apply(fault, copy)


def up(
    workers: int,
    profile_specs: Sequence[str],
    fault_specs: Sequence[str],
    step: Step,
    *,
    kubernetes: bool = False,
    switch_count: int | None = None,
    switch_fault_specs: Sequence[str] = (),
    light: int = 0,
) -> UpResult:
    """Start the lab, grow a running one by the workers it lacks, or report it unchanged.

    With `kubernetes` (or on a lab that has it) the offline Kubernetes build is installed on
    every node after the containers are up. With `switch_count`, that many fake switches (0:
    none) serve the cabling plan on loopback with `switch_fault_specs` planted; a running lab's
    switches may change (they restart). With `light`, `plan`'s light lab (sshd-only hosts).

    Raises:
        UsageError: bad arguments, a half-built lab in the way, or a change a running lab cannot take.
        LabError, DockerError, DiskError: a step failed; containers started by this call are removed.
    """
    started = time.monotonic()
    if light and (kubernetes or switch_count):
        raise UsageError("--light hosts run sshd only: they take no --kubernetes and no --switches")
    planned = plan(workers, profile_specs, fault_specs, light=light)
    wanted = _switch_plan(planned, switch_count, switch_fault_specs)
    existing = load(state_file())
    if existing is not None:
        return _update(existing, planned, step, kubernetes=kubernetes, started=started, wanted=wanted)
    if kubernetes:
        lab_kubernetes.require_build()
    engine, image, cached = _engine_and_image(step, network(bool(light))[0])
    root = lab_dir()
    root.mkdir(parents=True, exist_ok=True)
    step("SSH key")
    key = ssh.keypair(root)
    try:
        state = _create_network(bool(light), LabState(image, "", "", str(key), (), kubernetes), step)
        state = _start(state, planned, step)
    except BaseException:
        teardown(purge=False)
        raise
    if kubernetes:
        lab_kubernetes.install(step)
    if wanted is not None:
        state = _set_switches(state, wanted, step)
    return UpResult(state, False, engine, cached, time.monotonic() - started)


def _engine_and_image(step: Step, network_name: str) -> tuple[str, str, bool]:
    """The Docker engine's name, the node image and whether it was cached; refuses containers in
    the way: this state folder's without its lab.json, abandoned ones, and any on the network."""
    step("Docker engine")
    engine = docker.ensure_engine()
    leftovers = ownership.in_the_way(docker.lab_containers(), lab_dir(), network_name)
    if leftovers:
        names = ", ".join(leftovers)
        raise UsageError(f"lab containers in the way: {names}; run 'gpurack lab down' in their state dir")
    step("node image")
    image, cached = docker.ensure_image(build_script())
    return engine, image, cached


def _create_network(light: bool, state: LabState, step: Step) -> LabState:
    """Make the lab's network (a light lab's own) afresh; the state with it, saved at once, for
    `lab down` removes the network that lab.json names."""
    name, subnet, gateway = network(light)
    step(f"network {name} ({subnet})")
    docker.remove_network(name)
    docker.create_network(name, subnet, gateway)
    state = replace(state, network=name, subnet=subnet)
    save(state, state_file())
    return state


SwitchPlan = tuple[int, tuple[fabric_plan.SwitchFault, ...]]


def _switch_plan(planned: list[Planned], count: int | None, specs: Sequence[str]) -> SwitchPlan | None:
    """The switches asked for, checked against the planned workers before anything starts.

    Raises:
        UsageError: a bad count, or a fault on a NIC the plan does not cable.
    """
    if count is None:
        if specs:
            raise UsageError("--switch-fault needs --switches N")
        return None
    parsed = tuple(fabric_plan.parse_switch_fault(s) for s in specs)
    if count == 0:
        if parsed:
            raise UsageError("--switch-fault needs at least one switch (--switches N)")
        return 0, ()
    workers = [host for host, _, _ in planned if host.role == "worker"]
    fabric_plan.build_spec(workers, count, parsed, list(range(count)), "")
    return count, parsed


def _set_switches(state: LabState, wanted: SwitchPlan, step: Step) -> LabState:
    """Start, restart or stop the lab's switches as asked; the state saved with them."""
    count, own = wanted
    if count:
        step(f"{count} switches on loopback")
        switches.start(state.workers, count, own)
    else:
        switches.stop()
    state = replace(state, switches=count, switch_faults=tuple(str(f) for f in own))
    save(state, state_file())
    _write_inventory(state)
    return state


def _write_inventory(state: LabState) -> None:
    path = hosts_file(state.light)
    if state.light:
        inventory_writer.link_group_vars(path.parent)
    inventory_writer.write(state, path, switches.read_spec() if state.switches else None)


def _update(
    existing: LabState,
    planned: list[Planned],
    step: Step,
    *,
    kubernetes: bool,
    started: float,
    wanted: SwitchPlan | None,
) -> UpResult:
    """`lab up` on a running lab: add the workers it lacks, Kubernetes and/or change the
    switches, else change nothing. New workers re-cable running switches."""
    statuses = status(existing)
    if not all(s.state == "running" for s in statuses):
        broken = ", ".join(f"{s.host.name} {s.state}" for s in statuses if s.state != "running")
        raise UsageError(f"the lab is partly up ({broken}); run 'gpurack lab down' first")
    new = _growth(existing, planned)
    wants_kubernetes = kubernetes or existing.kubernetes
    have = (existing.switches, existing.switch_faults)
    if wanted is None and new and existing.switches:
        wanted = (existing.switches, tuple(fabric_plan.parse_switch_fault(f) for f in existing.switch_faults))
    switches_change = wanted is not None and (wanted[0], tuple(str(f) for f in wanted[1])) != have
    if not new and wants_kubernetes == existing.kubernetes and not switches_change:
        return UpResult(existing, already_up=True)
    if wants_kubernetes:
        lab_kubernetes.require_build()
    state = replace(existing, kubernetes=wants_kubernetes)
    if new:
        try:
            state = _start(state, new, step)
        except BaseException:
            _remove_hosts([h for h, _, _ in new])
            save(existing, state_file())
            _write_inventory(existing)
            raise
    else:
        save(state, state_file())
        _write_inventory(state)
    if wants_kubernetes and (new or not existing.kubernetes):
        lab_kubernetes.install(step)
    if wanted is not None and (switches_change or new):
        state = _set_switches(state, wanted, step)
    return UpResult(state, False, seconds=time.monotonic() - started)


def _growth(existing: LabState, planned: list[Planned]) -> list[Planned]:
    """The planned hosts a running lab lacks; the hosts it has must be planned unchanged.

    Raises:
        UsageError: the plan drops a host or gives a running one another profile or faults.
    """
    running = {h.name: h for h in existing.hosts}
    for host, _, _ in planned:
        have = running.get(host.name)
        if have is not None and (have.profile, have.faults) != (host.profile, host.faults):
            raise UsageError(
                f"{host.name} runs profile {have.profile} with faults {list(have.faults)}, "
                f"not {host.profile} with {list(host.faults)}; run 'gpurack lab down' first to change it"
            )
    dropped = sorted(set(running) - {h.name for h, _, _ in planned})
    if dropped:
        raise UsageError(
            f"the lab runs {', '.join(dropped)} too; a running lab only grows "
            "('gpurack lab down' to shrink it)"
        )
    return [p for p in planned if p[0].name not in running]


def _remove_hosts(hosts: Sequence[LabHost]) -> None:
    """Remove containers and disks of hosts a failed grow started."""
    for host in hosts:
        docker.remove_container(host.name)
        disks.detach_under(lab_dir() / "hosts" / host.name)


def _start(state: LabState, planned: list[Planned], step: Step) -> LabState:
    """Start the planned hosts beside the lab's, provision them, write state and inventory."""
    root = lab_dir()
    hosts: list[LabHost] = []
    for host, _, _ in planned:
        step(f"start {host.name}")
        hosts.append(provision.run_host(state, host, root))
        # Saved after each container, so `lab down` finds everything even if up is killed.
        state = replace(state, hosts=(*state.hosts, hosts[-1]))
        save(state, state_file())
    provision.provision_all(planned, hosts, Path(state.key), root, step)
    step("inventory")
    _write_inventory(state)
    return state


def status(state: LabState) -> list[HostStatus]:
    """Each recorded host with its container's state now."""
    seen = {c.name: c for c in docker.lab_containers()}
    return [HostStatus(h, seen[h.name].state if h.name in seen else "missing") for h in state.hosts]


def teardown(purge: bool) -> DownResult:
    """Remove what this state folder's lab made: its containers, the network its lab.json
    names, its loops, the state folder and its inventory; and lab containers whose owner
    folder is gone. Another lab's (a rack beside a light lab) are never touched.

    Only objects carrying the lab label and loops backed by files in the lab folder are
    touched. With purge, the node image too, unless a container still uses it.

    Raises:
        DockerError, DiskError: something could not be removed (the rest still is).
    """
    root, state, ready = lab_dir(), _readable_state(), docker.engine_ready()
    net = state.network if state else None
    found = docker.lab_containers() if ready else []
    containers = tuple(c.name for c in found if ownership.made_by(c, root, net))
    inventory = ownership.inventory_owned(hosts_file(), root)  # before its key's folder goes
    for name in containers:
        docker.remove_container(name)
    removed = net if ready and net and docker.network_exists(net) else None
    if removed:
        docker.remove_network(removed)
    stopped = switches.stop()
    loops = tuple(disks.detach_under(root))
    shutil.rmtree(root, ignore_errors=True)
    if inventory:
        hosts_file().unlink()
    images: tuple[str, ...] = ()
    if purge and ready:
        images = tuple(docker.purge_image(docker.image_tag(build_script())))
    return DownResult(containers, removed, loops, images, stopped)


def _readable_state() -> LabState | None:
    """lab.json, None when there is none or it cannot be read (down removes what it can)."""
    try:
        return load(state_file())
    except NotAssessedError:
        return None
