"""The GPUs a measured tier runs on: facts matched to CUDA devices, and the skips when none can."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import skip
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    GpuFactsView,
    GpuModel,
    GpuView,
    find_model,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult

from gpurack.gpubench import measure
from gpurack.gpubench.results import TierName

Progress = Callable[[str], None]
Gather = Callable[[], Mapping[str, Any]]

NODE = "node"


@dataclass(frozen=True, slots=True)
class GpuTarget:
    """One GPU to measure: its facts index, CUDA index (None: not visible) and model."""

    index: int
    cuda: int | None
    component: str
    fact: GpuView
    model: GpuModel | None
    skip_reason: str | None = None


def quiet(_: str) -> None:
    return None


def gpu_views(facts: Mapping[str, Any]) -> list[GpuView]:
    section = GpuFactsView.of(facts)
    return section.gpus() if section is not None else []


def norm_uuid(uuid: Any) -> str | None:
    if not isinstance(uuid, str) or not uuid:
        return None
    text = uuid.strip().lower()
    return text[4:] if text.startswith("gpu-") else text


def _cuda_index(device: GpuView) -> int:
    return int(device.field("index"))


def bus_of(view: GpuView) -> str | None:
    bus = view.field("bus_id")
    return str(bus).lower() if bus else None


def _target(pos: int, gpu: GpuView, cuda: int | None) -> GpuTarget:
    reason = None
    if gpu.field("mig_mode") is True:
        reason = "MIG mode is enabled: measured checks need the whole GPU (disable MIG to run them)"
    elif cuda is None:
        reason = "GPU not visible to CUDA in this process (CUDA_VISIBLE_DEVICES or a container limit?)"
    index = gpu.field("index")
    return GpuTarget(
        index=index if isinstance(index, int) else pos,
        cuda=cuda,
        component=gpu.component(),
        fact=gpu,
        model=find_model(gpu.field("name"), gpu.field("pci_device_id")),
        skip_reason=reason,
    )


def targets(facts: Mapping[str, Any], devices: Sequence[Mapping[str, Any]]) -> list[GpuTarget]:
    """Pair each GPU of the facts with the CUDA device that is the same GPU (uuid, then bus id).

    `devices` are `measure.visible_devices()` (index, name, uuid, bus_id: GPU fields, read as
    GPU views). Without GPU facts (no nvidia-smi), the CUDA devices themselves are the targets.
    """
    cuda = [GpuView(d) for d in devices]
    gpus = gpu_views(facts)
    if not gpus:
        return [
            GpuTarget(_cuda_index(d), _cuda_index(d), d.component(), d, find_model(d.field("name")))
            for d in cuda
        ]
    by_uuid = {norm_uuid(d.field("uuid")): _cuda_index(d) for d in cuda if d.field("uuid")}
    by_bus = {bus_of(d): _cuda_index(d) for d in cuda if bus_of(d)}
    identified = bool(by_uuid or by_bus)
    found = []
    for pos, gpu in enumerate(gpus):
        index = by_uuid.get(norm_uuid(gpu.field("uuid")))
        if index is None and bus_of(gpu):
            index = by_bus.get(bus_of(gpu))
        if index is None and not identified and len(gpus) == len(cuda):
            index = _cuda_index(cuda[pos])  # no ids on either side: same count, same order
        found.append(_target(pos, gpu, index))
    return found


def nvlink_connected(facts: Mapping[str, Any], model: GpuModel | None) -> tuple[bool, str]:
    """Whether the GPUs talk over NVLink, and the evidence: topology, else links, else the model."""
    section = GpuFactsView.of(facts)
    links = section.mapping("topology.links") if section is not None else {}
    pairs = [
        str(kind)
        for src, row in links.items()
        if str(src).startswith("GPU") and isinstance(row, Mapping)
        for dst, kind in row.items()
        if str(dst).startswith("GPU")
    ]
    if pairs:
        nv = any(kind.startswith("NV") for kind in pairs)
        return nv, f"nvidia-smi topo -m: GPU pairs linked by {', '.join(sorted(set(pairs)))}"
    nvlinks = [link for g in gpu_views(facts) for link in g.nvlinks()]
    if nvlinks:
        active = any(link.field("active") for link in nvlinks)
        return active, f"nvidia-smi nvlink -s: {'active' if active else 'no active'} NVLinks"
    has = model is not None and bool(model.nvlinks_per_gpu)
    return has, "no topology or NVLink facts: assumed from the model table's form factor"


def skip_all(
    facts: Mapping[str, Any], reason: str, check_ids: Sequence[str], tier: TierName
) -> list[CheckResult]:
    gpus = gpu_views(facts)
    components = [g.component() for g in gpus] or [NODE]
    results = [skip(c, reason, component=comp, tier=tier) for comp in components for c in check_ids]
    if tier == "standard" and len(gpus) != 1:
        results.append(skip("gpu.allreduce_busbw", reason))
    results.append(skip("counters.delta", f"nothing was measured: {reason}", tier=tier))
    return results


def usable_targets(
    facts_before: Mapping[str, Any], check_ids: Sequence[str], tier: TierName
) -> tuple[list[GpuTarget], list[CheckResult]]:
    all_targets = targets(facts_before, measure.visible_devices())
    skipped = [
        skip(c, t.skip_reason, component=t.component, tier=tier)
        for t in all_targets
        if t.skip_reason
        for c in check_ids
    ]
    return [t for t in all_targets if t.skip_reason is None], skipped
