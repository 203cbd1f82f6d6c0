"""Node-pool labels and taints from hand-built facts and from the real captures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import (
    POOL_KEYS,
    LabelError,
    check_pool,
    fabric_label,
    label_errors,
    label_key_error,
    label_value_error,
    node_labels,
    pool_errors,
    pool_taints,
    topology_label,
)
from hypothesis import given, settings
from hypothesis import strategies as st

POOL = {"name": "h200-train-a", "workload": "distributed-training", "sharing": "full-gpu"}


def gpus(count: int, name: str = "NVIDIA H200", device_id: str = "0x2335", links: int = 0) -> dict[str, Any]:
    """gpurack_gpu with `count` GPUs, each with `links` active NVLinks."""
    return {
        "available": True,
        "source": "nvidia-smi-xml",
        "count": count,
        "gpus": [
            {
                "index": i,
                "name": name,
                "pci_device_id": device_id,
                "bus_id": f"0000:{i + 0x19:02x}:00.0",
                "nvlinks": [{"link": n, "speed_gbps": 26.562, "active": True} for n in range(links)],
                "nvlink_source": "nvidia-smi nvlink -s",
            }
            for i in range(count)
        ],
        "topology": None,
        "nvswitch": False,
    }


def nic(*layers: str, net: tuple[str, ...] = ("eth0",)) -> dict[str, Any]:
    """gpurack_nic with one RDMA port per link layer given."""
    return {
        "available": True,
        "net": [{"name": n} for n in net],
        "rdma": [{"device": f"mlx5_{i}", "port": 1, "link_layer": layer} for i, layer in enumerate(layers)],
    }


def test_node_labels_8x_h200_hgx_infiniband() -> None:
    facts = {"gpurack_gpu": gpus(8, links=18), "gpurack_nic": nic(*["InfiniBand"] * 8)}
    assert node_labels(facts, POOL) == {
        "gpurack.io/pool": "h200-train-a",
        "gpurack.io/accelerator": "h200-141gb",
        "gpurack.io/topology": "8gpu-sxm-nvlink",
        "gpurack.io/fabric": "infiniband",
        "gpurack.io/workload": "distributed-training",
        "gpurack.io/sharing": "full-gpu",
    }


def test_node_labels_no_gpu_is_none() -> None:
    facts = {"gpurack_gpu": {"available": False, "reason": "nvidia-smi not found"}, "gpurack_nic": nic()}
    labels = node_labels(facts, POOL)
    assert labels["gpurack.io/accelerator"] == "none"
    assert labels["gpurack.io/topology"] == "none"
    assert labels["gpurack.io/fabric"] == "ethernet"


def test_node_labels_extra_pool_labels_are_added() -> None:
    pool = {**POOL, "labels": {"gpurack.io/rack": "r12", "example.com/team": "llm"}}
    labels = node_labels({"gpurack_gpu": gpus(1)}, pool)
    assert labels["gpurack.io/rack"] == "r12"
    assert labels["example.com/team"] == "llm"


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        (
            {**POOL, "workload": "training"},
            "pool.workload must be one of distributed-training, inference, batch",
        ),
        ({**POOL, "sharing": None}, "pool.sharing must be one of full-gpu, mig, time-slicing"),
        ({**POOL, "name": "H200 train"}, "pool.name: 'H200 train' must be a DNS label: at most 63"),
        ({k: v for k, v in POOL.items() if k != "name"}, "pool.name is required"),
        (
            {**POOL, "labels": {"node-role.kubernetes.io/gpu": ""}},
            "node roles are applied from the controller",
        ),
        ({**POOL, "labels": {"kubernetes.io/arch": "amd64"}}, "reserved for Kubernetes"),
        ({**POOL, "labels": {"topology.k8s.io/zone": "a"}}, "reserved for Kubernetes"),
        ({**POOL, "labels": {"gpurack.io/accelerator": "b200-180gb"}}, "derived from facts"),
        ({**POOL, "labels": {"gpurack.io/rack": "x" * 64}}, "at most 63 characters"),
        ("h200-train-a", "pool must be a mapping"),
    ],
)
def test_node_labels_bad_pool_raises_naming_the_field(pool: Any, message: str) -> None:
    with pytest.raises(LabelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        node_labels({"gpurack_gpu": gpus(1)}, pool)


@pytest.mark.parametrize(
    ("facts", "topology"),
    [
        (gpus(8, links=18), "8gpu-sxm-nvlink"),
        (gpus(8, "NVIDIA GeForce RTX 4090", "0x2684"), "8gpu-pcie-pcie"),
        (gpus(1), "1gpu-sxm-single"),
        (gpus(2, "NVIDIA H100 NVL", "0x2321", links=12), "2gpu-nvl-nvlink"),
        (gpus(2, "NVIDIA H100 NVL", "0x2321"), "2gpu-nvl-pcie"),
        ({**gpus(8), "nvswitch": True}, "8gpu-sxm-nvlink"),
        (
            {**gpus(2), "topology": {"links": {"GPU0": {"GPU1": "NV18"}, "GPU1": {"GPU0": "NV18"}}}},
            "2gpu-sxm-nvlink",
        ),
        ({**gpus(2), "topology": {"links": {"GPU0": {"GPU1": "SYS", "NIC0": "PIX"}}}}, "2gpu-sxm-pcie"),
        (gpus(4, "NVIDIA Foo X 99GB", "0x9999"), "4gpu-unknown-pcie"),
        (gpus(0), "none"),
    ],
)
def test_topology_label(facts: dict[str, Any], topology: str) -> None:
    assert topology_label(facts) == topology


def test_topology_inactive_links_are_not_nvlink() -> None:
    facts = gpus(2, links=2)
    for gpu in facts["gpus"]:
        for link in gpu["nvlinks"]:
            link["active"] = False
    assert topology_label(facts) == "2gpu-sxm-pcie"


@pytest.mark.parametrize(
    ("nic_facts", "fabric"),
    [
        (nic("InfiniBand", "Ethernet"), "infiniband"),
        (nic("Ethernet", "Ethernet"), "roce"),
        (nic(), "ethernet"),
        (nic(net=("lo",)), "none"),
        ({"available": False, "reason": "no sysfs"}, "none"),
        (None, "none"),
    ],
)
def test_fabric_label(nic_facts: dict[str, Any] | None, fabric: str) -> None:
    assert fabric_label(nic_facts) == fabric


def test_accelerator_unknown_and_mixed_models() -> None:
    unknown = node_labels({"gpurack_gpu": gpus(2, "NVIDIA Foo X 99GB", "0x9999")}, POOL)
    assert unknown["gpurack.io/accelerator"] == "foo-x-99gb"
    mixed = gpus(2)
    mixed["gpus"][1].update(name="NVIDIA L4", pci_device_id="0x27b8")
    assert node_labels({"gpurack_gpu": mixed}, POOL)["gpurack.io/accelerator"] == "mixed"


def test_accelerator_pci_scan_without_driver_uses_device_id() -> None:
    facts = gpus(8, name="NVIDIA 0x2330", device_id="0x2330")
    facts["source"] = "pci-scan"
    assert node_labels({"gpurack_gpu": facts}, POOL)["gpurack.io/accelerator"] == "h100-80gb"


@pytest.mark.parametrize(
    "key",
    ["gpurack.io/pool", "pool", "example.com/a_b.c-d", "a" * 63, "sub.example.com/" + "n" * 63, "x/" + "Y9"],
)
def test_label_key_valid(key: str) -> None:
    assert label_key_error(key) is None


@pytest.mark.parametrize(
    "key",
    [
        "",
        "/pool",
        "gpurack.io/",
        "a/b/c",
        "-pool",
        "pool-",
        "a" * 64,
        "Gpurack.io/pool",
        "gp_rack.io/x",
        "x" * 254 + "/a",
        "kubernetes.io/hostname",
        "node.kubernetes.io/x",
        "k8s.io/x",
        7,
    ],
)
def test_label_key_invalid(key: Any) -> None:
    assert label_key_error(key) is not None


def test_label_key_restricted_allowed_on_request() -> None:
    assert label_key_error("kubernetes.io/arch", allow_restricted=True) is None


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("", True),
        ("h200-141gb", True),
        ("a.b_c", True),
        ("-a", False),
        ("a" * 64, False),
        ("a b", False),
        (8, False),
        (None, False),
    ],
)
def test_label_value(value: Any, ok: bool) -> None:
    assert (label_value_error(value) is None) is ok


def test_label_errors_lists_every_problem() -> None:
    assert len(label_errors({"kubernetes.io/x": "bad value", "ok": "fine"})) == 2
    assert label_errors(["a"]) == ["labels must be a mapping of key to value, got list"]


def test_pool_taints_adds_validating_taint() -> None:
    pool = {**POOL, "taints": [{"key": "gpurack.io/reserved", "value": "research", "effect": "NoSchedule"}]}
    assert pool_taints(pool) == [
        {"key": "gpurack.io/reserved", "value": "research", "effect": "NoSchedule"},
        {"key": "gpurack.io/validating", "value": "", "effect": "NoSchedule"},
    ]
    assert pool_taints(POOL) == [{"key": "gpurack.io/validating", "value": "", "effect": "NoSchedule"}]


def test_pool_taints_keeps_a_single_validating_taint() -> None:
    pool = {"taints": [{"key": "gpurack.io/validating", "effect": "NoExecute"}]}
    assert pool_taints(pool) == [{"key": "gpurack.io/validating", "value": "", "effect": "NoExecute"}]


@pytest.mark.parametrize(
    ("taints", "message"),
    [
        ([{"key": "gpurack.io/x", "effect": "Never"}], r"pool.taints\[0\]: effect must be one of NoSchedule"),
        ([{"key": "bad key", "effect": "NoSchedule"}], r"pool.taints\[0\]: taint key 'bad key'"),
        ([{"key": "a", "value": "x y", "effect": "NoSchedule"}], r"taint value 'x y'"),
        ([{"key": "a", "effect": "NoSchedule", "operator": "Exists"}], "unknown fields operator"),
        (["gpu=true:NoSchedule"], r"pool.taints\[0\] must be a mapping"),
        ("gpu", "pool.taints must be a list"),
    ],
)
def test_pool_taints_invalid_raises(taints: Any, message: str) -> None:
    with pytest.raises(LabelError, match=message):
        pool_taints({**POOL, "taints": taints})


# --- the pool rules preflight, join and the CLI share (issue 13, point 4) -------------------


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        ({**POOL, "wrkload": "inference"}, "pool: unknown key 'wrkload' (did you mean 'workload'?)"),
        ({**POOL, "colour": "red"}, "pool: unknown key 'colour'; known keys: name, workload, sharing"),
        ({**POOL, "name": "H200-Train-A"}, "pool.name: 'H200-Train-A' must be a DNS label"),
        ({**POOL, "name": "h200_train"}, "pool.name: 'h200_train' must be a DNS label"),
        ({**POOL, "name": "h200.train"}, "pool.name: 'h200.train' must be a DNS label"),
        ({**POOL, "name": "a" * 64}, "must be a DNS label: at most 63"),
        ({**POOL, "name": 42}, "pool.name must be a string"),
        ({**POOL, "labels": {"kubernetes.io/hostname": "x"}}, "reserved for Kubernetes"),
        ({**POOL, "labels": {"team": 7}}, "pool.labels: team: label value 7 must be a string"),
        ({**POOL, "labels": ["team=vision"]}, "pool.labels: labels must be a mapping"),
        (
            {**POOL, "taints": [{"key": "gpurack.io/x", "value": "a", "effect": "NoExecute"}] * 2},
            r"pool.taints[1]: same key and effect as pool.taints[0]",
        ),
        ({**POOL, "taints": [{"key": "gpurack.io/x", "effect": "noschedule"}]}, "effect must be one of"),
        ({**POOL, "taints": [{"key": "k8s.io/x", "effect": "NoSchedule"}]}, "taint key 'k8s.io/x'"),
        ({**POOL, "cost": 2.5}, "pool.cost must be a mapping like {gpu_hour: 2.5}, got float"),
        ({**POOL, "cost": {"gpu_hour": -1}}, "pool.cost.gpu_hour must be a price of at least 0"),
        ({**POOL, "cost": {"gpu_hour": "2.50 EUR"}}, "got '2.50 EUR'"),
        ({**POOL, "cost": {"gpu_hour": True}}, "got True"),
        ({**POOL, "cost": {"gpu_hour": 2, "gpu_hr": 2}}, "pool.cost: unknown key 'gpu_hr' (did you mean"),
        (
            {**POOL, "min_available": -1},
            "pool.min_available must be a whole number of nodes of at least 0, got -1",
        ),
        (
            {**POOL, "min_available": "2"},
            "pool.min_available must be a whole number of nodes of at least 0, got '2'",
        ),
    ],
)
def test_pool_errors_name_the_key(pool: Any, message: str) -> None:
    errors = pool_errors(pool)
    assert any(message in e for e in errors), errors
    with pytest.raises(LabelError):
        check_pool(pool)
    # node_labels applies the same rules, so join refuses what preflight refuses.
    with pytest.raises(LabelError):
        node_labels({"gpurack_gpu": gpus(1)}, pool)


def test_pool_errors_lists_every_problem_at_once() -> None:
    pool = {"name": "Bad Name", "wrkload": "inference", "sharing": "all", "taints": "x"}
    errors = pool_errors(pool)
    assert len(errors) == 5, errors  # unknown key, name, workload (missing), sharing, taints


@pytest.mark.parametrize(
    "pool",
    [
        POOL,
        {**POOL, "labels": {"example.com/team": "llm", "rack": ""}, "taints": None},
        {**POOL, "taints": [{"key": "gpurack.io/pool", "value": "h200-train-a", "effect": "NoSchedule"}]},
        {**POOL, "taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]},
        {**POOL, "cost": {"gpu_hour": 2.49}},
        {**POOL, "cost": {"gpu_hour": 0}},
    ],
)
def test_pool_errors_accepts_valid_pools(pool: dict[str, Any]) -> None:
    assert pool_errors(pool) == []
    check_pool(pool)


def test_pool_keys_are_the_documented_ones() -> None:
    assert POOL_KEYS == (
        "name",
        "workload",
        "sharing",
        "labels",
        "taints",
        "cost",
        "min_available",
        "model_cache",
        "allocation",
        "time_slicing",
        "mig",
    )


_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=70),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_POOLS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(max_size=70) | _ANY,
        "workload": st.sampled_from(["inference", "batch", "Inference", ""]) | _ANY,
        "sharing": st.sampled_from(["mig", "full-gpu", "MIG"]) | _ANY,
        "labels": st.dictionaries(st.text(max_size=80), st.text(max_size=70) | _ANY, max_size=3) | _ANY,
        "taints": st.lists(
            st.dictionaries(st.sampled_from(["key", "value", "effect", "op"]), st.text(max_size=20) | _ANY),
            max_size=3,
        )
        | _ANY,
        "wrkload": _ANY,
    },
)


@settings(database=None, deadline=None, max_examples=300)
@given(pool=_POOLS | _ANY)
def test_any_pool_is_valid_or_a_label_error(pool: Any) -> None:
    """Any YAML-shaped pool either passes or raises LabelError, never another exception."""
    errors = pool_errors(pool)
    try:
        labels = node_labels({"gpurack_gpu": gpus(1)}, pool)
        taints = pool_taints(pool)
    except LabelError:
        assert errors, "node_labels or pool_taints refused a pool that pool_errors accepted"
        return
    assert errors == []
    assert label_errors(labels) == []
    assert all(t["effect"] in ("NoSchedule", "PreferNoSchedule", "NoExecute") for t in taints)


# --- real captures ---------------------------------------------------------------------------


def test_node_labels_h200x1_capture(h200x1: Path) -> None:
    source = CaptureSource(h200x1)
    facts = {"gpurack_gpu": gather_gpu(source), "gpurack_nic": gather_nic(source)}
    labels = node_labels(facts, POOL)
    assert labels["gpurack.io/accelerator"] == "h200-141gb"
    assert labels["gpurack.io/topology"] == "1gpu-sxm-single"
    assert labels["gpurack.io/fabric"] == "ethernet"


@pytest.mark.parametrize(
    ("capture", "accelerator", "topology"),
    [
        ("nvidia-smi-q.535.161.08.h100x8", "h100-80gb", "8gpu-sxm-nvlink"),
        ("nvidia-smi-q.535.154.05.rtx4090x8", "rtx4090-24gb", "8gpu-pcie-pcie"),
    ],
)
def test_node_labels_public_nvidia_smi_text(
    public: Path, capture: str, accelerator: str, topology: str
) -> None:
    parsed = parse_nvidia_smi_text((public / capture).read_text())
    labels = node_labels({"gpurack_gpu": {"available": True, "source": "nvidia-smi-text", **parsed}}, POOL)
    assert labels["gpurack.io/accelerator"] == accelerator
    assert labels["gpurack.io/topology"] == topology
    assert labels["gpurack.io/fabric"] == "none"
