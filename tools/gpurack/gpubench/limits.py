"""Limits and thresholds for the measured checks, from the GPU model table and the link specs.

Pure arithmetic (stdlib only): every limit and threshold carries the text that says where it
comes from, so a report can show why 52 GB/s of H2D copy is a warning and not a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import GpuModel

Verdict = Literal["pass", "warn", "fail"]

# Raw signalling rate per lane (GT/s) and line-code efficiency, by PCIe generation.
# Gen1/2 use 8b/10b, Gen3-5 use 128b/130b (PCI-SIG base specifications 1.1 to 5.0).
PCIE_RATES: Mapping[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
}
PCIE_SOURCE = "PCIe base specification: GT/s per lane x lanes x 128/130 line code / 8 bits, one direction"


@dataclass(frozen=True, slots=True)
class Limit:
    """The ceiling a measurement is compared with, and where that number comes from."""

    value: float
    unit: str
    source: str


@dataclass(frozen=True, slots=True)
class Threshold:
    """Share of a limit a measurement must reach: >= pass_ratio passes, >= warn_ratio warns."""

    pass_ratio: float
    warn_ratio: float
    source: str

    def verdict(self, measured: float, limit: float) -> Verdict:
        """Verdict of `measured` against `limit`; a limit <= 0 cannot be met, so it fails."""
        if limit <= 0:
            return "fail"
        ratio = measured / limit
        # Compare with a little slack so 80.0 % of a limit given as a float is not 79.99999 %.
        if ratio >= self.pass_ratio - 1e-9:
            return "pass"
        if ratio >= self.warn_ratio - 1e-9:
            return "warn"
        return "fail"


_WARN_FLOOR = 0.60
THRESHOLDS: Mapping[str, Threshold] = {
    "gpu.h2d_bandwidth": Threshold(
        0.80,
        _WARN_FLOOR,
        "pinned copies over a healthy PCIe link reach 85-90 % of the raw rate (TLP headers and flow "
        "control take the rest; a real H200 on Gen5 x16 gave 55.5 of 63.0 GB/s): pass >= 80 %, "
        "warn >= 60 %, fail below (a link running at half width or one generation down lands there)",
    ),
    "gpu.d2h_bandwidth": Threshold(
        0.80,
        _WARN_FLOOR,
        "as H2D: pinned copies reach 85-90 % of the raw PCIe rate (a real H200 gave 55.3 of 63.0 GB/s): "
        "pass >= 80 %, warn >= 60 %, fail below",
    ),
    "gpu.d2d_bandwidth": Threshold(
        0.75,
        _WARN_FLOOR,
        "the datasheet HBM rate is the pin-rate peak; a sustained copy loses 10-15 % to refresh, "
        "row switches and read/write turnaround (a real H200 copied 4.26 of 4.8 TB/s, 89 %): "
        "pass >= 75 %, warn >= 60 %, fail below",
    ),
    "gpu.bf16_matmul": Threshold(
        0.75,
        _WARN_FLOOR,
        "the datasheet dense bf16 rate is a boost-clock peak; ten 8192^3 products on random data right "
        "after a short warm-up run at boost clocks before the power controller clamps them (H200s here: "
        "767-799 of 989 TFLOP/s, 78-81 %; after 0.5 s of load they settle near 660, 67 %, which the "
        "burn-in tier judges): pass >= 75 %, warn >= 60 %, fail below",
    ),
    "gpu.allreduce_busbw": Threshold(
        0.70,
        _WARN_FLOOR,
        "NCCL's ring/tree all-reduce reaches 75-85 % of the per-GPU link rate at GiB sizes (4 H200s "
        "over NVLink gave 359 of 450 GB/s bus bandwidth at 2 GiB): pass >= 70 %, warn >= 60 %, "
        "fail below",
    ),
    "gpu.burn_in_throughput": Threshold(
        0.60,
        0.50,
        "sustained bf16 under the power cap, with device copies between products, runs below the "
        "short-burst rate (2 H200s at 700 W: 655-665 of 989 TFLOP/s, 66-67 %, over 30 s, clocks "
        "~1440 MHz, reason sw_power_cap): pass >= 60 %, warn >= 50 %, fail below",
    ),
    "gpu.burn_in_stability": Threshold(
        0.90,
        0.80,
        "min/median of per-window bf16 rates over the burn-in: a steady GPU at its power cap varies "
        "by a few percent; a window 10 % below the median means clocks fell (thermal or power brake), "
        "20 % below is a fault: pass >= 0.90, warn >= 0.80, fail below",
    ),
}


def pcie_ceiling_gbps(gen: int, width: int) -> float:
    """Raw one-direction PCIe data rate in GB/s (10^9 bytes) for a link generation and width.

    Raises:
        ValueError: the generation is not 1-5 or the width is not positive.
    """
    if gen not in PCIE_RATES:
        raise ValueError(f"unknown PCIe generation {gen!r} (known: {sorted(PCIE_RATES)})")
    if width <= 0:
        raise ValueError(f"PCIe link width must be positive, got {width!r}")
    gts, efficiency = PCIE_RATES[gen]
    return gts * width * efficiency / 8


def busbw_from_algbw(algbw: float, ranks: int) -> float:
    """All-reduce bus bandwidth from algorithm bandwidth (bytes / time), nccl-tests' convention.

    busbw = algbw x 2(n-1)/n: what each GPU's link carries, comparable with the link rate.

    Raises:
        ValueError: fewer than one rank.
    """
    if ranks < 1:
        raise ValueError(f"an all-reduce needs at least one rank, got {ranks}")
    return algbw * 2 * (ranks - 1) / ranks


def _link(gen: Any, width: Any) -> tuple[int, int] | None:
    """(gen, width) when both are usable for PCIE_RATES, else None."""
    if isinstance(gen, int) and gen in PCIE_RATES and isinstance(width, int) and width > 0:
        return gen, width
    return None


def pcie_limit(gpu: Mapping[str, Any], model: GpuModel | None) -> Limit | None:
    """H2D/D2H ceiling: the model's PCIe generation and width, else the link maxima in the facts."""
    link = _link(model.pcie_gen, model.pcie_width) if model is not None else None
    if model is not None and link is not None:
        where = f"{_model_label(model)}: PCIe Gen{link[0]} x{link[1]} ({model.source_of('pcie')})"
    else:
        pcie = gpu.get("pcie") or {}
        link = _link(pcie.get("gen_max"), pcie.get("width_max"))
        if link is None:
            return None
        why = "model not in the table" if model is None else "the model table has no PCIe link for it"
        where = f"GPU reports link maximum Gen{link[0]} x{link[1]} ({why})"
    return Limit(round(pcie_ceiling_gbps(*link), 2), "GB/s", f"{where}; {PCIE_SOURCE}")


def _model_label(model: GpuModel) -> str:
    return model.names[0] if model.names else model.slug


def hbm_limit(model: GpuModel | None) -> Limit | None:
    """D2D copy ceiling: the model's HBM bandwidth (datasheet), in TB/s."""
    if model is None or not model.hbm_tbps:
        return None
    return Limit(
        model.hbm_tbps,
        "TB/s",
        f"{_model_label(model)}: {model.hbm_tbps:g} TB/s HBM ({model.source_of('hbm_tbps')}); "
        "a copy counts bytes read plus bytes written",
    )


def bf16_limit(model: GpuModel | None) -> Limit | None:
    """bf16 matrix-product ceiling: the model's dense (no sparsity) bf16 rate, in TFLOP/s."""
    if model is None or not model.bf16_dense_tflops:
        return None
    return Limit(
        model.bf16_dense_tflops,
        "TFLOP/s",
        f"{_model_label(model)}: {model.bf16_dense_tflops:g} TFLOP/s dense bf16 "
        f"({model.source_of('bf16_dense_tflops')})",
    )


def allreduce_limit(gpu: Mapping[str, Any], model: GpuModel | None, nvlink_connected: bool) -> Limit | None:
    """All-reduce bus-bandwidth ceiling: NVLink per GPU, one direction, else the PCIe ceiling.

    `nvlink_connected` says whether the node's GPUs reach each other over NVLink (topology).
    """
    if nvlink_connected and model is not None:
        links = model.nvlinks_per_gpu or model.nvlinks_bridged
        if links and model.nvlink_gbps_per_link:
            return Limit(
                links * model.nvlink_gbps_per_link,
                "GB/s",
                f"{_model_label(model)}: {links} NVLinks x {model.nvlink_gbps_per_link:g} GB/s per link, "
                f"one direction ({model.source_of('nvlink')})",
            )
    pcie = pcie_limit(gpu, model)
    if pcie is None:
        return None
    return Limit(pcie.value, pcie.unit, f"GPUs not connected by NVLink: PCIe ceiling. {pcie.source}")
