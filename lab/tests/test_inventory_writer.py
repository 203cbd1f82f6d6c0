"""The generated lab inventory and the lab plan (no Docker)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from gpurack import cli
from gpurack_lab import inventory_writer, rack
from gpurack_lab.disks import Disk
from gpurack_lab.paths import lab_root
from gpurack_lab.state import LabHost, LabState, load, save

REPO = Path(__file__).resolve().parents[2]

STATE = LabState(
    image="gpurack-node:abc",
    network="lab-net",
    subnet="172.30.42.0/24",
    key="/state/lab/id_ed25519",
    hosts=(
        LabHost("lab-cp1", "control_plane", "172.30.42.10", "cpu-only", "lab_cpu_only"),
        LabHost(
            "lab-w1",
            "worker",
            "172.30.42.11",
            "hgx-h100x8-ib",
            "lab_hgx_h100x8_ib",
            ("gpu-missing@lab-w1",),
            (Disk("/s/nvme0.img", "/dev/loop7", "/dev/nvme0n1"),),
        ),
        LabHost("lab-w2", "worker", "172.30.42.12", "h200x1", "lab_h200x1"),
    ),
)


def test_render_puts_workers_in_pool_groups_under_gpu_nodes() -> None:
    inventory = inventory_writer.render(STATE)["all"]
    pools = inventory["children"]["gpu_nodes"]["children"]
    assert pools["lab_hgx_h100x8_ib"]["hosts"]["lab-w1"]["ansible_host"] == "172.30.42.11"
    assert pools["lab_h200x1"]["hosts"]["lab-w2"]["gpurack_lab_faults"] == []
    # Two workers a rack, one block: their topology levels where no switch is read.
    racks = {h: v["gpurack_rack"] for p in pools.values() for h, v in p["hosts"].items()}
    assert racks == {"lab-w1": "lab-rack1", "lab-w2": "lab-rack1"}
    assert pools["lab_h200x1"]["hosts"]["lab-w2"]["gpurack_block"] == "lab-block1"
    assert list(inventory["children"]["kube_control_plane"]["hosts"]) == ["lab-cp1"]
    assert inventory["vars"]["ansible_user"] == "root"
    assert inventory["vars"]["gpurack_lab_root"] == str(lab_root())
    assert inventory["vars"]["ansible_ssh_private_key_file"] == "/state/lab/id_ed25519"
    assert "StrictHostKeyChecking=no" in inventory["vars"]["ansible_ssh_common_args"]


def test_write_gives_yaml_with_generated_header(tmp_path: Path) -> None:
    path = inventory_writer.write(STATE, tmp_path / "hosts.yml")
    assert path.read_text().startswith("# GENERATED")
    assert yaml.safe_load(path.read_text()) == inventory_writer.render(STATE)


def test_state_round_trips_through_lab_json(tmp_path: Path) -> None:
    save(STATE, tmp_path / "lab.json")
    assert load(tmp_path / "lab.json") == STATE


@pytest.mark.parametrize("group", ["lab_h200x1", "lab_hgx_h100x8_ib", "lab_cpu_only", "lab_custom"])
def test_every_profile_group_has_static_pool_and_expectations(group: str) -> None:
    folder = REPO / "lab" / "inventory" / "group_vars" / group
    assert "gpurack_pool" in yaml.safe_load((folder / "pool.yml").read_text())
    assert "gpurack_expect" in yaml.safe_load((folder / "expect.yml").read_text())


def test_plan_assigns_profiles_faults_and_addresses() -> None:
    planned = rack.plan(2, ["hgx-h100x8-ib", "h200x1"], ["pcie-downgraded@lab-w2"])
    hosts = [host for host, _, _ in planned]
    assert [(h.name, h.ip, h.group, h.faults) for h in hosts] == [
        ("lab-cp1", "172.30.42.10", "lab_cpu_only", ()),
        ("lab-w1", "172.30.42.11", "lab_hgx_h100x8_ib", ()),
        ("lab-w2", "172.30.42.12", "lab_h200x1", ("pcie-downgraded@lab-w2",)),
    ]


def test_a_light_lab_is_only_its_sshd_hosts_and_they_are_the_gpu_nodes() -> None:
    planned = rack.plan(0, ["h200x1", "hgx-h100x8-ib"], ["gpu-missing@lab-l3"], light=3)
    hosts = tuple(host for host, _, _ in planned)
    assert [(h.name, h.role, h.ip, h.group, h.faults) for h in hosts] == [
        ("lab-l1", "light", "172.30.43.11", "lab_h200x1", ()),
        ("lab-l2", "light", "172.30.43.12", "lab_hgx_h100x8_ib", ()),
        ("lab-l3", "light", "172.30.43.13", "lab_hgx_h100x8_ib", ("gpu-missing@lab-l3",)),
    ]
    children = inventory_writer.render(replace(STATE, hosts=hosts))["all"]["children"]
    assert children["gpu_nodes"]["children"]["lab_hgx_h100x8_ib"]["hosts"].keys() == {"lab-l2", "lab-l3"}
    assert children["kube_control_plane"]["hosts"] == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lab", "up", "--workers", "0"], "--workers must be between 1 and 16"),
        (["lab", "up", "--fault", "gpu-missing@lab-w9"], "no host lab-w9"),
        (["lab", "up", "--profile", "nope"], "unknown profile 'nope'"),
        (["lab", "up", "--fault", "ib-port-down@lab-w1"], "no InfiniBand HCA"),
        (["lab", "up", "--light", "201"], "--light must be between 1 and 200"),
        (["lab", "up", "--light", "2", "--kubernetes"], "take no --kubernetes"),
        (["lab", "up", "--light", "2", "--fault", "gpu-missing@lab-w1"], "no host lab-w1"),
    ],
)
def test_lab_up_bad_arguments_exit_64_before_docker(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 64
    assert message in capsys.readouterr().err


def test_lab_ssh_without_lab_exits_64(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lab", "ssh", "lab-w1"]) == 64
    assert "no lab is up" in capsys.readouterr().err
