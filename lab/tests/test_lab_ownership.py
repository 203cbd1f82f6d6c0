"""A light lab beside a rack: its own network and inventory, and each `lab down` removing only
what its state folder's lab made (no Docker: the docker module is replaced)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from gpurack_lab import docker, inventory_writer, ownership, rack
from gpurack_lab.docker import Container
from gpurack_lab.state import LIGHT_NETWORK, NETWORK, LabState, lab_dir, load, save


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state dir of the test's own, and the rack's inventory folder in tmp_path."""
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "rack-inventory").mkdir()
    monkeypatch.setattr(rack, "inventory_dir", lambda: tmp_path / "rack-inventory")
    return tmp_path / "state"


def _rack_lab(tmp_path: Path) -> Path:
    """Another lab's folder, alive: a rack's state folder with its key."""
    folder = tmp_path / "rr" / "lab"
    folder.mkdir(parents=True)
    return folder


def test_a_light_lab_has_its_own_network_and_addresses() -> None:
    light = [h for h, _, _ in rack.plan(0, ["h200x1"], [], light=2)]
    workers = [h for h, _, _ in rack.plan(1, ["h200x1"], [])]
    assert [h.ip for h in light] == ["172.30.43.11", "172.30.43.12"]
    assert [h.ip for h in workers] == ["172.30.42.10", "172.30.42.11"]
    assert LabState("i", LIGHT_NETWORK, "172.30.43.0/24", "/k").light
    assert not LabState("i", NETWORK, "172.30.42.0/24", "/k").light


def test_lab_containers_reads_the_network_and_owner_of_each() -> None:
    assert docker._container("/lab-l1|running|172.30.43.11|/s/lab|lab-light-net") == Container(
        "lab-l1", "running", "172.30.43.11", "/s/lab", "lab-light-net"
    )
    assert docker._container("/lab-w1|exited||<no value>|") == Container("lab-w1", "exited", None)


def test_down_removes_its_own_and_abandoned_containers_never_another_labs(tmp_path: Path) -> None:
    mine, theirs, gone = tmp_path / "smoke" / "lab", _rack_lab(tmp_path), tmp_path / "gone" / "lab"
    mine.mkdir(parents=True)
    assert ownership.made_by(
        Container("lab-l1", "running", None, str(mine), LIGHT_NETWORK), mine, LIGHT_NETWORK
    )
    assert ownership.made_by(Container("lab-w9", "running", None, str(gone), NETWORK), mine, LIGHT_NETWORK)
    assert not ownership.made_by(
        Container("lab-w1", "running", None, str(theirs), NETWORK), mine, LIGHT_NETWORK
    )
    # one started before owners were labelled: the lab of its network removes it, no other
    unowned = Container("lab-w2", "running", None, None, NETWORK)
    assert ownership.made_by(unowned, theirs, NETWORK)
    assert not ownership.made_by(unowned, mine, LIGHT_NETWORK)
    assert not ownership.made_by(unowned, mine, None)


def test_a_light_lab_may_start_beside_a_running_rack_but_not_on_a_busy_network(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "smoke" / "lab", _rack_lab(tmp_path)
    rack_lab = [Container(n, "running", None, str(theirs), NETWORK) for n in ("lab-cp1", "lab-w1")]
    assert ownership.in_the_way(rack_lab, mine, LIGHT_NETWORK) == []
    assert ownership.in_the_way(rack_lab, mine, NETWORK) == ["lab-cp1", "lab-w1"]
    lost = Container("lab-l1", "running", None, str(mine), LIGHT_NETWORK)  # its lab.json is gone
    assert ownership.in_the_way([*rack_lab, lost], mine, LIGHT_NETWORK) == ["lab-l1"]


def test_the_rack_inventory_is_removed_only_by_its_lab_or_when_its_lab_is_gone(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "smoke" / "lab", _rack_lab(tmp_path)
    path = tmp_path / "hosts.yml"
    assert not ownership.inventory_owned(path, mine)  # none
    path.write_text(
        yaml.safe_dump({"all": {"vars": {"ansible_ssh_private_key_file": f"{theirs}/id_ed25519"}}})
    )
    assert not ownership.inventory_owned(path, mine)
    assert ownership.inventory_owned(path, theirs)
    theirs.rmdir()
    assert ownership.inventory_owned(path, mine)


def test_a_light_labs_inventory_lies_in_its_state_folder_with_the_pools(state_dir: Path) -> None:
    light = LabState("i", LIGHT_NETWORK, "172.30.43.0/24", f"{state_dir}/lab/id_ed25519")
    light = LabState(light.image, light.network, light.subnet, light.key,
                     tuple(h for h, _, _ in rack.plan(0, ["h200x1"], [], light=2)))  # fmt: skip
    rack._write_inventory(light)
    path = rack.hosts_file(light=True)
    assert path == lab_dir() / "inventory" / "hosts.yml"
    assert (path.parent / "group_vars" / "lab_h200x1").is_dir()
    hosts = yaml.safe_load(path.read_text())["all"]["children"]["gpu_nodes"]["children"]["lab_h200x1"][
        "hosts"
    ]
    assert list(hosts) == ["lab-l1", "lab-l2"]
    assert not rack.hosts_file().exists()
    inventory_writer.link_group_vars(path.parent)  # again: already linked


def _fake_docker(monkeypatch: pytest.MonkeyPatch, found: list[Container], networks: set[str]) -> list[str]:
    """Replace what teardown asks Docker; the list of what it removed."""
    removed: list[str] = []
    monkeypatch.setattr(docker, "engine_ready", lambda: True)
    monkeypatch.setattr(docker, "lab_containers", lambda: found)
    monkeypatch.setattr(docker, "remove_container", removed.append)
    monkeypatch.setattr(docker, "network_exists", lambda name: name in networks)
    monkeypatch.setattr(docker, "remove_network", lambda name: removed.append(f"network {name}"))
    monkeypatch.setattr(rack.switches, "stop", lambda: False)
    monkeypatch.setattr(rack.disks, "detach_under", lambda root: [])
    return removed


def test_a_light_labs_down_leaves_the_rack_beside_it(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = _rack_lab(tmp_path)
    rack_inventory = rack.hosts_file()
    rack_inventory.write_text(
        yaml.safe_dump({"all": {"vars": {"ansible_ssh_private_key_file": f"{theirs}/id_ed25519"}}})
    )
    found = [
        Container("lab-w1", "running", "172.30.42.11", str(theirs), NETWORK),
        Container("lab-l1", "running", "172.30.43.11", str(lab_dir()), LIGHT_NETWORK),
    ]
    removed = _fake_docker(monkeypatch, found, {NETWORK, LIGHT_NETWORK})
    save(LabState("i", LIGHT_NETWORK, "172.30.43.0/24", f"{lab_dir()}/id_ed25519"), rack.state_file())
    result = rack.teardown(purge=False)
    assert removed == ["lab-l1", f"network {LIGHT_NETWORK}"]
    assert (result.containers, result.network) == (("lab-l1",), LIGHT_NETWORK)
    assert rack_inventory.is_file() and not lab_dir().exists()


def test_a_down_without_lab_state_removes_no_network(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = [Container("lab-w1", "running", "172.30.42.11", str(_rack_lab(tmp_path)), NETWORK)]
    removed = _fake_docker(monkeypatch, found, {NETWORK})
    assert rack.teardown(purge=False).network is None
    assert removed == []


def test_the_network_is_saved_before_any_container_starts(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[tuple[str, str, str]] = []
    monkeypatch.setattr(docker, "remove_network", lambda name: None)
    monkeypatch.setattr(docker, "create_network", lambda *args: made.append(args))
    state = rack._create_network(True, LabState("i", "", "", "/k"), lambda _: None)
    assert made == [(LIGHT_NETWORK, "172.30.43.0/24", "172.30.43.1")]
    assert load(rack.state_file()) == state and state.light
