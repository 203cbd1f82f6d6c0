"""The switch fabric end to end on the session's lab cluster (docs/fabric.md).

`gpurack lab up --switches 2` adds two fake switches (leaf1 Arista EOS, leaf2 Cisco NX-OS) on
loopback, served over real SSH, whose LLDP tables follow the lab's cabling plan, with three
faults planted: lab-w1's mlx5_1 cabled into the wrong switch, lab-w2's mlx5_3 on a port that
is shut down, and lab-w2's mlx5_0 on a port with MTU 1500. Then, through the real CLI:

- `gpurack fabric check` finds each fault, naming the server NIC, the switch and the port,
  and passes every other NIC; it records where each NIC was seen;
- playbooks/fabric.yml in check mode shows the configuration diff; applied, it fixes the
  MTU (the fault configuration can fix) and a second run changes nothing;
- a switch that does not answer (leaf9, added by a second inventory source) is one line,
  and the two others are still read and checked;
- without faults the clean plan passes; the switches are removed at the end, so the rest
  of the session's site runs see no tor_switches;
- lab-w1's leaf label moves to where LLDP saw the miscabled NIC only in a run whose fabric check
  named it (docs/labels.md, "Topology"), and is put back from the inventory afterwards.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import LEAF_KEY, SPINE_KEY
from gpurack import cli
from gpurack.harvest import job_events
from gpurack_lab import lab_kubernetes, rack
from kubernetes import client, config
from lab_helpers import CLUSTER_WORKERS, LabCluster, ensure_site, json_run

pytestmark = pytest.mark.kubernetes

FAULTS = ("miscabled@lab-w1:mlx5_1", "switch-port-down@lab-w2:mlx5_3", "switch-mtu@lab-w2:mlx5_0")


def _switches(cluster: LabCluster, count: int, faults: tuple[str, ...] = ()) -> None:
    """`lab up` on the running cluster with `count` switches and these faults."""
    argv = cluster.up_argv(max(cluster.workers, CLUSTER_WORKERS))
    argv += ["--switches", str(count)]
    for fault in faults:
        argv += ["--switch-fault", fault]
    assert cli.main(argv) == 0


@contextlib.contextmanager
def _faulted_switches(cluster: LabCluster) -> Iterator[Path]:
    """Two faulted switches on the running cluster, removed afterwards; the lab's hosts file."""
    _switches(cluster, 2, FAULTS)
    try:
        yield rack.hosts_file()
    finally:
        _switches(cluster, 0)


@pytest.fixture
def faulted(lab_cluster: LabCluster) -> Iterator[Path]:
    """The cluster with two faulted switches; the switches are removed afterwards."""
    with _faulted_switches(lab_cluster) as hosts:
        yield hosts


def _failures(check: dict[str, Any]) -> dict[str, list[tuple[str, str, str]]]:
    """Each server's failed results as (check id, NIC, reason)."""
    return {
        server: [(r["id"], r["component"], r["reason"]) for r in entry["results"] if r["verdict"] == "fail"]
        for server, entry in check["servers"].items()
    }


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_fabric_check_names_each_fault_and_the_round_trip_fixes_what_config_can(
    lab_cluster: LabCluster, faulted: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, check = json_run(["fabric", "check", "-i", str(faulted)], capsys)
    assert code == 1
    assert check["switches"]["leaf1"]["read"] and check["switches"]["leaf2"]["read"]
    failed = _failures(check)
    w1 = failed["lab-w1"]
    # Miscabled: both ends are named; its planned port is empty, so it is down too.
    assert (
        "switch.cabling",
        "mlx5_1",
        "lab-w1 mlx5_1 should be on leaf2 Ethernet1/1; LLDP shows it on leaf1 Ethernet64",
    ) in w1
    assert ("switch.port.state", "mlx5_1", "leaf2 Ethernet1/1 (lab-w1 mlx5_1) is down") in w1
    assert {nic for _, nic, _ in w1} == {"mlx5_1"}
    w2 = failed["lab-w2"]
    assert ("switch.port.state", "mlx5_3", "leaf2 Ethernet1/3 (lab-w2 mlx5_3) is disabled") in w2
    assert (
        "switch.port.mtu",
        "mlx5_0",
        "leaf1 Ethernet2 (lab-w2 mlx5_0): MTU 1500, below the pool's 9214",
    ) in w2
    assert {nic for _, nic, _ in w2} == {"mlx5_0", "mlx5_3"}
    # Every other NIC passes every check (lab-w2's 400 Gb/s pool expects its speed too).
    passed = {r["component"] for r in check["servers"]["lab-w2"]["results"] if r["verdict"] == "pass"}
    assert {f"mlx5_{i}" for i in (1, 2, 4, 5, 6, 7)} <= passed
    speeds = [r for r in check["servers"]["lab-w2"]["results"] if r["id"] == "switch.port.speed"]
    assert speeds and all(r["verdict"] == "pass" for r in speeds if r["component"] != "mlx5_3")

    # The check mode diff, then apply, then nothing left to change.
    code, dry = json_run(["run", "fabric", "-i", str(faulted), "--check", "--diff", "--no-record"], capsys)
    changed = {h["host"]: h["changed"] for h in dry["hosts"]}
    assert changed["leaf1"] == 1 and changed["leaf2"] == 1, dry
    code, applied = json_run(
        ["run", "fabric", "-i", str(faulted), "-e", "switch_fabric_configure=true", "--no-record"], capsys
    )
    assert {h["host"]: h["changed"] for h in applied["hosts"]}["leaf1"] == 1
    code, again = json_run(
        ["run", "fabric", "-i", str(faulted), "-e", "switch_fabric_configure=true", "--no-record"], capsys
    )
    assert all(h["changed"] == 0 for h in again["hosts"]), again
    code, fixed = json_run(["fabric", "check", "-i", str(faulted), "--no-record"], capsys)
    remaining = {(server, r[0], r[1]) for server, results in _failures(fixed).items() for r in results}
    assert ("lab-w2", "switch.port.mtu", "mlx5_0") not in remaining
    assert ("lab-w1", "switch.cabling", "mlx5_1") in remaining  # configuration cannot move a cable

    # A switch that does not answer is one line; the others are still read and checked.
    extra = tmp_path / "leaf9.yml"
    closed = _closed_port()
    extra.write_text(
        yaml.safe_dump(
            {
                "tor_switches": {
                    "hosts": {
                        "leaf9": {
                            "ansible_host": "127.0.0.1",
                            "ansible_port": closed,
                            "ansible_network_os": "arista_eos",
                            "ansible_user": "admin",
                            "ansible_password": "unused",
                        }
                    }
                }
            }
        )
    )
    both = tmp_path / "inventory"
    both.mkdir()
    (both / "hosts.yml").symlink_to(faulted)
    (both / "leaf9.yml").symlink_to(extra)
    (both / "group_vars").symlink_to(faulted.parent / "group_vars")
    code, partial = json_run(["fabric", "check", "-i", str(both), "--no-record"], capsys)
    assert partial["switches"]["leaf9"] == {
        "read": False,
        "error": f"leaf9 (127.0.0.1:{closed}): unreachable: connection refused",
    }
    assert partial["switches"]["leaf1"]["read"] and partial["switches"]["leaf2"]["read"]
    assert _failures(partial) == _failures(fixed)
    # The playbook too: leaf9 fails last, with its line; leaf1 and leaf2 pass; the servers
    # were checked (they fail on the faults configuration cannot fix).
    code, played = json_run(["run", "fabric", "-i", str(both), "--no-record"], capsys)
    assert sorted(played["failed"]) == ["lab-w1", "lab-w2", "leaf9"], played

    # Without faults the clean plan passes, and the inventory says where mlx5_1 went.
    _switches(lab_cluster, 2)
    code, clean = json_run(["fabric", "check", "-i", str(faulted)], capsys)
    assert code == 0, _failures(clean)
    assert {entry["summary"]["verdict"] for entry in clean["servers"].values()} == {"pass"}
    code, drift = json_run(["inventory", "diff", "lab-w1"], capsys)
    messages = [d["sentence"] for d in drift["drift"]]
    assert "mlx5_1 moved from leaf1 Ethernet64 to leaf2 Ethernet1/1" in messages


def test_without_switches_the_lab_inventory_has_no_tor_switches(lab_cluster: LabCluster) -> None:
    _switches(lab_cluster, 0)
    hosts = yaml.safe_load(rack.hosts_file().read_text())
    assert "tor_switches" not in hosts["all"]["children"]
    assert not any(
        "gpurack_cabling" in v
        for pool in hosts["all"]["children"]["gpu_nodes"]["children"].values()
        for v in pool["hosts"].values()
    )


MISCABLED = "lab-w1 mlx5_1 should be on leaf2 Ethernet1/1; LLDP shows it on leaf1 Ethernet64"
CHECK_TASK = "Check the server's switch ports and keep where it was seen"
VERDICT_TASK = "Fail the server on a failed switch-side check"


@pytest.fixture
def miscabled_site(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """The joined cluster (site runs before any switch comes up) with the faulted switches; the
    inventory folder. Afterwards, without the switches, a join run puts lab-w1's rack and block
    back for the tests after this one."""
    ensure_site(capsys)
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    inventory = str(rack.hosts_file().parent)
    with _faulted_switches(lab_cluster):
        yield inventory
    code, joined = json_run(["run", "join", "-i", inventory, "-l", "lab-w1", "--no-record"], capsys)
    assert code == 0, joined
    assert _topology() == {LEAF_KEY: "lab-rack1", SPINE_KEY: "lab-block1"}


def _topology() -> dict[str, str | None]:
    """lab-w1's topology labels as the cluster has them (None: absent)."""
    labels = client.CoreV1Api().read_node("lab-w1").metadata.labels or {}
    return {key: labels.get(key) for key in (LEAF_KEY, SPINE_KEY)}


def _on_w1(run: dict[str, Any], task: str) -> dict[str, Any]:
    """What `task` returned on lab-w1 in a run (its job events); {} when it did not run there."""
    for event in job_events(Path(run["artifact_dir"])):
        data = event.get("event_data") or {}
        done = event.get("event") in ("runner_on_ok", "runner_on_failed")
        if done and data.get("task") == task and data.get("host") == "lab-w1":
            return dict(data.get("res") or {})
    return {}


def _fabric_facts(run: dict[str, Any]) -> dict[str, Any]:
    """lab-w1's switch_fabric_results and switch_fabric_placement as the run's check set them."""
    facts = _on_w1(run, CHECK_TASK).get("ansible_facts")
    assert isinstance(facts, dict), f"the fabric check did not run on lab-w1: {run}"
    return facts


def test_a_miscabled_nic_moves_the_leaf_label_only_in_a_run_whose_check_names_it(
    miscabled_site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """lab-w1's mlx5_1 is cabled into leaf1 Ethernet64, planned on leaf2 (its mlx5_0 is on leaf1).
    Each run is `gpurack run site` on lab-w1 and the switches named, tags switch_fabric and
    node_labels: the fabric phase, then the labels, as in a whole site run.
    - leaf1 alone is read: mlx5_1's checks are skipped (its switch unread), nothing is named, and
      the label stays although LLDP shows both NICs on leaf1;
    - both are read (the defaults): the check names mlx5_1 and fails lab-w1 before its labels;
    - both, with switch_fabric_fail_hosts=false: the check names mlx5_1 and lab-w1 goes on to its
      labels in the same run: its leaf is leaf1, and its spine goes (the lab names no spines).
    """
    before = _topology()
    assert before == {LEAF_KEY: "lab-rack1", SPINE_KEY: "lab-block1"}  # the inventory's, from site
    site = ["run", "site", "-i", miscabled_site, "-t", "switch_fabric,node_labels", "--no-record"]

    code, partial = json_run([*site, "-l", "lab-w1,leaf1"], capsys)
    assert code == 0, partial
    facts = _fabric_facts(partial)
    assert {r["verdict"] for r in facts["switch_fabric_results"] if r["component"] == "mlx5_1"} == {"skip"}
    assert facts["switch_fabric_placement"] is None
    assert _topology() == before

    code, stopped = json_run([*site, "-l", "lab-w1,tor_switches"], capsys)
    assert code == 1 and stopped["failed"] == ["lab-w1"], stopped
    assert MISCABLED in str(_on_w1(stopped, VERDICT_TASK).get("msg")), stopped
    assert _topology() == before

    code, moved = json_run(
        [*site, "-l", "lab-w1,tor_switches", "-e", '{"switch_fabric_fail_hosts": false}'], capsys
    )
    assert code == 0, moved
    facts = _fabric_facts(moved)
    assert MISCABLED in [r["reason"] for r in facts["switch_fabric_results"] if r["verdict"] == "fail"]
    assert facts["switch_fabric_placement"] == {"leaf": ["leaf1"], "spine": []}
    assert _topology() == {LEAF_KEY: "leaf1", SPINE_KEY: None}
