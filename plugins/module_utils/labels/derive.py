# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Node-pool labels and taints derived from facts and the pool (pure, stdlib only).

Hardware labels come only from facts, so a label cannot claim hardware the node lacks;
the pool supplies the name, workload and sharing mode. Every key and value is checked
against Kubernetes label syntax before it leaves this module.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import resolve_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.sharing import (
    SHARING_KEYS,
    sharing_errors,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import (
    LABEL_VALUE_MAX,
    dns_label_error,
    is_label_value,
    label_key_syntax_error,
)

PREFIX = "gpurack.io/"
# Every key a pool (gpurack_pool) may have: anything else is refused, so a misspelt
# `wrkload` is an error instead of a silently ignored key.
# model_cache: where an inference pool's nodes keep models and how much (platform/serving.py checks it).
# allocation: how pods get the pool's GPUs (ALLOCATIONS; platform/dra.py renders a dra pool's objects).
POOL_KEYS = (
    "name",
    "workload",
    "sharing",
    "labels",
    "taints",
    "cost",
    "min_available",
    "model_cache",
    "allocation",
    *SHARING_KEYS,
)
# A pool's price (`gpurack_pool.cost`), for `gpurack cost`: per GPU-hour, in the site's currency.
COST_KEYS = ("gpu_hour",)
TAINT_KEYS = ("key", "value", "effect")
WORKLOADS = ("distributed-training", "inference", "batch")
SHARING = ("full-gpu", "mig", "time-slicing")
# device-plugin (the default): the extended resource nvidia.com/gpu; dra: a ResourceClaim of the
# pool's DeviceClass (docs/dra.md).
ALLOCATIONS = ("device-plugin", "dra")
DEFAULT_ALLOCATION = "device-plugin"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
VALIDATING_TAINT = {"key": f"{PREFIX}validating", "value": "", "effect": "NoSchedule"}
DERIVED_KEYS = tuple(
    f"{PREFIX}{k}" for k in ("pool", "accelerator", "topology", "fabric", "workload", "sharing")
)

_NV_LINK = re.compile(r"^NV\d+$")


class LabelError(ValueError):
    """A label, taint or pool definition is invalid; the message says which and why."""


def _restricted(prefix: str) -> bool:
    return any(prefix == d or prefix.endswith(f".{d}") for d in ("kubernetes.io", "k8s.io"))


def label_key_error(key: object, *, allow_restricted: bool = False) -> str | None:
    """Why `key` is not a usable label key, or None when it is: Kubernetes' syntax
    (_k8s_names), and none of Kubernetes' own prefixes unless `allow_restricted`."""
    if err := label_key_syntax_error(key):
        return err
    prefix = str(key).rpartition("/")[0]
    if prefix and not allow_restricted and _restricted(prefix):
        if prefix == "node-role.kubernetes.io":
            return f"label key {key!r}: node roles are applied from the controller, not by the pool"
        return f"label key {key!r}: the kubernetes.io and k8s.io namespaces are reserved for Kubernetes"
    return None


def label_value_error(value: object) -> str | None:
    """Why `value` is not a valid label value, or None when it is (empty is valid)."""
    if not isinstance(value, str):
        return f"label value {value!r} must be a string"
    if not is_label_value(value):
        return (
            f"label value {value!r} must be empty or at most {LABEL_VALUE_MAX} characters of "
            "[A-Za-z0-9-_.], starting and ending with a letter or digit"
        )
    return None


def label_errors(labels: object, *, allow_restricted: bool = False) -> list[str]:
    """Every problem with a labels mapping; [] when all keys and values are valid."""
    if not isinstance(labels, Mapping):
        return [f"labels must be a mapping of key to value, got {type(labels).__name__}"]
    errors: list[str] = []
    for key, value in labels.items():
        if err := label_key_error(key, allow_restricted=allow_restricted):
            errors.append(err)
        if err := label_value_error(value):
            errors.append(f"{key}: {err}")
    return errors


def _gpus(gpu_facts: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if not gpu_facts.get("available", True):
        return []
    gpus = gpu_facts.get("gpus") or []
    return [g for g in gpus if isinstance(g, Mapping)]


def accelerator_label(gpu_facts: Mapping[str, Any]) -> str:
    """`h200-141gb` for the node's GPU model, `mixed` for several models, `none` without GPUs."""
    slugs = {resolve_model(g.get("name"), g.get("pci_device_id")).slug for g in _gpus(gpu_facts)}
    if not slugs:
        return "none"
    return slugs.pop() if len(slugs) == 1 else "mixed"


def _has_nvlink(gpu_facts: Mapping[str, Any]) -> bool:
    if gpu_facts.get("nvswitch") is True:
        return True
    for gpu in _gpus(gpu_facts):
        if any(isinstance(link, Mapping) and link.get("active") for link in gpu.get("nvlinks") or []):
            return True
    topology = gpu_facts.get("topology")
    if isinstance(topology, Mapping):
        for src, row in (topology.get("links") or {}).items():
            if not str(src).startswith("GPU") or not isinstance(row, Mapping):
                continue
            if any(str(dst).startswith("GPU") and _NV_LINK.match(str(v)) for dst, v in row.items()):
                return True
    return False


def topology_label(gpu_facts: Mapping[str, Any]) -> str:
    """`<count>gpu-<form>-<nvlink|pcie|single>`, e.g. `8gpu-sxm-nvlink`; `none` without GPUs.

    NVLink counts when a link is active, topo -m shows NV# between GPUs, or the GPUs sit
    behind NVSwitches (`nvswitch: true`).
    """
    gpus = _gpus(gpu_facts)
    if not gpus:
        return "none"
    forms = Counter(resolve_model(g.get("name"), g.get("pci_device_id")).form_factor for g in gpus)
    form = forms.most_common(1)[0][0] if len(forms) == 1 else "mixed"
    interconnect = "nvlink" if _has_nvlink(gpu_facts) else ("pcie" if len(gpus) > 1 else "single")
    return f"{len(gpus)}gpu-{form}-{interconnect}"


def fabric_label(nic_facts: Mapping[str, Any] | None) -> str:
    """`infiniband`, `roce`, `ethernet` or `none`, from RDMA ports and net interfaces."""
    if not isinstance(nic_facts, Mapping) or not nic_facts.get("available", True):
        return "none"
    ports = [p for p in nic_facts.get("rdma") or [] if isinstance(p, Mapping)]
    if any(str(p.get("link_layer", "")).lower() == "infiniband" for p in ports):
        return "infiniband"
    if ports:
        return "roce"
    nets = [n for n in nic_facts.get("net") or [] if isinstance(n, Mapping) and n.get("name") != "lo"]
    return "ethernet" if nets else "none"


def unknown_key_errors(where: str, given: Mapping[Any, Any], known: tuple[str, ...]) -> list[str]:
    """One error per key of `given` not in `known`, with the nearest known key when close."""
    errors = []
    for key in given:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        errors.append(f"{where}: unknown key {key!r}{hint}; known keys: {', '.join(known)}")
    return errors


def _pool_name_errors(pool: Mapping[Any, Any]) -> list[str]:
    error = dns_label_error("pool.name", pool.get("name"), "h200-train-a")
    return [] if error is None else [error]


def _pool_label_errors(extra: object) -> list[str]:
    if extra is None:
        return []
    errors = [f"pool.labels: {e}" for e in label_errors(extra)]
    if isinstance(extra, Mapping):
        errors.extend(
            f"pool.labels: {k!r} is derived from facts and the pool; it cannot be set by hand"
            for k in extra
            if k in DERIVED_KEYS
        )
    return errors


def _taint_errors(raw: object) -> list[str]:
    """Every problem with a pool's taints list; [] when each is a valid {key, value, effect}."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [f"pool.taints must be a list of {{key, value, effect}}, got {type(raw).__name__}"]
    errors: list[str] = []
    seen: dict[tuple[object, object], int] = {}
    for i, taint in enumerate(raw):
        where = f"pool.taints[{i}]"
        if not isinstance(taint, Mapping):
            errors.append(f"{where} must be a mapping with key, value and effect")
            continue
        unknown = sorted(str(k) for k in set(taint) - set(TAINT_KEYS))
        if unknown:
            errors.append(f"{where}: unknown fields {', '.join(unknown)}")
        value = "" if taint.get("value") is None else taint.get("value")
        if err := label_key_error(taint.get("key")):
            errors.append(f"{where}: {err.replace('label key', 'taint key')}")
        if err := label_value_error(value):
            errors.append(f"{where}: {err.replace('label value', 'taint value')}")
        effect = taint.get("effect")
        if effect not in TAINT_EFFECTS:
            errors.append(f"{where}: effect must be one of {', '.join(TAINT_EFFECTS)}; got {effect!r}")
        identity = (str(taint.get("key")), str(effect))
        if identity in seen:
            errors.append(f"{where}: same key and effect as pool.taints[{seen[identity]}]")
        seen.setdefault(identity, i)
    return errors


def pool_errors(pool: object) -> list[str]:
    """Every problem with a pool definition (`gpurack_pool`); [] when it is valid.

    The one set of pool rules: preflight checks them before any change, kubeadm_join and
    node_labels again before they label, the CLI for `--pool`. Each message names the key.
    """
    if not isinstance(pool, Mapping):
        return [f"pool must be a mapping with name, workload and sharing, got {type(pool).__name__}"]
    errors = unknown_key_errors("pool", pool, POOL_KEYS)
    errors.extend(_pool_name_errors(pool))
    for field, allowed in (("workload", WORKLOADS), ("sharing", SHARING)):
        if pool.get(field) not in allowed:
            errors.append(f"pool.{field} must be one of {', '.join(allowed)}; got {pool.get(field)!r}")
    errors.extend(_pool_label_errors(pool.get("labels")))
    errors.extend(_taint_errors(pool.get("taints")))
    errors.extend(_cost_errors(pool.get("cost")))
    floor = pool.get("min_available", 0)
    if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
        errors.append(f"pool.min_available must be a whole number of nodes of at least 0, got {floor!r}")
    errors.extend(sharing_errors(pool))
    errors.extend(_allocation_errors(pool))
    return errors


def _allocation_errors(pool: Mapping[Any, Any]) -> list[str]:
    """pool.allocation, when given: one of ALLOCATIONS; dra only on a full-gpu training or batch pool."""
    allocation = pool.get("allocation", DEFAULT_ALLOCATION)
    if allocation not in ALLOCATIONS:
        return [f"pool.allocation must be one of {', '.join(ALLOCATIONS)}; got {allocation!r}"]
    if allocation != "dra":
        return []
    errors = []
    # gpurack's MIG and time-slicing settings configure NVIDIA's device plugin; a DRA driver
    # shares devices its own way (its claims' config), which gpurack does not render.
    if pool.get("sharing") not in (None, "full-gpu"):
        errors.append(f"pool.allocation dra needs sharing full-gpu, got {pool.get('sharing')!r}")
    # The inference services' Deployments ask for nvidia.com/gpu, which a DRA pool's nodes lack.
    if pool.get("workload") == "inference":
        errors.append(
            "pool.allocation dra is for training and batch pools: inference services ask for nvidia.com/gpu"
        )
    return errors


def _cost_errors(cost: object) -> list[str]:
    """pool.cost, when given: {gpu_hour: a number of at least 0}."""
    if cost is None:
        return []
    if not isinstance(cost, Mapping):
        return [f"pool.cost must be a mapping like {{gpu_hour: 2.5}}, got {type(cost).__name__}"]
    errors = unknown_key_errors("pool.cost", cost, COST_KEYS)
    price = cost.get("gpu_hour")
    if isinstance(price, bool) or not isinstance(price, (int, float)) or not 0 <= price < float("inf"):
        errors.append(f"pool.cost.gpu_hour must be a price of at least 0 per GPU-hour, got {price!r}")
    return errors


def check_pool(pool: object) -> None:
    """Raise LabelError with every problem of `pool` (see pool_errors) joined by '; '."""
    if errors := pool_errors(pool):
        raise LabelError("; ".join(errors))


def node_labels(facts: Mapping[str, Any], pool: Mapping[str, Any]) -> dict[str, str]:
    """The `gpurack.io/*` labels of a node from its facts and its pool.

    Raises:
        LabelError: the pool is invalid or a resulting label breaks Kubernetes syntax.
    """
    if not isinstance(facts, Mapping):
        raise LabelError(
            f"facts must be a mapping with gpurack_gpu and gpurack_nic, got {type(facts).__name__}"
        )
    check_pool(pool)
    gpu = facts.get("gpurack_gpu")
    gpu_facts: Mapping[str, Any] = gpu if isinstance(gpu, Mapping) else {}
    labels = {
        f"{PREFIX}pool": str(pool["name"]),
        f"{PREFIX}accelerator": accelerator_label(gpu_facts),
        f"{PREFIX}topology": topology_label(gpu_facts),
        f"{PREFIX}fabric": fabric_label(facts.get("gpurack_nic")),
        f"{PREFIX}workload": str(pool["workload"]),
        f"{PREFIX}sharing": str(pool["sharing"]),
    }
    labels.update({str(k): str(v) for k, v in (pool.get("labels") or {}).items()})
    if errors := label_errors(labels):
        raise LabelError("; ".join(errors))
    return labels


def pool_taints(pool: Mapping[str, Any]) -> list[dict[str, str]]:
    """The pool's taints ({key, value, effect}) plus `gpurack.io/validating:NoSchedule`.

    Only the taints are checked here (pool_errors checks the whole pool).

    Raises:
        LabelError: a taint is not a mapping or has a bad key, value or effect.
    """
    if not isinstance(pool, Mapping):
        raise LabelError(f"pool must be a mapping, got {type(pool).__name__}")
    raw = pool.get("taints") or []
    if errors := _taint_errors(raw):
        raise LabelError("; ".join(errors))
    taints = [
        {
            "key": str(t["key"]),
            "value": "" if t.get("value") is None else str(t["value"]),
            "effect": str(t["effect"]),
        }
        for t in raw
    ]
    if not any(t["key"] == VALIDATING_TAINT["key"] for t in taints):
        taints.append(dict(VALIDATING_TAINT))
    return taints
