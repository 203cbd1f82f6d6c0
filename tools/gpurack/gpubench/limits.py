"""Limits and thresholds for the measured checks, from the GPU model table and the check specs.

Pure arithmetic (stdlib only): every limit and threshold carries the text that says where it
comes from, so a report can show why 52 GB/s of H2D copy is a warning and not a pass. The
pass/warn ratios and their provenance live in the specs (`plugins/module_utils/checks/`,
beside each component's checks); the PCIe formula in `_gpu_models.pcie_ceiling_gbps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import specs
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    PCIE_RATES,
    PCIE_SOURCE,
    GpuModel,
    GpuView,
    pcie_ceiling_gbps,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import Verdict


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
            return Verdict.FAIL
        ratio = measured / limit
        # Compare with a little slack so 80.0 % of a limit given as a float is not 79.99999 %.
        if ratio >= self.pass_ratio - 1e-9:
            return Verdict.PASS
        if ratio >= self.warn_ratio - 1e-9:
            return Verdict.WARN
        return Verdict.FAIL


# Every spec with a pass ratio is judged against a limit; the spec says why. (Importing
# checks.registry imports the checks package, which registers every spec, measured ones too.)
THRESHOLDS: Mapping[str, Threshold] = {
    c.id: Threshold(c.pass_ratio, c.warn_ratio, c.threshold_source or "")
    for c in specs()
    if c.pass_ratio is not None and c.warn_ratio is not None
}


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


def _view(gpu: GpuView | Mapping[str, Any]) -> GpuView:
    return gpu if isinstance(gpu, GpuView) else GpuView(gpu)


def pcie_limit(gpu: GpuView | Mapping[str, Any], model: GpuModel | None) -> Limit | None:
    """H2D/D2H ceiling: the model's PCIe generation and width, else the link maxima in the facts."""
    link = _link(model.pcie_gen, model.pcie_width) if model is not None else None
    if model is not None and link is not None:
        where = f"{_model_label(model)}: PCIe Gen{link[0]} x{link[1]} ({model.source_of('pcie')})"
    else:
        view = _view(gpu)
        link = _link(view.field("pcie.gen_max"), view.field("pcie.width_max"))
        if link is None:
            return None
        why = "model not in the table" if model is None else "the model table has no PCIe link for it"
        where = f"GPU reports link maximum Gen{link[0]} x{link[1]} ({why})"
    return Limit(round(pcie_ceiling_gbps(*link), 3), "GB/s", f"{where}; {PCIE_SOURCE}")


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


def allreduce_limit(
    gpu: GpuView | Mapping[str, Any], model: GpuModel | None, nvlink_connected: bool
) -> Limit | None:
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
