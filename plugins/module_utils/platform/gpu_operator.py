# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The NVIDIA GPU Operator's Helm values from what gpurack did on the hosts (pure, stdlib only).

- A driver gpurack installed (nvidia_driver_managed_by: host) gives `driver.enabled: false`,
  the Container Toolkit it installed (container_runtime_nvidia_enabled) `toolkit.enabled:
  false`; the operator asked to install either beside gpurack's is refused, naming the hosts.
- Each pool's `sharing` becomes one named device-plugin config (time-slicing replicas, the
  MIG strategy) and, for MIG pools, one mig-parted config; the node labels
  `nvidia.com/device-plugin.config` and `nvidia.com/mig.config` select them per node (the
  operator's own mechanism), and a node whose pool stops using MIG gets `all-disabled`, the
  value that turns MIG off (gpu-operator#701), rather than a stale label.
- The DCGM exporter is on; its ServiceMonitor only where the Prometheus operator's CRD is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import VALIDATING_TAINT
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.sharing import (
    GPU_RESOURCE,
    mig_profiles,
    settings_errors,
    time_slicing,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import metadata, obj
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator_inputs import (
    CHART_TOLERATION,
    CONTROL_PLANE_TOLERATION,
    DEFAULT_CONFIG,
    DEVICE_PLUGIN_CONFIG_MAP,
    MIG_CONFIG_MAP,
    MIG_DISABLED,
    REPOSITORIES,
    GpuOperatorInputError,
    OperatorHost,
    OperatorSettings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import Site


def _by_pool(hosts: Sequence[OperatorHost]) -> str:
    pools: dict[str, list[str]] = {}
    for host in hosts:
        pools.setdefault(str(host.pool["name"]), []).append(host.name)
    return "; ".join(f"pool {pool}: {', '.join(sorted(names))}" for pool, names in sorted(pools.items()))


_COMPONENTS = {
    "driver": (
        "the NVIDIA driver",
        "nvidia_driver_managed_by: host",
        "The operator's driver container cannot load beside a host driver: leave gpu_operator_driver_enabled "
        "at auto (driver.enabled: false), or set nvidia_driver_managed_by: operator for these pools and "
        "remove their driver.",
    ),
    "toolkit": (
        "the NVIDIA Container Toolkit and containerd's nvidia runtime",
        "container_runtime_nvidia_enabled: true",
        "The operator's toolkit container would rewrite the runtime config the container_runtime role owns: "
        "leave gpu_operator_toolkit_enabled at auto (toolkit.enabled: false), or set "
        "container_runtime_nvidia_enabled: false for these pools.",
    ),
}


def _component_enabled(component: str, setting: str, hosts: Sequence[OperatorHost]) -> tuple[bool, list[str]]:
    """Whether the operator installs the driver/toolkit, and the errors of that choice."""
    what, host_says, fix = _COMPONENTS[component]
    on_host = [h for h in hosts if (h.host_driver if component == "driver" else h.host_toolkit)]
    by_operator = [h for h in hosts if h not in on_host]
    variable = f"gpu_operator_{component}_enabled"
    if setting == "true" and on_host:
        return True, [
            f"{variable} is true, but gpurack installed {what} ({host_says}) on {_by_pool(on_host)}. {fix}"
        ]
    if setting == "false" and by_operator:
        return False, [
            f"{variable} is false, but nothing installs {what} on {_by_pool(by_operator)}: gpurack leaves it "
            "to the GPU Operator there. Leave it at auto."
        ]
    if setting == "auto" and on_host and by_operator:
        return False, [
            f"{component}.enabled is one setting for the whole cluster, but gpurack installed {what} on "
            f"{_by_pool(on_host)} and leaves it to the GPU Operator on {_by_pool(by_operator)}: make the "
            "pools agree."
        ]
    return (not on_host) if setting == "auto" else setting == "true", []


def _pools(hosts: Sequence[OperatorHost]) -> tuple[dict[str, Mapping[str, Any]], list[str]]:
    """Each pool's definition by name, and an error for hosts of one pool that disagree on sharing."""
    pools: dict[str, Mapping[str, Any]] = {}
    first: dict[str, str] = {}
    errors = []
    for host in hosts:
        name = str(host.pool["name"])
        if name in (DEFAULT_CONFIG, MIG_DISABLED):
            errors.append(f"pool name {name} is reserved for the GPU Operator's default configs")
        pool = pools.setdefault(name, host.pool)
        first.setdefault(name, host.name)
        keys = ("sharing", "time_slicing", "mig", "taints")
        if any(pool.get(k) != host.pool.get(k) for k in keys):
            errors.append(
                f"pool {name}: hosts {first[name]} and {host.name} disagree on its sharing or taints"
            )
    return pools, sorted(set(errors))


def _mig_strategy(setting: str, pools: Mapping[str, Mapping[str, Any]]) -> tuple[str, list[str]]:
    mig_pools = {name: mig_profiles(pool) for name, pool in pools.items() if pool.get("sharing") == "mig"}
    if setting == "auto":
        return ("mixed" if mig_pools else "none"), []
    if setting == "none" and mig_pools:
        return setting, [
            f"gpu_operator_mig_strategy is none, but pools {', '.join(sorted(mig_pools))} use MIG"
        ]
    several = sorted(name for name, profiles in mig_pools.items() if len(profiles) > 1)
    if setting == "single" and several:
        return setting, [
            f"gpu_operator_mig_strategy single needs one MIG profile per pool; pools {', '.join(several)} "
            "have several (use mixed)"
        ]
    return setting, []


def _config_text(config: Mapping[str, Any]) -> str:
    # JSON is YAML: the device plugin and mig-parted read it, and module_utils has no YAML writer.
    return json.dumps(config, indent=2, sort_keys=True)


def device_plugin_config(pool: Mapping[str, Any], mig_strategy: str) -> dict[str, Any]:
    """The device plugin's config (format v1) for a node of `pool`."""
    sharing = pool.get("sharing")
    config: dict[str, Any] = {
        "version": "v1",
        "flags": {"migStrategy": mig_strategy if sharing == "mig" else "none"},
    }
    if sharing == "time-slicing":
        replicas, rename = time_slicing(pool)
        config["sharing"] = {
            "timeSlicing": {
                "renameByDefault": rename,
                "resources": [{"name": GPU_RESOURCE, "replicas": replicas}],
            }
        }
    return config


def mig_parted_config(pools: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """mig-parted's config: all-disabled plus one config per MIG pool (every GPU alike)."""
    configs: dict[str, Any] = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for name, pool in sorted(pools.items()):
        if pool.get("sharing") == "mig":
            configs[name] = [{"devices": "all", "mig-enabled": True, "mig-devices": mig_profiles(pool)}]
    return {"version": "v1", "mig-configs": configs}


def _tolerations(pools: Mapping[str, Mapping[str, Any]]) -> list[dict[str, str]]:
    """The chart's GPU toleration plus every pool taint key and gpurack.io/validating (any effect)."""
    keys = {
        str(t["key"]) for pool in pools.values() for t in pool.get("taints") or [] if isinstance(t, Mapping)
    }
    keys.add(VALIDATING_TAINT["key"])
    return [dict(CHART_TOLERATION)] + [{"key": key, "operator": "Exists"} for key in sorted(keys)]


def _set(values: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = values
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def _mirror(values: dict[str, Any], registry: str) -> None:
    """Point every image repository at `registry`, keeping each one's path below its registry host."""
    registry = registry.rstrip("/")
    for component, repository in REPOSITORIES.items():
        path = repository.split("/", 1)[1]
        if component == "node-feature-discovery.image":
            _set(values, "node-feature-discovery.image.repository", f"{registry}/{path}")
        else:
            _set(values, f"{component}.repository", f"{registry}/{path}")


def _base_values(
    pools: Mapping[str, Mapping[str, Any]], settings: OperatorSettings, strategy: str
) -> dict[str, Any]:
    data = {DEFAULT_CONFIG: _config_text(device_plugin_config({"sharing": "full-gpu"}, strategy))}
    data.update(
        {name: _config_text(device_plugin_config(pool, strategy)) for name, pool in sorted(pools.items())}
    )
    tolerations = _tolerations(pools)
    monitor = settings.dcgm_exporter and settings.service_monitor_crd
    workload = "true" if settings.validator_workload else "false"
    return {
        "mig": {"strategy": strategy},
        "devicePlugin": {
            "config": {
                "create": True,
                "name": DEVICE_PLUGIN_CONFIG_MAP,
                "default": DEFAULT_CONFIG,
                "data": data,
            }
        },
        "migManager": {
            "config": {
                "create": True,
                "name": MIG_CONFIG_MAP,
                "default": MIG_DISABLED,
                "data": {"config.yaml": _config_text(mig_parted_config(pools))},
            }
        },
        "dcgmExporter": {
            "enabled": settings.dcgm_exporter,
            "serviceMonitor": {"enabled": monitor, "additionalLabels": dict(settings.service_monitor_labels)},
        },
        # The plugin validator's workload would hold a GPU outside Kueue's quota; gpurack's own
        # validation (validate.yml) runs the GPU checks before a node takes work.
        "validator": {"plugin": {"env": [{"name": "WITH_WORKLOAD", "value": workload}]}},
        "daemonsets": {"tolerations": tolerations},
        "node-feature-discovery": {"worker": {"tolerations": [dict(CONTROL_PLANE_TOLERATION), *tolerations]}},
    }


def gpu_operator_values(hosts: Sequence[OperatorHost], settings: OperatorSettings) -> dict[str, Any]:
    """The GPU Operator chart's values for these GPU hosts.

    Raises:
        GpuOperatorInputError: every problem at once: the operator asked to install a driver
            or toolkit gpurack installed (naming pools and hosts), pools that disagree, a
            sharing mode without its settings, a MIG strategy the pools cannot take.
    """
    pools, errors = _pools(hosts)
    for name, pool in sorted(pools.items()):
        errors += [f"pool {name}: {error}" for error in settings_errors(pool)]
    driver, driver_errors = _component_enabled("driver", settings.driver, hosts)
    toolkit, toolkit_errors = _component_enabled("toolkit", settings.toolkit, hosts)
    errors += driver_errors + toolkit_errors
    if not errors:
        strategy, errors = _mig_strategy(settings.mig_strategy, pools)
    if errors:
        raise GpuOperatorInputError("; ".join(errors))
    values = _base_values(pools, settings, strategy)
    values = {"driver": {"enabled": driver}, "toolkit": {"enabled": toolkit}, **values}
    if settings.registry:
        _mirror(values, settings.registry)
    _merge(values, settings.extra_values)
    for component, wanted in (("driver", driver), ("toolkit", toolkit)):
        if values[component].get("enabled") != wanted:
            raise GpuOperatorInputError(
                f"gpu_operator_values_extra sets {component}.enabled; "
                f"set gpu_operator_{component}_enabled instead"
            )
    return values


def gpu_operator_objects(site: Site) -> list[dict[str, Any]]:
    """The gpu_operator section: the operator's namespace (the chart itself is installed by helm).

    Its operands (driver, toolkit, device plugin, DCGM) are privileged, so the namespace
    enforces the privileged Pod Security level.
    """
    privileged = {"pod-security.kubernetes.io/enforce": "privileged"}
    return [obj("v1", "Namespace", metadata(site.gpu_operator_namespace, **privileged))]
