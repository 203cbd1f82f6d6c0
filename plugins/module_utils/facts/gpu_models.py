# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Look GPUs up in the model table (`_gpu_model_table`): label slug, form factor, limits.

Stdlib only. `resolve_model` never raises: a GPU the table does not know still gets a
valid label value derived from its name, and limits of `None` (checks then skip).
`docs/labels.md` embeds `render_models_markdown()`; a unit test keeps them equal.
"""

from __future__ import annotations

import re

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_table import MODELS
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_type import (
    FormFactor,
    GpuModel,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import LABEL_VALUE_MAX


def _norm_name(name: str) -> str:
    return " ".join(name.split()).casefold()


def _norm_device_id(device_id: str) -> str:
    text = device_id.strip().lower()
    # nvidia-smi prints "0x233510DE" (device + vendor); PCI scans print "2335" or "0x2335".
    text = text.removeprefix("0x")
    if len(text) == 8 and text.endswith("10de"):
        text = text[:4]
    return f"0x{text}"


_BY_NAME = {_norm_name(n): m for m in MODELS for n in m.names}
_BY_DEVICE_ID = {d: m for m in MODELS for d in m.pci_device_ids}


def find_model(name: str | None, pci_device_id: str | None = None) -> GpuModel | None:
    """The table entry for a product name (nvidia-smi) or PCI device id, else None.

    The name wins when both are given: one device id can carry several boards.
    """
    if isinstance(name, str) and (model := _BY_NAME.get(_norm_name(name))):
        return model
    if isinstance(pci_device_id, str) and pci_device_id.strip():
        return _BY_DEVICE_ID.get(_norm_device_id(pci_device_id))
    return None


def slug_from_name(name: str | None, pci_device_id: str | None = None) -> str:
    """A valid label value from an unknown product name: 'NVIDIA Foo X 99GB' -> 'foo-x-99gb'."""
    text = name if isinstance(name, str) and name.strip() else ""
    text = re.sub(r"^\s*nvidia\b", "", text, flags=re.IGNORECASE)
    if not text and isinstance(pci_device_id, str) and pci_device_id.strip():
        text = f"nvidia-{_norm_device_id(pci_device_id)[2:]}"
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = slug[:LABEL_VALUE_MAX].rstrip("-")
    return slug or "unknown"


def _guess_form_factor(name: str) -> FormFactor:
    upper = name.upper()
    if "SXM" in upper:
        return "sxm"
    if re.search(r"\bNVL\b", upper):
        return "nvl"
    if "PCIE" in upper or "GEFORCE" in upper or "RTX" in upper:
        return "pcie"
    return "unknown"


def resolve_model(name: str | None, pci_device_id: str | None = None) -> GpuModel:
    """The table entry, or a fallback with a slug from the name and no limits; never raises."""
    model = find_model(name, pci_device_id)
    if model is not None:
        return model
    text = name if isinstance(name, str) else ""
    return GpuModel(
        slug=slug_from_name(name, pci_device_id),
        names=(),
        pci_device_ids=(),
        family="unknown",
        form_factor=_guess_form_factor(text),
        memory_gb=None,
        min_memory_mib=None,
        pcie_gen=None,
        pcie_width=None,
        nvlinks_per_gpu=None,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=None,
        hbm_tbps=None,
        bf16_dense_tflops=None,
        ecc_expected=False,
    )


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def render_models_markdown() -> str:
    """The model table as Markdown (embedded in docs/labels.md)."""
    head = (
        "| accelerator | names (nvidia-smi) | PCI ids | form | memory GB | min MiB | PCIe | NVLinks "
        "(bridged) | NVLink GB/s/link | HBM TB/s | BF16 dense TFLOPS | H2D ceiling GB/s |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    rows = []
    for m in MODELS:
        pcie = f"Gen{m.pcie_gen} x{m.pcie_width}" if m.pcie_gen else "-"
        links = (
            f"{_cell(m.nvlinks_per_gpu)} ({m.nvlinks_bridged})"
            if m.nvlinks_bridged
            else str(m.nvlinks_per_gpu)
        )
        rows.append(
            f"| `{m.slug}` | {', '.join(m.names)} | {', '.join(m.pci_device_ids) or '-'} | {m.form_factor} "
            f"| {_cell(m.memory_gb)} | {_cell(m.min_memory_mib)} | {pcie} | {links} "
            f"| {_cell(m.nvlink_gbps_per_link)} | {_cell(m.hbm_tbps)} | {_cell(m.bf16_dense_tflops)} "
            f"| {_cell(m.pcie_h2d_gbps)} |\n"
        )
    sources = []
    for m in MODELS:
        grouped: dict[str, list[str]] = {}
        for limit, origin in m.provenance.items():
            grouped.setdefault(origin, []).append(limit)
        detail = "; ".join(f"{', '.join(limits)}: {origin}" for origin, limits in grouped.items())
        sources.append(f"- {', '.join(m.names)}: {detail}")
    return head + "".join(rows) + "\nProvenance per limit:\n\n" + "\n".join(sources) + "\n"
