"""Two snapshots of a host's state -> drift: GPUs, NICs, disks, software, labels, check verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import is_finding

from gpurack.drift.model import Drift, DriftKind
from gpurack.hoststate import DiskState, GpuState, HostState, NicState


def _show(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _gpu_key(gpu: GpuState) -> str:
    return gpu.bus_id or f"index {gpu.index}"


def _gpu_label(gpu: GpuState) -> str:
    index = "?" if gpu.index is None else str(gpu.index)
    return f"GPU {index} ({gpu.bus_id})" if gpu.bus_id else f"GPU {index}"


def _link(gen: int | None, width: int | None) -> str:
    return f"Gen{_show(gen)} x{_show(width)}"


def _gpu_identity(gpu: GpuState) -> str:
    parts = [gpu.name or "GPU"]
    if gpu.serial:
        parts.append(f"serial {gpu.serial}")
    elif gpu.uuid:
        parts.append(gpu.uuid)
    return " ".join(parts)


def _diff_gpus(before: Sequence[GpuState], after: Sequence[GpuState]) -> list[Drift]:
    """GPUs matched by bus position: swaps, link changes, VBIOS; then moved, missing and added ones."""
    old = {_gpu_key(g): g for g in before}
    new = {_gpu_key(g): g for g in after}
    out = [drift for key, now in new.items() if key in old for drift in _gpu_changes(old[key], now, key)]
    came = [g for k, g in new.items() if k not in old]
    for was in (g for k, g in old.items() if k not in new):
        moved_to = next((g for g in came if was.serial and g.serial == was.serial), None)
        if moved_to is None:
            out.append(_gpu_missing(was))
            continue
        came.remove(moved_to)
        out.append(
            Drift(
                "gpu_moved",
                f"gpu:{_gpu_key(moved_to)}",
                was.bus_id,
                moved_to.bus_id,
                f"GPU serial {was.serial} moved: {_gpu_label(was)} -> {_gpu_label(moved_to)}",
            )
        )
    out.extend(
        Drift(
            "gpu_added",
            f"gpu:{_gpu_key(now)}",
            None,
            _gpu_identity(now),
            f"{_gpu_label(now)} was added: {_gpu_identity(now)}",
        )
        for now in came
    )
    return out


def _gpu_missing(was: GpuState) -> Drift:
    return Drift(
        "gpu_missing",
        f"gpu:{_gpu_key(was)}",
        _gpu_identity(was),
        None,
        f"{_gpu_label(was)} is missing: {_gpu_identity(was)} no longer seen",
    )


def _gpu_changes(was: GpuState, now: GpuState, key: str) -> list[Drift]:
    """What changed on the GPU at one bus position."""
    component, label = f"gpu:{key}", _gpu_label(now)
    swap = _gpu_swap(was, now, component, label)
    link = _gpu_link(was, now, component, label)
    out = [d for d in (swap, link) if d is not None]
    # A swapped board brings its own VBIOS: the swap sentence already says it all.
    if swap is None and was.vbios and now.vbios and was.vbios != now.vbios:
        sentence = f"{label} VBIOS changed: {was.vbios} -> {now.vbios}"
        out.append(Drift("vbios_changed", component, was.vbios, now.vbios, sentence))
    return out


def _gpu_swap(was: GpuState, now: GpuState, component: str, label: str) -> Drift | None:
    # Compare identities only where both snapshots know them: a driverless pci-scan
    # snapshot has no serials, and that is not a swap.
    if was.serial and now.serial and was.serial != now.serial:
        sentence = f"{label} was swapped: serial {was.serial} -> {now.serial}"
        return Drift("gpu_swapped", component, was.serial, now.serial, sentence)
    if was.uuid and now.uuid and was.uuid != now.uuid:
        sentence = f"{label} was swapped: UUID {was.uuid} -> {now.uuid}"
        return Drift("gpu_swapped", component, was.uuid, now.uuid, sentence)
    return None


def _gpu_link(was: GpuState, now: GpuState, component: str, label: str) -> Drift | None:
    old_link = (was.pcie_gen_current, was.pcie_width_current)
    new_link = (now.pcie_gen_current, now.pcie_width_current)
    if None in old_link or None in new_link or old_link == new_link:
        return None
    dropped = (now.pcie_gen_current or 0) < (was.pcie_gen_current or 0) or (now.pcie_width_current or 0) < (
        was.pcie_width_current or 0
    )
    before_s, after_s = _link(*old_link), _link(*new_link)
    if dropped:
        sentence = f"{label} PCIe link downgraded: {before_s} -> {after_s}"
        return Drift("pcie_downgraded", component, before_s, after_s, sentence)
    sentence = f"{label} PCIe link came back up: {before_s} -> {after_s}"
    return Drift("pcie_upgraded", component, before_s, after_s, sentence)


def _nic_label(nic: NicState) -> str:
    return f"NIC {nic.device} port {_show(nic.port)}"


def _diff_nics(before: Sequence[NicState], after: Sequence[NicState]) -> list[Drift]:
    """RDMA ports matched by device and port: changes, then missing and added ports."""
    old = {(n.device, n.port): n for n in before}
    new = {(n.device, n.port): n for n in after}
    out: list[Drift] = []
    fw_reported: set[str] = set()
    for key, now in new.items():
        was = old.get(key)
        if was is None:
            continue
        out.extend(_nic_changes(was, now))
        # Firmware belongs to the adapter, not the port: say it once per device.
        if was.fw and now.fw and was.fw != now.fw and now.device not in fw_reported:
            fw_reported.add(now.device)
            sentence = f"NIC {now.device} firmware changed: {was.fw} -> {now.fw}"
            out.append(Drift("nic_firmware_changed", f"nic:{now.device}", was.fw, now.fw, sentence))
    out.extend(
        Drift(
            "nic_missing",
            f"nic:{was.device}/{_show(was.port)}",
            was.guid or was.device,
            None,
            f"{_nic_label(was)} is missing",
        )
        for key, was in old.items()
        if key not in new
    )
    out.extend(_nic_added(now) for key, now in new.items() if key not in old)
    return out


def _nic_added(now: NicState) -> Drift:
    rate = f" at {_show(now.rate_gbps)} Gb/s" if now.rate_gbps is not None else ""
    return Drift(
        "nic_added",
        f"nic:{now.device}/{_show(now.port)}",
        None,
        now.guid or now.device,
        f"{_nic_label(now)} was added{rate}",
    )


def _nic_changes(was: NicState, now: NicState) -> list[Drift]:
    """What changed on one RDMA port (firmware aside: that is the adapter's)."""
    component, label = f"nic:{now.device}/{_show(now.port)}", _nic_label(now)
    out: list[Drift] = []
    if was.guid and now.guid and was.guid != now.guid:
        sentence = f"{label} was replaced: GUID {was.guid} -> {now.guid}"
        out.append(Drift("nic_replaced", component, was.guid, now.guid, sentence))
    old_state = "/".join(s for s in (was.state, was.phys_state) if s) or None
    new_state = "/".join(s for s in (now.state, now.phys_state) if s) or None
    if old_state != new_state:
        sentence = f"{label} state changed: {_show(old_state)} -> {_show(new_state)}"
        out.append(Drift("nic_state_changed", component, old_state, new_state, sentence))
    if was.rate_gbps != now.rate_gbps:
        was_rate, now_rate = _show(was.rate_gbps), _show(now.rate_gbps)
        sentence = f"{label} rate changed: {was_rate} Gb/s -> {now_rate} Gb/s"
        out.append(Drift("nic_rate_changed", component, was_rate, now_rate, sentence))
    if was.link_layer and now.link_layer and was.link_layer != now.link_layer:
        sentence = f"{label} link layer changed: {was.link_layer} -> {now.link_layer}"
        out.append(Drift("nic_link_layer_changed", component, was.link_layer, now.link_layer, sentence))
    return out


def _disk_identity(disk: DiskState) -> str:
    return (
        " ".join(p for p in (disk.model, f"serial {disk.serial}" if disk.serial else None) if p) or disk.name
    )


def _diff_disks(before: Sequence[DiskState], after: Sequence[DiskState]) -> list[Drift]:
    """NVMe disks matched by serial (names reorder across boots): firmware, replaced, missing, added."""
    out: list[Drift] = []
    new_by_serial = {d.serial: d for d in after if d.serial}
    matched_new: set[str] = set()
    unmatched_old: list[DiskState] = []
    for was in before:
        now = new_by_serial.get(was.serial) if was.serial else None
        if now is None:
            now = next((d for d in after if d.name == was.name and not d.serial and not was.serial), None)
        if now is None:
            unmatched_old.append(was)
            continue
        matched_new.add(now.name)
        if was.firmware and now.firmware and was.firmware != now.firmware:
            sentence = (
                f"NVMe {now.name} ({_disk_identity(now)}) firmware changed: {was.firmware} -> {now.firmware}"
            )
            out.append(
                Drift("disk_firmware_changed", f"disk:{now.name}", was.firmware, now.firmware, sentence)
            )
    unmatched_new = {d.name: d for d in after if d.name not in matched_new}
    out.extend(_disk_gone(was, unmatched_new.pop(was.name, None)) for was in unmatched_old)
    out.extend(
        Drift(
            "disk_added",
            f"disk:{now.name}",
            None,
            _disk_identity(now),
            f"NVMe {now.name} was added: {_disk_identity(now)}",
        )
        for now in unmatched_new.values()
    )
    return out


def _disk_gone(was: DiskState, now: DiskState | None) -> Drift:
    """A disk no longer seen: replaced when another one sits under its name, else missing."""
    if now is None:
        return Drift(
            "disk_missing",
            f"disk:{was.name}",
            _disk_identity(was),
            None,
            f"NVMe {was.name} is missing: {_disk_identity(was)} no longer seen",
        )
    return Drift(
        "disk_replaced",
        f"disk:{now.name}",
        was.serial,
        now.serial,
        f"NVMe {now.name} was replaced: serial {_show(was.serial)} -> {_show(now.serial)}"
        + (f" ({now.model})" if now.model else ""),
    )


def _diff_software(before: HostState, after: HostState) -> list[Drift]:
    fields: tuple[tuple[DriftKind, str, str, str | None, str | None], ...] = (
        ("kernel_changed", "os", "Kernel", before.kernel, after.kernel),
        ("driver_changed", "driver", "NVIDIA driver", before.driver, after.driver),
        ("cuda_changed", "cuda", "CUDA version", before.cuda, after.cuda),
    )
    return [
        Drift(kind, component, was, now, f"{what} changed: {_show(was)} -> {_show(now)}")
        for kind, component, what, was, now in fields
        if was != now
    ]


def _diff_labels(before: HostState, after: HostState) -> list[Drift]:
    old, new = dict(before.labels), dict(after.labels)
    out = []
    for key in sorted(old.keys() | new.keys()):
        was, now = old.get(key), new.get(key)
        if was != now:
            out.append(
                Drift(
                    "label_changed",
                    f"label:{key}",
                    was,
                    now,
                    f"Label {key} changed: {_show(was)} -> {_show(now)}",
                )
            )
    return out


def _diff_checks(before: HostState, after: HostState) -> list[Drift]:
    # Checks that ran only once (another tier, a `run` without validation) are not drift.
    old = {(c.check_id, c.component or ""): c for c in before.checks}
    out = []
    for now in after.checks:
        was = old.get((now.check_id, now.component or ""))
        if was is None or was.verdict == now.verdict:
            continue
        where = f" on {now.component}" if now.component else ""
        why = f" ({now.reason})" if now.reason and is_finding(now.verdict) else ""
        out.append(
            Drift(
                "verdict_changed",
                f"check:{now.check_id}" + (f"/{now.component}" if now.component else ""),
                was.verdict,
                now.verdict,
                f"Check {now.check_id}{where}: {was.verdict} -> {now.verdict}{why}",
            )
        )
    return out


def diff(before: HostState, after: HostState) -> list[Drift]:
    """Everything that changed from `before` to `after`, hardware first, then software and verdicts."""
    return [
        *_diff_gpus(before.gpus, after.gpus),
        *_diff_nics(before.nics, after.nics),
        *_diff_disks(before.disks, after.disks),
        *_diff_software(before, after),
        *_diff_labels(before, after),
        *_diff_checks(before, after),
    ]
