# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""nvidia-smi -q, XML (`-x`) or text: one schema-shaped entry per GPU (`gpurack_gpu.gpus[]`).

Stdlib only. The `parse_*` functions take the raw text of one command and raise `FactsError`
naming the command and the problem when the output is malformed or truncated.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import plausible
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_values import (
    device_id,
    known,
    normalize_bus_id,
    to_bool,
    to_int,
)

CMD_XML = ("nvidia-smi", "-q", "-x")
CMD_TEXT = ("nvidia-smi", "-q")

SRC_XML = "nvidia-smi -q -x"
SRC_TEXT = "nvidia-smi -q"

# Fabric manager states that only exist on NVSwitch systems (HGX, NVL): the GPU has (or is
# getting) a place in the NVLink fabric.
_FABRIC_REGISTERED = frozenset({"Completed", "In Progress"})

# XML tag suffixes whose text (`nvidia-smi -q`) spelling differs; both forms end up the same.
REASON_ALIASES = {"gpu_idle": "idle", "display_clocks_setting": "display_clock_setting"}

# One GPU, read from either nvidia-smi format: field -> raw string (None when absent), plus
# the leaves of the ECC error counters and the clocks event reasons.
Raw = dict[str, Any]


# ---------------------------------------------------------------------------------------
# shared GPU builder (both nvidia-smi formats)


def _sum_counters(leaves: Iterable[tuple[str, str]], wanted: str, source: str) -> int | None:
    """Total of the counters in `leaves` ((snake path, value)) that are `wanted`.

    Counters come either as one Single Bit / Double Bit `total` (older drivers) or split by
    memory (SRAM/DRAM correctable and uncorrectable, 535 and later); N/A counters are skipped
    and all-N/A gives None.
    """
    leaves = list(leaves)
    older = {"single_bit": "corrected", "double_bit": "uncorrected"}
    picked: list[str] = []
    if any(path.startswith(tuple(older)) for path, _value in leaves):
        picked = [v for p, v in leaves if p.endswith("total") and older.get(p.split("/")[0]) == wanted]
    else:
        for path, value in leaves:
            leaf = path.rsplit("/", 1)[-1]
            if "uncorrectable" in leaf:
                kind = "uncorrected"
            elif "correctable" in leaf:
                kind = "corrected"
            else:
                continue
            if kind == wanted:
                picked.append(value)
    numbers = [_count(v, source, f"ECC counter {wanted}") for v in picked]
    known = [n for n in numbers if n is not None]
    return plausible.counter(sum(known), source, f"ECC counter {wanted} total") if known else None


def _count(value: str | None, source: str, what: str) -> int | None:
    """A counter's value: a number (never negative nor above 64 bits) or None for N/A."""
    return plausible.counter(to_int(value, source, what), source, what)


def _pcie(raw: Raw, where: str) -> dict[str, int | None]:
    """The GPU's PCIe link; `gen_max` is the lower of the device's and the host slot's maximum."""
    gens = {
        key: plausible.pcie_gen(to_int(raw.get(key), where, what), where, what)
        for key, what in (
            ("gen_current", "current PCIe generation"),
            ("gen_max", "max PCIe generation"),
            ("gen_max_device", "device max PCIe generation"),
            ("gen_max_host", "host max PCIe generation"),
        )
    }
    widths = {
        key: plausible.link_width(to_int(raw.get(key), where, what), where, what)
        for key, what in (("width_current", "current link width"), ("width_max", "max link width"))
    }
    plausible.not_above(gens["gen_current"], gens["gen_max"], where, "current PCIe generation")
    plausible.not_above(widths["width_current"], widths["width_max"], where, "current link width")
    return {**gens, **widths}


def _remapped_rows(remapped: dict[str, Any] | None, where: str) -> dict[str, Any] | None:
    """The row-remapper's counters and flags; None when nvidia-smi reports none of them."""
    if remapped is None:
        return None
    rows = {
        "correctable": _count(remapped.get("correctable"), where, "remapped rows correctable"),
        "uncorrectable": _count(remapped.get("uncorrectable"), where, "remapped rows uncorrectable"),
        "pending": to_bool(remapped.get("pending"), where, "remapped rows pending"),
        "failure": to_bool(remapped.get("failure"), where, "remapped rows failure"),
    }
    return None if all(v is None for v in rows.values()) else rows


def _require(raw: Raw, where: str) -> None:
    """Refuse a GPU section without the fields every GPU has (a truncated or foreign output)."""
    if known(raw.get("name")) is None:
        raise FactsError(f"{where} has no Product Name (truncated or not nvidia-smi -q output?)")
    if known(raw.get("uuid")) is None:
        raise FactsError(f"{where} has no GPU UUID (truncated output?)")
    if raw.get("memory_total") is None:
        raise FactsError(f"{where} has no FB Memory Usage total (truncated output?)")


def _build_gpu(index: int, raw: Raw, source: str) -> dict[str, Any]:
    """One `gpus[]` entry of the schema from the raw fields of either nvidia-smi format."""
    where = f"{source}: GPU {raw.get('bus_id') or index}"
    _require(raw, where)
    ecc_leaves: dict[str, list[tuple[str, str]]] = raw["ecc_leaves"]
    reasons: list[tuple[str, str]] = raw["reasons"]
    bus_id = known(raw.get("bus_id"))
    return {
        "index": index,
        "name": known(raw["name"]),
        "architecture": known(raw.get("architecture")),
        "uuid": known(raw.get("uuid")),
        "serial": known(raw.get("serial")),
        "bus_id": normalize_bus_id(bus_id) if bus_id else None,
        "pci_device_id": device_id(raw.get("pci_device_id")),
        "vbios": known(raw.get("vbios")),
        "memory_total_mib": plausible.memory_mib(
            to_int(raw.get("memory_total"), where, "FB memory total"), where, "FB memory total"
        ),
        "pcie": _pcie(raw, where),
        "pcie_replays": {
            "since_reset": _count(raw.get("replays"), where, "PCIe replays since reset"),
            "rollovers": _count(raw.get("replay_rollovers"), where, "PCIe replay rollovers"),
        },
        "persistence_mode": to_bool(raw.get("persistence"), where, "persistence mode"),
        "mig_mode": to_bool(raw.get("mig"), where, "MIG mode"),
        "mig_mode_pending": to_bool(raw.get("mig_pending"), where, "pending MIG mode"),
        "ecc_mode": to_bool(raw.get("ecc"), where, "ECC mode"),
        "ecc_errors": {
            f"{scope}_{kind}": _sum_counters(ecc_leaves.get(scope, []), kind, where)
            for scope in ("volatile", "aggregate")
            for kind in ("corrected", "uncorrected")
        },
        "remapped_rows": _remapped_rows(raw["remapped"], where),
        "retired_pages": {
            "single_bit": _count(raw.get("retired_single"), where, "retired pages single bit"),
            "double_bit": _count(raw.get("retired_double"), where, "retired pages double bit"),
            "pending": to_bool(raw.get("retired_pending"), where, "retired pages pending"),
        },
        "recovery_action": known(raw.get("recovery_action")),
        "clocks_event_reasons": [name for name, state in reasons if state.strip() == "Active"],
        "nvlinks": [],
        "nvlink_source": None,
        "numa_node": None,
        "cpu_affinity": None,
        "_fabric_state": known(raw.get("fabric_state")),
    }


def finish_gpus(
    driver: str | None, cuda: str | None, attached: str | None, raws: list[Raw], source: str
) -> dict[str, Any]:
    count = plausible.counter(to_int(attached, source, "Attached GPUs"), source, "Attached GPUs")
    if count is not None and count != len(raws):
        raise FactsError(
            f"{source}: 'Attached GPUs: {count}' but {len(raws)} GPU sections (truncated output?)"
        )
    gpus = [_build_gpu(i, raw, source) for i, raw in enumerate(raws)]
    fabric = [gpu.pop("_fabric_state") for gpu in gpus]
    return {
        "driver_version": known(driver),
        "cuda_version": known(cuda),
        "count": len(gpus),
        "gpus": gpus,
        "nvswitch": any(state in _FABRIC_REGISTERED for state in fabric),
    }


# ---------------------------------------------------------------------------------------
# nvidia-smi -q -x

_XML_FIELDS = {
    "name": "product_name",
    "architecture": "product_architecture",
    "uuid": "uuid",
    "serial": "serial",
    "bus_id": "pci/pci_bus_id",
    "pci_device_id": "pci/pci_device_id",
    "vbios": "vbios_version",
    "memory_total": "fb_memory_usage/total",
    "gen_current": "pci/pci_gpu_link_info/pcie_gen/current_link_gen",
    "gen_max": "pci/pci_gpu_link_info/pcie_gen/max_link_gen",
    # R5xx and later: the device's own maximum and the host slot's; max_link_gen is the lower.
    "gen_max_device": "pci/pci_gpu_link_info/pcie_gen/max_device_link_gen",
    "gen_max_host": "pci/pci_gpu_link_info/pcie_gen/max_host_link_gen",
    "width_current": "pci/pci_gpu_link_info/link_widths/current_link_width",
    "width_max": "pci/pci_gpu_link_info/link_widths/max_link_width",
    "replays": "pci/replay_counter",
    "replay_rollovers": "pci/replay_rollover_counter",
    "persistence": "persistence_mode",
    "mig": "mig_mode/current_mig",
    "mig_pending": "mig_mode/pending_mig",
    "ecc": "ecc_mode/current_ecc",
    "retired_single": "retired_pages/multiple_single_bit_retirement/retired_count",
    "retired_double": "retired_pages/double_bit_retirement/retired_count",
    "recovery_action": "gpu_recovery_action",
    "fabric_state": "fabric/state",
}
_XML_REMAPPED = {
    "correctable": "remapped_row_corr",
    "uncorrectable": "remapped_row_unc",
    "pending": "remapped_row_pending",
    "failure": "remapped_row_failure",
}


# ECC counters nest three deep; deeper is not nvidia-smi output (and would exhaust the stack).
_XML_MAX_DEPTH = 16


def _xml_leaves(element: ET.Element, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    if depth > _XML_MAX_DEPTH:
        raise FactsError(f"{SRC_XML}: {prefix[:80]!r} nests deeper than {_XML_MAX_DEPTH} elements")
    leaves: list[tuple[str, str]] = []
    for child in element:
        path = f"{prefix}{child.tag}"
        if len(child):
            leaves.extend(_xml_leaves(child, f"{path}/", depth + 1))
        else:
            leaves.append((path, (child.text or "").strip()))
    return leaves


def _xml_raw(gpu: ET.Element) -> Raw:
    raw: Raw = {field: gpu.findtext(path) for field, path in _XML_FIELDS.items()}
    if raw["bus_id"] is None:
        raw["bus_id"] = gpu.get("id")
    pending = gpu.findtext("retired_pages/pending_blacklist")
    raw["retired_pending"] = pending if known(pending) else gpu.findtext("retired_pages/pending_retirement")

    remapped = gpu.find("remapped_rows")
    raw["remapped"] = (
        {key: remapped.findtext(tag) for key, tag in _XML_REMAPPED.items()} if remapped is not None else None
    )
    raw["ecc_leaves"] = {
        scope: _xml_leaves(element)
        for scope in ("volatile", "aggregate")
        if (element := gpu.find(f"ecc_errors/{scope}")) is not None
    }
    # Drivers before 530 call them clocks_throttle_reasons.
    reasons = gpu.find("clocks_event_reasons")
    if reasons is None:
        reasons = gpu.find("clocks_throttle_reasons")
    raw["reasons"] = []
    for child in reasons if reasons is not None else []:
        name = re.sub(r"^clocks_(?:event|throttle)_reason_", "", child.tag)
        raw["reasons"].append((REASON_ALIASES.get(name, name), (child.text or "").strip()))
    return raw


def parse_nvidia_smi_xml(text: str) -> dict[str, Any]:
    """`nvidia-smi -q -x` -> {driver_version, cuda_version, count, gpus, nvswitch}.

    Raises:
        FactsError: the XML does not parse, is not an nvidia_smi_log, or is truncated.
    """
    refuse_long_numbers(text, SRC_XML)
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError as exc:
        raise FactsError(f"{SRC_XML}: XML does not parse ({exc})") from exc
    if root.tag != "nvidia_smi_log":
        raise FactsError(f"{SRC_XML}: root element is <{root.tag}>, expected <nvidia_smi_log>")
    raws = [_xml_raw(gpu) for gpu in root.findall("gpu")]
    return finish_gpus(
        root.findtext("driver_version"),
        root.findtext("cuda_version"),
        root.findtext("attached_gpus"),
        raws,
        SRC_XML,
    )
