"""The GPU Operator's Helm values from inventory (module_utils/platform/gpu_operator.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator import (
    gpu_operator_values,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator_inputs import (
    DEFAULT_CONFIG,
    DEVICE_PLUGIN_LABEL,
    DRIVER_OWNER_DEFAULT,
    HOST_TOOLKIT_DEFAULT,
    MIG_CONFIG_LABEL,
    GpuOperatorInputError,
    OperatorHost,
    OperatorSettings,
    operator_hosts,
    operator_node_labels,
    settings_from_mapping,
)

REPO = Path(__file__).resolve().parents[4]
TAINT = [{"key": "gpurack.io/pool", "value": "train", "effect": "NoSchedule"}]
FULL = {"name": "train", "workload": "distributed-training", "sharing": "full-gpu", "taints": TAINT}
SLICED = {
    "name": "infer",
    "workload": "inference",
    "sharing": "time-slicing",
    "time_slicing": {"replicas": 4},
}
MIG = {"name": "mig7", "workload": "inference", "sharing": "mig", "mig": {"profiles": {"1g.18gb": 7}}}
MIG_MIXED = {
    "name": "migmix",
    "workload": "batch",
    "sharing": "mig",
    "mig": {"profiles": {"3g.71gb": 1, "4g.71gb": 1}},
}


def host(name: str, pool: dict[str, Any], *, driver: bool = True, toolkit: bool = True) -> OperatorHost:
    return OperatorHost(name=name, pool=pool, host_driver=driver, host_toolkit=toolkit)


def config(values: dict[str, Any], name: str) -> dict[str, Any]:
    """A named device-plugin config, parsed (JSON is the YAML the device plugin reads)."""
    parsed: dict[str, Any] = yaml.safe_load(values["devicePlugin"]["config"]["data"][name])
    return parsed


def mig_configs(values: dict[str, Any]) -> dict[str, Any]:
    text = values["migManager"]["config"]["data"]["config.yaml"]
    configs: dict[str, Any] = yaml.safe_load(text)["mig-configs"]
    return configs


@pytest.mark.parametrize(
    ("driver", "toolkit", "expected"),
    [(True, True, (False, False)), (False, False, (True, True)), (True, False, (False, True))],
)
def test_host_driver_and_toolkit_disable_the_operators(
    driver: bool, toolkit: bool, expected: tuple[bool, bool]
) -> None:
    values = gpu_operator_values([host("a", FULL, driver=driver, toolkit=toolkit)], OperatorSettings())
    assert (values["driver"]["enabled"], values["toolkit"]["enabled"]) == expected


def test_full_gpu_pools_give_no_mig_and_plain_configs() -> None:
    values = gpu_operator_values([host("a", FULL)], OperatorSettings())
    assert values["mig"] == {"strategy": "none"}
    assert values["devicePlugin"]["config"]["create"] is True
    assert values["devicePlugin"]["config"]["default"] == DEFAULT_CONFIG
    assert config(values, "train") == {"version": "v1", "flags": {"migStrategy": "none"}}
    assert config(values, DEFAULT_CONFIG) == {"version": "v1", "flags": {"migStrategy": "none"}}
    assert mig_configs(values) == {"all-disabled": [{"devices": "all", "mig-enabled": False}]}


def test_time_slicing_pool_gets_its_replicas_in_its_own_config() -> None:
    values = gpu_operator_values([host("a", FULL), host("b", SLICED)], OperatorSettings())
    assert values["mig"]["strategy"] == "none"
    assert config(values, "infer") == {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }
    assert "sharing" not in config(values, "train")


def test_mig_pools_make_the_strategy_mixed_and_a_mig_parted_config_each() -> None:
    values = gpu_operator_values([host("a", FULL), host("b", MIG), host("c", MIG_MIXED)], OperatorSettings())
    assert values["mig"]["strategy"] == "mixed"
    assert config(values, "mig7")["flags"] == {"migStrategy": "mixed"}
    assert config(values, "train")["flags"] == {"migStrategy": "none"}
    assert mig_configs(values) == {
        "all-disabled": [{"devices": "all", "mig-enabled": False}],
        "mig7": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.18gb": 7}}],
        "migmix": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.71gb": 1, "4g.71gb": 1}}],
    }
    assert values["migManager"]["config"]["default"] == "all-disabled"


def test_single_strategy_needs_one_profile_per_mig_pool() -> None:
    values = gpu_operator_values([host("b", MIG)], OperatorSettings(mig_strategy="single"))
    assert values["mig"]["strategy"] == "single"
    assert config(values, "mig7")["flags"] == {"migStrategy": "single"}
    with pytest.raises(GpuOperatorInputError, match="pools migmix have several"):
        gpu_operator_values([host("c", MIG_MIXED)], OperatorSettings(mig_strategy="single"))
    with pytest.raises(GpuOperatorInputError, match="is none, but pools mig7 use MIG"):
        gpu_operator_values([host("b", MIG)], OperatorSettings(mig_strategy="none"))


@pytest.mark.parametrize(
    ("pool", "labels"),
    [
        (FULL, {DEVICE_PLUGIN_LABEL: "train", MIG_CONFIG_LABEL: "all-disabled"}),
        (SLICED, {DEVICE_PLUGIN_LABEL: "infer", MIG_CONFIG_LABEL: "all-disabled"}),
        (MIG, {DEVICE_PLUGIN_LABEL: "mig7", MIG_CONFIG_LABEL: "mig7"}),
    ],
)
def test_node_labels_select_the_pools_configs(pool: dict[str, Any], labels: dict[str, str]) -> None:
    assert operator_node_labels(pool) == labels
    values = gpu_operator_values([host("a", pool)], OperatorSettings())
    assert labels[DEVICE_PLUGIN_LABEL] in values["devicePlugin"]["config"]["data"]
    assert labels[MIG_CONFIG_LABEL] in mig_configs(values)


def test_a_pool_leaving_mig_gets_all_disabled_not_a_stale_label() -> None:
    # gpu-operator#701: the same node, its pool changed from mig to full-gpu.
    before = operator_node_labels({**MIG, "name": "p"})
    after = operator_node_labels({**FULL, "name": "p"})
    assert before[MIG_CONFIG_LABEL] == "p"
    assert after[MIG_CONFIG_LABEL] == "all-disabled"
    assert set(before) == set(after)  # same keys: the label is changed, never left behind


def test_operator_driver_beside_a_host_driver_is_refused_naming_pool_and_hosts() -> None:
    hosts = [host("t1", FULL), host("t2", FULL), host("i1", SLICED, driver=False)]
    with pytest.raises(GpuOperatorInputError) as excinfo:
        gpu_operator_values(hosts, OperatorSettings(driver="true"))
    message = str(excinfo.value)
    assert "gpu_operator_driver_enabled is true, but gpurack installed the NVIDIA driver" in message
    assert "pool train: t1, t2" in message
    assert "i1" not in message.split("cannot load", maxsplit=1)[0]


def test_operator_toolkit_beside_a_host_toolkit_is_refused() -> None:
    with pytest.raises(GpuOperatorInputError, match=r"gpu_operator_toolkit_enabled is true.*pool train: a"):
        gpu_operator_values([host("a", FULL)], OperatorSettings(toolkit="true"))


def test_disabled_where_nothing_else_installs_it_is_refused() -> None:
    with pytest.raises(
        GpuOperatorInputError, match=r"driver_enabled is false, but nothing installs.*pool train: a"
    ):
        gpu_operator_values([host("a", FULL, driver=False)], OperatorSettings(driver="false"))


def test_pools_that_disagree_on_the_driver_are_refused_naming_both_sides() -> None:
    with pytest.raises(GpuOperatorInputError) as excinfo:
        gpu_operator_values([host("a", FULL), host("b", SLICED, driver=False)], OperatorSettings())
    assert (
        "installed the NVIDIA driver on pool train: a and leaves it to the GPU Operator on pool infer: b"
        in str(excinfo.value)
    )


def test_forced_settings_that_match_the_hosts_are_accepted() -> None:
    values = gpu_operator_values([host("a", FULL)], OperatorSettings(driver="false", toolkit="false"))
    assert (values["driver"]["enabled"], values["toolkit"]["enabled"]) == (False, False)


def test_every_problem_is_reported_at_once() -> None:
    bad = {**SLICED, "time_slicing": None}
    with pytest.raises(GpuOperatorInputError) as excinfo:
        gpu_operator_values([host("a", bad)], OperatorSettings(driver="true"))
    assert "pool infer: sharing: time-slicing needs pool.time_slicing.replicas" in str(excinfo.value)
    assert "gpu_operator_driver_enabled is true" in str(excinfo.value)


def test_hosts_of_one_pool_must_agree_and_reserved_names_are_refused() -> None:
    with pytest.raises(GpuOperatorInputError, match="pool infer: hosts a and b disagree"):
        gpu_operator_values(
            [host("a", SLICED), host("b", {**SLICED, "time_slicing": {"replicas": 2}})], OperatorSettings()
        )
    with pytest.raises(GpuOperatorInputError, match="pool name all-disabled is reserved"):
        gpu_operator_values([host("a", {**FULL, "name": "all-disabled"})], OperatorSettings())


@pytest.mark.parametrize(("crd", "expected"), [(True, True), (False, False)])
def test_service_monitor_only_with_the_prometheus_operator_crd(crd: bool, expected: bool) -> None:
    values = gpu_operator_values([host("a", FULL)], OperatorSettings(service_monitor_crd=crd))
    assert values["dcgmExporter"]["enabled"] is True
    assert values["dcgmExporter"]["serviceMonitor"]["enabled"] is expected


def test_no_service_monitor_without_the_exporter() -> None:
    values = gpu_operator_values(
        [host("a", FULL)], OperatorSettings(service_monitor_crd=True, dcgm_exporter=False)
    )
    assert values["dcgmExporter"] == {
        "enabled": False,
        "serviceMonitor": {"enabled": False, "additionalLabels": {}},
    }


def test_operands_tolerate_pool_taints_and_the_validating_taint() -> None:
    values = gpu_operator_values([host("a", FULL), host("b", SLICED)], OperatorSettings())
    tolerations = values["daemonsets"]["tolerations"]
    assert tolerations == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "gpurack.io/pool", "operator": "Exists"},
        {"key": "gpurack.io/validating", "operator": "Exists"},
    ]
    assert values["node-feature-discovery"]["worker"]["tolerations"][1:] == tolerations


def test_validator_skips_its_gpu_workload_by_default() -> None:
    values = gpu_operator_values([host("a", FULL)], OperatorSettings())
    assert values["validator"] == {"plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}}
    on = gpu_operator_values([host("a", FULL)], OperatorSettings(validator_workload=True))
    assert on["validator"]["plugin"]["env"][0]["value"] == "true"


def test_a_mirror_registry_rewrites_every_image_repository() -> None:
    values = gpu_operator_values([host("a", FULL)], OperatorSettings(registry="mirror.example:5000/"))
    assert values["driver"]["repository"] == "mirror.example:5000/nvidia"
    assert values["toolkit"]["repository"] == "mirror.example:5000/nvidia/k8s"
    assert values["dcgmExporter"]["repository"] == "mirror.example:5000/nvidia/k8s"
    assert values["migManager"]["repository"] == "mirror.example:5000/nvidia/cloud-native"
    assert (
        values["node-feature-discovery"]["image"]["repository"]
        == "mirror.example:5000/nfd/node-feature-discovery"
    )
    assert "nvcr.io" not in json.dumps(values)
    assert "repository" not in gpu_operator_values([host("a", FULL)], OperatorSettings())["driver"]


def test_extra_values_merge_last_but_cannot_flip_driver_or_toolkit() -> None:
    extra = {"dcgmExporter": {"serviceMonitor": {"interval": "30s"}}, "nfd": {"enabled": False}}
    values = gpu_operator_values([host("a", FULL)], OperatorSettings(extra_values=extra))
    assert values["dcgmExporter"]["serviceMonitor"] == {
        "enabled": False,
        "additionalLabels": {},
        "interval": "30s",
    }
    assert values["nfd"] == {"enabled": False}
    with pytest.raises(GpuOperatorInputError, match="set gpu_operator_driver_enabled instead"):
        gpu_operator_values([host("a", FULL)], OperatorSettings(extra_values={"driver": {"enabled": True}}))


def test_values_are_the_same_on_every_call() -> None:
    hosts = [host("b", MIG), host("a", FULL), host("c", SLICED)]
    first = json.dumps(gpu_operator_values(hosts, OperatorSettings()), sort_keys=True)
    assert json.dumps(gpu_operator_values(list(reversed(hosts)), OperatorSettings()), sort_keys=True) == first


def test_operator_hosts_read_the_roles_variables_with_their_defaults() -> None:
    hostvars: dict[str, dict[str, Any]] = {
        "a": {"gpurack_pool": FULL},
        "b": {
            "gpurack_pool": SLICED,
            "nvidia_driver_managed_by": "operator",
            "container_runtime_nvidia_enabled": "false",
        },
    }
    assert operator_hosts(hostvars, ["a", "b"]) == [
        host("a", FULL, driver=True, toolkit=True),
        host("b", SLICED, driver=False, toolkit=False),
    ]
    with pytest.raises(GpuOperatorInputError, match="host c is not in the inventory"):
        operator_hosts(hostvars, ["c"])
    with pytest.raises(GpuOperatorInputError, match="host a has no gpurack_pool"):
        operator_hosts({"a": {}}, ["a"])
    with pytest.raises(GpuOperatorInputError, match="nvidia_driver_managed_by must be host or operator"):
        operator_hosts({"a": {**hostvars["a"], "nvidia_driver_managed_by": "gpu-operator"}}, ["a"])


def test_the_fallbacks_are_the_roles_defaults() -> None:
    driver = yaml.safe_load((REPO / "roles/nvidia_driver/defaults/main.yml").read_text())
    runtime = yaml.safe_load((REPO / "roles/container_runtime/defaults/main.yml").read_text())
    assert driver["nvidia_driver_managed_by"] == DRIVER_OWNER_DEFAULT
    assert runtime["container_runtime_nvidia_enabled"] is HOST_TOOLKIT_DEFAULT


def test_settings_from_mapping_reads_ansible_booleans_and_refuses_unknowns() -> None:
    settings = settings_from_mapping(
        {"driver": True, "toolkit": "no", "service_monitor_crd": "yes", "registry": "m/"}
    )
    assert (settings.driver, settings.toolkit, settings.service_monitor_crd, settings.registry) == (
        "true",
        "false",
        True,
        "m",
    )
    assert settings_from_mapping({}) == OperatorSettings()
    with pytest.raises(GpuOperatorInputError, match="unknown GPU Operator settings drivr"):
        settings_from_mapping({"drivr": "auto"})
    with pytest.raises(
        GpuOperatorInputError, match="gpu_operator_driver_enabled must be one of auto, true, false"
    ):
        settings_from_mapping({"driver": "maybe"})
    with pytest.raises(GpuOperatorInputError, match="gpu_operator_mig_strategy must be one of"):
        settings_from_mapping({"mig_strategy": "both"})
    with pytest.raises(GpuOperatorInputError, match="must be mappings"):
        settings_from_mapping({"extra_values": ["x"]})
