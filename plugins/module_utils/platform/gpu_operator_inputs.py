# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The GPU Operator's inputs: what gpurack did on each host (the driver and toolkit owners), the
operator settings from inventory, and the node labels that select a pool's configs (pure, stdlib only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.sharing import (
    GPU_RESOURCE,
)

DEVICE_PLUGIN_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_DISABLED = "all-disabled"
# The device-plugin config of a GPU node no pool's label selects (full GPUs).
DEFAULT_CONFIG = "gpurack-default"
DEVICE_PLUGIN_CONFIG_MAP = "gpurack-device-plugin-config"
MIG_CONFIG_MAP = "gpurack-mig-parted-config"
# The role defaults these hostvars fall back to (roles/nvidia_driver, roles/container_runtime).
DRIVER_OWNER_DEFAULT = "host"
HOST_TOOLKIT_DEFAULT = True
CHOICES = ("auto", "true", "false")
MIG_STRATEGY_CHOICES = ("auto", "none", "single", "mixed")
# The chart's image repositories (gpu-operator v26.x values.yaml), rewritten onto a mirror.
REPOSITORIES = {
    "operator": "nvcr.io/nvidia",
    "validator": "nvcr.io/nvidia",
    "driver": "nvcr.io/nvidia",
    "driver.manager": "nvcr.io/nvidia/cloud-native",
    "toolkit": "nvcr.io/nvidia/k8s",
    "devicePlugin": "nvcr.io/nvidia",
    "dcgm": "nvcr.io/nvidia/cloud-native",
    "dcgmExporter": "nvcr.io/nvidia/k8s",
    "gfd": "nvcr.io/nvidia",
    "migManager": "nvcr.io/nvidia/cloud-native",
    "nodeStatusExporter": "nvcr.io/nvidia",
    "gds": "nvcr.io/nvidia/cloud-native",
    "gdrcopy": "nvcr.io/nvidia/cloud-native",
    "vfioManager": "nvcr.io/nvidia/cloud-native",
    "vfioManager.driverManager": "nvcr.io/nvidia/cloud-native",
    "sandboxDevicePlugin": "nvcr.io/nvidia",
    "ccManager": "nvcr.io/nvidia/cloud-native",
    "node-feature-discovery.image": "registry.k8s.io/nfd/node-feature-discovery",
}
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
CHART_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}


class GpuOperatorInputError(ValueError):
    """The inventory or the role's settings cannot make consistent GPU Operator values."""


@dataclass(frozen=True, slots=True)
class OperatorHost:
    """One GPU host: its pool and whether gpurack installed the driver and toolkit on it."""

    name: str
    pool: Mapping[str, Any]
    host_driver: bool
    host_toolkit: bool


@dataclass(frozen=True, slots=True)
class OperatorSettings:
    """The role's choices (gpu_operator_*); `driver`/`toolkit` are auto, true or false."""

    driver: str = "auto"
    toolkit: str = "auto"
    mig_strategy: str = "auto"
    service_monitor_crd: bool = False
    dcgm_exporter: bool = True
    validator_workload: bool = False
    registry: str = ""
    service_monitor_labels: Mapping[str, str] = field(default_factory=dict)
    extra_values: Mapping[str, Any] = field(default_factory=dict)


def as_bool(value: object, what: str) -> bool:
    """`value` as Ansible reads a boolean (true/yes/on/1, false/no/off/0).

    Raises:
        GpuOperatorInputError: it is none of those.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise GpuOperatorInputError(f"{what} must be true or false, got {value!r}")


def _choice(value: object, what: str, choices: Sequence[str]) -> str:
    text = str(value).strip().lower()
    if isinstance(value, bool) or text in _TRUE or text in _FALSE:
        text = str(as_bool(value, what)).lower()
    if text not in choices:
        raise GpuOperatorInputError(f"{what} must be one of {', '.join(choices)}, got {value!r}")
    return text


def settings_from_mapping(raw: Mapping[str, Any]) -> OperatorSettings:
    """The role's settings dict (keys as OperatorSettings' fields) as OperatorSettings.

    Raises:
        GpuOperatorInputError: an unknown key or a value of the wrong kind.
    """
    known = OperatorSettings.__slots__
    if unknown := sorted(str(k) for k in raw if k not in known):
        raise GpuOperatorInputError(
            f"unknown GPU Operator settings {', '.join(unknown)}; known: {', '.join(known)}"
        )
    default = OperatorSettings()
    labels, extra = raw.get("service_monitor_labels") or {}, raw.get("extra_values") or {}
    if not isinstance(labels, Mapping) or not isinstance(extra, Mapping):
        raise GpuOperatorInputError("service_monitor_labels and extra_values must be mappings")
    return OperatorSettings(
        driver=_choice(raw.get("driver", default.driver), "gpu_operator_driver_enabled", CHOICES),
        toolkit=_choice(raw.get("toolkit", default.toolkit), "gpu_operator_toolkit_enabled", CHOICES),
        mig_strategy=_choice(
            raw.get("mig_strategy", default.mig_strategy), "gpu_operator_mig_strategy", MIG_STRATEGY_CHOICES
        ),
        service_monitor_crd=as_bool(raw.get("service_monitor_crd", False), "service_monitor_crd"),
        dcgm_exporter=as_bool(raw.get("dcgm_exporter", True), "gpu_operator_dcgm_exporter_enabled"),
        validator_workload=as_bool(raw.get("validator_workload", False), "gpu_operator_validator_workload"),
        registry=str(raw.get("registry") or "").rstrip("/"),
        service_monitor_labels={str(k): str(v) for k, v in labels.items()},
        extra_values=dict(extra),
    )


def operator_hosts(hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str]) -> list[OperatorHost]:
    """The GPU hosts as OperatorHost, from their inventory variables (role defaults where unset).

    Raises:
        GpuOperatorInputError: a host is not in hostvars, has no gpurack_pool, or an
            ownership variable has a value the roles would refuse.
    """
    result = []
    for host in hosts:
        if host not in hostvars:
            raise GpuOperatorInputError(f"host {host} is not in the inventory (hostvars)")
        variables = hostvars[host]
        pool = variables.get("gpurack_pool")
        if not isinstance(pool, Mapping) or not pool.get("name"):
            raise GpuOperatorInputError(f"host {host} has no gpurack_pool with a name")
        owner = str(variables.get("nvidia_driver_managed_by", DRIVER_OWNER_DEFAULT))
        if owner not in ("host", "operator"):
            raise GpuOperatorInputError(
                f"host {host}: nvidia_driver_managed_by must be host or operator, got {owner!r}"
            )
        toolkit = variables.get("container_runtime_nvidia_enabled", HOST_TOOLKIT_DEFAULT)
        result.append(
            OperatorHost(
                name=str(host),
                pool=pool,
                host_driver=owner == "host",
                host_toolkit=as_bool(toolkit, f"container_runtime_nvidia_enabled of {host}"),
            )
        )
    return result


def operator_node_labels(pool: Mapping[str, Any]) -> dict[str, str]:
    """The labels that select a node's device-plugin and MIG configs: its pool's, or all-disabled."""
    name = str(pool["name"])
    return {
        DEVICE_PLUGIN_LABEL: name,
        MIG_CONFIG_LABEL: name if pool.get("sharing") == "mig" else MIG_DISABLED,
    }
