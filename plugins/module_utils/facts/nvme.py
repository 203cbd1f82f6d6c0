# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""NVMe namespaces: `nvme list -o json` first, sys/class/block as fallback, `lsblk` for the OS disk.

Pure functions only (stdlib); `gather_nvme` builds `gpurack_nvme` as documented in
docs/facts.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError, excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView

NVME_LIST_ARGV: tuple[str, ...] = ("nvme", "list", "-o", "json")
LSBLK_ARGV: tuple[str, ...] = ("lsblk", "-J", "-O")
SYSFS_BLOCK = "sys/class/block"
# The one list of mountpoints whose disks hold the operating system: such a disk is reported
# `is_os_disk` here and is never planned for scratch or wiped (storage.scratch reads this too).
OS_MOUNTPOINTS = frozenset({"/", "/boot", "/boot/efi", "/usr", "/var"})

_NVME_LIST = "nvme list -o json"
# nvme0n1 is a namespace; nvme0n1p1 a partition and nvme0c0n1 a hidden multipath path.
_NAMESPACE = re.compile(r"^nvme\d+n(?P<nsid>\d+)$")
_SECTOR = 512  # sys/class/block/*/size counts 512-byte sectors whatever the LBA format


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FactsError(f"{what}: invalid JSON ({exc})") from exc
    except RecursionError as exc:
        raise FactsError(f"{what}: JSON nested too deeply") from exc


def _int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FactsError(f"{_NVME_LIST}: {what} is not an integer: {excerpt(value)}")
    try:
        return int(value)
    except ValueError as exc:
        raise FactsError(f"{_NVME_LIST}: {what} is not an integer: {excerpt(value)}") from exc


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value).strip() or None


def _disk(name: str, *, model: Any, serial: Any, firmware: Any, size: Any, nsid: Any) -> dict[str, Any]:
    match = _NAMESPACE.match(name)
    namespace = _int(nsid, f"{name} namespace id")
    if namespace is None and match:
        namespace = int(match.group("nsid"))
    return {
        "name": name,
        "model": _text(model),
        "serial": _text(serial),
        "firmware": _text(firmware),
        "size_bytes": _int(size, f"{name} PhysicalSize"),
        "namespace": namespace,
        "is_os_disk": None,
    }


def _flat_device(entry: dict[str, Any]) -> dict[str, Any]:
    # nvme-cli 1.x, and 2.x without --verbose: one object per namespace.
    path = entry.get("DevicePath")
    if not isinstance(path, str) or not path:
        raise FactsError(f"{_NVME_LIST}: device entry without DevicePath: {excerpt(entry)}")
    return _disk(
        path.rsplit("/", 1)[-1],
        model=entry.get("ModelNumber"),
        serial=entry.get("SerialNumber"),
        firmware=entry.get("Firmware"),
        size=entry.get("PhysicalSize"),
        nsid=entry.get("NameSpace"),
    )


def _nested_namespace(ns: dict[str, Any], ctrl: dict[str, Any]) -> dict[str, Any]:
    name = ns.get("NameSpace")
    if not isinstance(name, str) or not name:
        raise FactsError(f"{_NVME_LIST}: namespace entry without NameSpace: {excerpt(ns)}")
    return _disk(
        name,
        model=ctrl.get("ModelNumber"),
        serial=ctrl.get("SerialNumber"),
        firmware=ctrl.get("Firmware"),
        size=ns.get("PhysicalSize"),
        nsid=ns.get("NSID"),
    )


def _subsystem(subsys: dict[str, Any]) -> list[dict[str, Any]]:
    controllers = subsys.get("Controllers") or []
    if not isinstance(controllers, list):
        raise FactsError(f"{_NVME_LIST}: 'Controllers' of {excerpt(subsys.get('Subsystem'))} is not a list")
    disks = []
    for ctrl in controllers:
        for ns in ctrl.get("Namespaces") or []:
            disks.append(_nested_namespace(ns, ctrl))
    # Multipath (native NVMe multipath) lists shared namespaces at subsystem level; model and
    # serial are then the subsystem's, which every controller reports alike.
    first = controllers[0] if controllers else {}
    for ns in subsys.get("Namespaces") or []:
        disks.append(_nested_namespace(ns, first))
    return disks


def parse_nvme_list(text: str) -> list[dict[str, Any]]:
    """Namespaces of `nvme list -o json`, flat (1.x, 2.x plain) or nested (2.x --verbose).

    Raises:
        FactsError: invalid JSON, no 'Devices' list, or an entry without a device name.
    """
    refuse_long_numbers(text, _NVME_LIST)
    if not text.strip():
        # nvme-cli 1.x prints nothing at all when there are no NVMe devices.
        return []
    doc = _load_json(text, _NVME_LIST)
    if not isinstance(doc, dict) or not isinstance(doc.get("Devices"), list):
        raise FactsError(f"{_NVME_LIST}: expected an object with a 'Devices' list")
    disks: list[dict[str, Any]] = []
    for entry in doc["Devices"]:
        if not isinstance(entry, dict):
            raise FactsError(f"{_NVME_LIST}: device entry is not an object: {excerpt(entry)}")
        if "Subsystems" in entry:  # nvme-cli >= 2.4 --verbose: Devices[host] -> Subsystems
            for subsys in entry["Subsystems"] or []:
                disks.extend(_subsystem(subsys))
        elif "Controllers" in entry:  # nvme-cli 2.0-2.3 --verbose: Devices[subsystem]
            disks.extend(_subsystem(entry))
        else:
            disks.append(_flat_device(entry))
    return sorted(disks, key=lambda d: _natural(d["name"]))


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _holds_os(node: dict[str, Any]) -> bool:
    mounts = node.get("mountpoints")
    if not isinstance(mounts, list):  # lsblk < 2.37 has only "mountpoint"
        mounts = [node.get("mountpoint")]
    if any(m in OS_MOUNTPOINTS for m in mounts):
        return True
    return any(_holds_os(child) for child in node.get("children") or [] if isinstance(child, dict))


def parse_lsblk_os_disks(text: str) -> dict[str, bool]:
    """Top-level block devices of `lsblk -J -O` -> whether they (or a child) hold / or /boot.

    Raises:
        FactsError: invalid JSON or no 'blockdevices' list.
    """
    refuse_long_numbers(text, "lsblk -J -O")
    doc = _load_json(text, "lsblk -J -O")
    if not isinstance(doc, dict) or not isinstance(doc.get("blockdevices"), list):
        raise FactsError("lsblk -J -O: expected an object with a 'blockdevices' list")
    result = {}
    for dev in doc["blockdevices"]:
        name = dev.get("kname") or dev.get("name")
        if isinstance(name, str):
            result[name] = _holds_os(dev)
    return result


def read_sysfs_nvme(source: Source) -> list[dict[str, Any]]:
    """NVMe namespaces of sys/class/block (size from 512-byte sectors, ids from device/).

    Raises:
        FactsError: a size file is not an integer.
    """
    disks = []
    for name in source.listdir(SYSFS_BLOCK):
        if not _NAMESPACE.match(name):
            continue
        base = f"{SYSFS_BLOCK}/{name}"
        sectors = (source.read(f"{base}/size") or "").strip()
        try:
            size = int(sectors) * _SECTOR if sectors else None
        except ValueError as exc:
            raise FactsError(f"{base}/size: expected sectors, found {excerpt(sectors)}") from exc
        nsid = source.read(f"{base}/nsid")
        disks.append(
            _disk(
                name,
                model=source.read(f"{base}/device/model"),
                serial=source.read(f"{base}/device/serial"),
                firmware=source.read(f"{base}/device/firmware_rev"),
                size=size,
                nsid=nsid.strip() if nsid and nsid.strip() else None,
            )
        )
    return sorted(disks, key=lambda d: _natural(d["name"]))


def gather_nvme(source: Source) -> dict[str, Any]:
    """`gpurack_nvme` for one node.

    Raises:
        FactsError: nvme, lsblk or sysfs output is malformed.
    """
    out = source.run(NVME_LIST_ARGV)
    facts: dict[str, Any]
    if out.rc == 0:
        facts = {"available": True, "source": "nvme-list", "sources": [_NVME_LIST]}
        disks = parse_nvme_list(out.stdout)
    elif source.listdir(SYSFS_BLOCK):
        facts = {"available": True, "source": "sysfs", "sources": [SYSFS_BLOCK]}
        disks = read_sysfs_nvme(source)
    else:
        why = "nvme is not installed" if out.missing else f"nvme list failed (rc={out.rc})"
        return {
            "available": False,
            "reason": f"{why} and {SYSFS_BLOCK} is empty or absent",
            "source": None,
            "sources": [],
            "disks": [],
        }
    lsblk = source.run(LSBLK_ARGV)
    if lsblk.rc == 0:
        os_disks = parse_lsblk_os_disks(lsblk.stdout)
        facts["sources"].append("lsblk -J -O")
        for disk in disks:
            disk["is_os_disk"] = os_disks.get(disk["name"])
    facts["disks"] = disks
    return facts


# ---------------------------------------------------------------------------------------
# views: what the functions above produce, for consumers (checks, measured tiers)


class NvmeDiskView(FactView):
    """One `gpurack_nvme.disks[]` entry."""

    FIELDS = frozenset({"name", "model", "serial", "firmware", "size_bytes", "namespace", "is_os_disk"})


class NvmeFactsView(FactView):
    """`gpurack_nvme` as `gather_nvme` returns it."""

    FACT = "gpurack_nvme"
    FIELDS = frozenset({"available", "reason", "source", "sources", "disks"})

    def disks(self) -> list[NvmeDiskView]:
        """Every NVMe namespace."""
        return self.items("disks", NvmeDiskView)
