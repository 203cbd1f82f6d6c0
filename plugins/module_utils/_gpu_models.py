# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The per-GPU-model table: label slug, form factor and the limits checks compare against.

Stdlib only. `resolve_model` never raises: a GPU the table does not know still gets a
valid label value derived from its name, and limits of `None` (checks then skip).
`docs/labels.md` embeds `render_models_markdown()`; a unit test keeps them equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

FormFactor = Literal["sxm", "pcie", "nvl", "superchip", "unknown"]

# Raw signalling rate per lane (GT/s) and the share of it that carries data, by PCIe generation:
# 8b/10b up to Gen2, 128b/130b for Gen3-5 (PCI-SIG base specifications 1.1 to 5.0), and for
# Gen6 the 242 of 256 FLIT bytes that are not FEC or CRC (PCIe 6.0 base specification).
PCIE_RATES: dict[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}
PCIE_SOURCE = "PCIe base specification: GT/s per lane x lanes x 128/130 line code / 8 bits, one direction"

_DATASHEET_H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM column)"
_DATASHEET_H200_NVL = "NVIDIA H200 Tensor Core GPU datasheet (NVL column)"
_DATASHEET_H100 = "NVIDIA H100 Tensor Core GPU datasheet (SXM column)"
_DATASHEET_H100_PCIE = "NVIDIA H100 Tensor Core GPU datasheet (PCIe column)"
_DATASHEET_H100_NVL = "NVIDIA H100 NVL datasheet (per GPU)"
_DATASHEET_A100 = "NVIDIA A100 Tensor Core GPU datasheet"
_DATASHEET_B200 = "NVIDIA HGX B200 / DGX B200 datasheet (per GPU)"
_DATASHEET_GB200 = "NVIDIA GB200 NVL72 datasheet (per GPU)"
_DATASHEET_L40S = "NVIDIA L40S datasheet"
_DATASHEET_L4 = "NVIDIA L4 Tensor Core GPU datasheet"
_WHITEPAPER_ADA = "NVIDIA Ada Lovelace architecture whitepaper (GeForce RTX 4090)"
_FLOOR = (
    "conservative floor below the nominal size (ECC and firmware reserve vary), to tighten from a capture"
)


@dataclass(frozen=True)
class GpuModel:
    """One GPU model: how to recognise it and what it should deliver.

    `nvlinks_per_gpu` counts links every installed GPU has (0 for PCIe cards even when an
    optional NVLink bridge exists; `nvlinks_bridged` says how many a bridged card shows).
    `nvlink_gbps_per_link` is GB/s per link and direction by the datasheet (nvidia-smi
    nvlink -s prints the signalling rate, 26.562 GB/s for NVLink4). Unknown limits are None.
    """

    slug: str
    names: tuple[str, ...]
    pci_device_ids: tuple[str, ...]
    family: str
    form_factor: FormFactor
    memory_gb: int | None
    min_memory_mib: int | None
    pcie_gen: int | None
    pcie_width: int | None
    nvlinks_per_gpu: int | None
    nvlinks_bridged: int | None
    nvlink_gbps_per_link: float | None
    hbm_tbps: float | None
    bf16_dense_tflops: float | None
    ecc_expected: bool
    provenance: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The label value (`gpurack.io/accelerator`); same as `slug`."""
        return self.slug

    @property
    def known(self) -> bool:
        """True for table entries, False for the fallback built from a name."""
        return bool(self.names or self.pci_device_ids)

    @property
    def pcie_h2d_gbps(self) -> float | None:
        """Ceiling of a host-to-device copy over the model's PCIe link, GB/s (None without a link)."""
        gen, width = self.pcie_gen, self.pcie_width
        if gen is None or width is None or gen not in PCIE_RATES or width <= 0:
            return None
        return round(pcie_ceiling_gbps(gen, width), 3)

    @property
    def nvlink_gbps_per_gpu(self) -> float | None:
        """Datasheet NVLink bandwidth per GPU and direction, GB/s (None without NVLink)."""
        if not self.nvlinks_per_gpu or self.nvlink_gbps_per_link is None:
            return None
        return self.nvlinks_per_gpu * self.nvlink_gbps_per_link

    def source_of(self, limit: str) -> str:
        """Where a limit comes from (datasheet, measurement), or 'not in the model table'."""
        return self.provenance.get(limit, "not in the model table")


def pcie_ceiling_gbps(gen: int, width: int) -> float:
    """Raw one-direction PCIe data rate in GB/s (10^9 bytes): Gen5 x16 is 32 x 16 x 128/130 / 8 = 63.015.

    The ceiling a host-to-device copy can approach, not reach.

    Raises:
        ValueError: the generation is not in PCIE_RATES or the width is not positive.
    """
    if gen not in PCIE_RATES:
        raise ValueError(f"unknown PCIe generation {gen!r} (known: {sorted(PCIE_RATES)})")
    if width <= 0:
        raise ValueError(f"PCIe link width must be positive, got {width!r}")
    gts, efficiency = PCIE_RATES[gen]
    return gts * width * efficiency / 8


def _prov(datasheet: str, memory: str, **extra: str) -> dict[str, str]:
    base = {
        "memory_gb": datasheet,
        "min_memory_mib": memory,
        "pcie": datasheet,
        "nvlink": datasheet,
        "hbm_tbps": datasheet,
        "bf16_dense_tflops": f"{datasheet} (dense, half the sparsity figure)",
        "pcie_h2d_gbps": PCIE_SOURCE,
    }
    base.update(extra)
    return base


MODELS: tuple[GpuModel, ...] = (
    GpuModel(
        slug="h200-141gb",
        names=("NVIDIA H200",),
        pci_device_ids=("0x2335",),
        family="h200",
        form_factor="sxm",
        memory_gb=141,
        min_memory_mib=143771,
        pcie_gen=5,
        pcie_width=16,
        nvlinks_per_gpu=18,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=4.8,
        bf16_dense_tflops=989.4,
        ecc_expected=True,
        provenance=_prov(_DATASHEET_H200, "measurement: h200x1 capture, nvidia-smi -q (580.159.04)"),
    ),
    GpuModel(
        slug="h200-141gb",
        names=("NVIDIA H200 NVL",),
        pci_device_ids=(),
        family="h200",
        form_factor="nvl",
        memory_gb=141,
        min_memory_mib=140000,
        pcie_gen=5,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=18,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=4.8,
        bf16_dense_tflops=835.5,
        ecc_expected=True,
        provenance=_prov(
            _DATASHEET_H200_NVL,
            _FLOOR,
            nvlink=f"{_DATASHEET_H200_NVL}: 900 GB/s over optional 2- or 4-way NVLink bridges",
        ),
    ),
    GpuModel(
        slug="h100-80gb",
        names=("NVIDIA H100 80GB HBM3",),
        pci_device_ids=("0x2330",),
        family="h100",
        form_factor="sxm",
        memory_gb=80,
        min_memory_mib=81559,
        pcie_gen=5,
        pcie_width=16,
        nvlinks_per_gpu=18,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=3.35,
        bf16_dense_tflops=989.4,
        ecc_expected=True,
        provenance=_prov(_DATASHEET_H100, "measurement: public 8x H100 nvidia-smi -q (535.161.08)"),
    ),
    GpuModel(
        slug="h100-80gb",
        names=("NVIDIA H100 PCIe",),
        pci_device_ids=("0x2331",),
        family="h100",
        form_factor="pcie",
        memory_gb=80,
        min_memory_mib=81000,
        pcie_gen=5,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=12,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=2.0,
        bf16_dense_tflops=756.0,
        ecc_expected=True,
        provenance=_prov(
            _DATASHEET_H100_PCIE,
            _FLOOR,
            nvlink=f"{_DATASHEET_H100_PCIE}: 600 GB/s over an optional NVLink bridge pair",
        ),
    ),
    GpuModel(
        slug="h100-94gb",
        names=("NVIDIA H100 NVL",),
        pci_device_ids=("0x2321",),
        family="h100",
        form_factor="nvl",
        memory_gb=94,
        min_memory_mib=93000,
        pcie_gen=5,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=12,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=3.9,
        bf16_dense_tflops=835.5,
        ecc_expected=True,
        provenance=_prov(
            _DATASHEET_H100_NVL,
            _FLOOR,
            nvlink=f"{_DATASHEET_H100_NVL}: 600 GB/s over three optional NVLink bridges per pair",
        ),
    ),
    GpuModel(
        slug="b200-180gb",
        names=("NVIDIA B200",),
        pci_device_ids=(),
        family="b200",
        form_factor="sxm",
        memory_gb=180,
        min_memory_mib=176000,
        pcie_gen=5,
        pcie_width=16,
        nvlinks_per_gpu=18,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=50.0,
        hbm_tbps=8.0,
        bf16_dense_tflops=2250.0,
        ecc_expected=True,
        provenance=_prov(_DATASHEET_B200, _FLOOR),
    ),
    GpuModel(
        slug="gb200-186gb",
        names=("NVIDIA GB200",),
        pci_device_ids=(),
        family="gb200",
        form_factor="superchip",
        memory_gb=186,
        min_memory_mib=180000,
        # Grace talks to the GPU over NVLink-C2C, not PCIe: no host PCIe limit applies.
        pcie_gen=None,
        pcie_width=None,
        nvlinks_per_gpu=18,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=50.0,
        hbm_tbps=8.0,
        bf16_dense_tflops=2500.0,
        ecc_expected=True,
        provenance=_prov(_DATASHEET_GB200, _FLOOR, pcie="none: host link is NVLink-C2C"),
    ),
    GpuModel(
        slug="a100-80gb",
        names=("NVIDIA A100-SXM4-80GB",),
        pci_device_ids=("0x20b2",),
        family="a100",
        form_factor="sxm",
        memory_gb=80,
        min_memory_mib=80000,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=12,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=2.039,
        bf16_dense_tflops=312.0,
        ecc_expected=True,
        provenance=_prov(f"{_DATASHEET_A100} (80GB SXM column)", _FLOOR),
    ),
    GpuModel(
        slug="a100-40gb",
        names=("NVIDIA A100-SXM4-40GB",),
        pci_device_ids=("0x20b0",),
        family="a100",
        form_factor="sxm",
        memory_gb=40,
        min_memory_mib=40000,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=12,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=1.555,
        bf16_dense_tflops=312.0,
        ecc_expected=True,
        provenance=_prov(f"{_DATASHEET_A100} (40GB SXM column)", _FLOOR),
    ),
    GpuModel(
        slug="a100-80gb",
        names=("NVIDIA A100 80GB PCIe",),
        pci_device_ids=("0x20b5",),
        family="a100",
        form_factor="pcie",
        memory_gb=80,
        min_memory_mib=80000,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=12,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=1.935,
        bf16_dense_tflops=312.0,
        ecc_expected=True,
        provenance=_prov(f"{_DATASHEET_A100} (80GB PCIe column; 600 GB/s NVLink bridge optional)", _FLOOR),
    ),
    GpuModel(
        slug="a100-40gb",
        names=("NVIDIA A100-PCIE-40GB",),
        pci_device_ids=("0x20f1",),
        family="a100",
        form_factor="pcie",
        memory_gb=40,
        min_memory_mib=40000,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=12,
        nvlink_gbps_per_link=25.0,
        hbm_tbps=1.555,
        bf16_dense_tflops=312.0,
        ecc_expected=True,
        provenance=_prov(f"{_DATASHEET_A100} (40GB PCIe column; 600 GB/s NVLink bridge optional)", _FLOOR),
    ),
    GpuModel(
        slug="l40s-48gb",
        names=("NVIDIA L40S",),
        pci_device_ids=("0x26b9",),
        family="l40s",
        form_factor="pcie",
        memory_gb=48,
        min_memory_mib=45000,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=None,
        hbm_tbps=0.864,
        bf16_dense_tflops=362.05,
        ecc_expected=True,
        provenance=_prov(_DATASHEET_L40S, _FLOOR, hbm_tbps=f"{_DATASHEET_L40S} (GDDR6, not HBM)"),
    ),
    GpuModel(
        slug="l4-24gb",
        names=("NVIDIA L4",),
        pci_device_ids=("0x27b8",),
        family="l4",
        form_factor="pcie",
        memory_gb=24,
        min_memory_mib=22000,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=None,
        hbm_tbps=0.3,
        bf16_dense_tflops=121.0,
        ecc_expected=True,
        provenance=_prov(_DATASHEET_L4, _FLOOR, hbm_tbps=f"{_DATASHEET_L4} (GDDR6, not HBM)"),
    ),
    GpuModel(
        slug="rtx4090-24gb",
        names=("NVIDIA GeForce RTX 4090",),
        pci_device_ids=("0x2684",),
        family="rtx4090",
        form_factor="pcie",
        memory_gb=24,
        min_memory_mib=24564,
        pcie_gen=4,
        pcie_width=16,
        nvlinks_per_gpu=0,
        nvlinks_bridged=None,
        nvlink_gbps_per_link=None,
        hbm_tbps=1.008,
        bf16_dense_tflops=165.2,
        # A consumer card: ECC is optional and off by default, so ECC off only warns.
        ecc_expected=False,
        provenance=_prov(
            _WHITEPAPER_ADA,
            "measurement: public 8x RTX 4090 nvidia-smi -q (535.154.05)",
            hbm_tbps=f"{_WHITEPAPER_ADA} (GDDR6X, not HBM)",
            bf16_dense_tflops=f"{_WHITEPAPER_ADA} (BF16 with FP32 accumulate, dense)",
        ),
    ),
)


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


_LABEL_VALUE_MAX = 63


def slug_from_name(name: str | None, pci_device_id: str | None = None) -> str:
    """A valid label value from an unknown product name: 'NVIDIA Foo X 99GB' -> 'foo-x-99gb'."""
    text = name if isinstance(name, str) and name.strip() else ""
    text = re.sub(r"^\s*nvidia\b", "", text, flags=re.IGNORECASE)
    if not text and isinstance(pci_device_id, str) and pci_device_id.strip():
        text = f"nvidia-{_norm_device_id(pci_device_id)[2:]}"
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = slug[:_LABEL_VALUE_MAX].rstrip("-")
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
