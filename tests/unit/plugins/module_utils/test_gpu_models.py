"""GPU model table: lookup by name and PCI id, the fallback slug, derived limits."""

from __future__ import annotations

import re

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_table import MODELS
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_type import pcie_ceiling_gbps
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import (
    find_model,
    render_models_markdown,
    resolve_model,
    slug_from_name,
)
from conftest import REPO

LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


@pytest.mark.parametrize(
    ("name", "slug", "form"),
    [
        ("NVIDIA H200", "h200-141gb", "sxm"),
        ("NVIDIA H200 NVL", "h200-141gb", "nvl"),
        ("NVIDIA H100 80GB HBM3", "h100-80gb", "sxm"),
        ("NVIDIA H100 PCIe", "h100-80gb", "pcie"),
        ("NVIDIA H100 NVL", "h100-94gb", "nvl"),
        ("NVIDIA B200", "b200-180gb", "sxm"),
        ("NVIDIA GB200", "gb200-186gb", "superchip"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb", "sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb", "sxm"),
        ("NVIDIA A100 80GB PCIe", "a100-80gb", "pcie"),
        ("NVIDIA A100-PCIE-40GB", "a100-40gb", "pcie"),
        ("NVIDIA L40S", "l40s-48gb", "pcie"),
        ("NVIDIA L4", "l4-24gb", "pcie"),
        ("NVIDIA GeForce RTX 4090", "rtx4090-24gb", "pcie"),
        ("  nvidia   h200 ", "h200-141gb", "sxm"),
    ],
)
def test_find_model_by_nvidia_smi_name(name: str, slug: str, form: str) -> None:
    model = find_model(name)
    assert model is not None
    assert (model.slug, model.form_factor) == (slug, form)


@pytest.mark.parametrize(
    ("device_id", "name"),
    [
        ("0x2335", "NVIDIA H200"),
        ("0x233510DE", "NVIDIA H200"),
        ("2330", "NVIDIA H100 80GB HBM3"),
        ("0x2331", "NVIDIA H100 PCIe"),
        ("0x2321", "NVIDIA H100 NVL"),
        ("0x20B2", "NVIDIA A100-SXM4-80GB"),
        ("0x20b0", "NVIDIA A100-SXM4-40GB"),
        ("0x20b5", "NVIDIA A100 80GB PCIe"),
        ("0x20f1", "NVIDIA A100-PCIE-40GB"),
        ("0x26b9", "NVIDIA L40S"),
        ("0x27b8", "NVIDIA L4"),
        ("0x2684", "NVIDIA GeForce RTX 4090"),
    ],
)
def test_find_model_by_pci_device_id(device_id: str, name: str) -> None:
    model = find_model(None, device_id)
    assert model is not None
    assert model.names == (name,)


def test_find_model_name_wins_over_device_id() -> None:
    model = find_model("NVIDIA H200 NVL", "0x2335")
    assert model is not None and model.form_factor == "nvl"


@pytest.mark.parametrize(
    ("name", "device_id"), [("NVIDIA Foo X 99GB", None), (None, None), ("", "0x9999"), (None, "")]
)
def test_find_model_unknown_returns_none(name: str | None, device_id: str | None) -> None:
    assert find_model(name, device_id) is None


@pytest.mark.parametrize(
    ("name", "device_id", "slug"),
    [
        ("NVIDIA Foo X 99GB", None, "foo-x-99gb"),
        ("NVIDIA B300 SXM6 AC", None, "b300-sxm6-ac"),
        ("Tesla V100-SXM2-32GB", None, "tesla-v100-sxm2-32gb"),
        (None, "0x2901", "nvidia-2901"),
        ("", None, "unknown"),
        ("NVIDIA ###", None, "unknown"),
        ("NVIDIA " + "X" * 100, None, "x" * 63),
        ("NVIDIA Ünïcode GPU_9", None, "n-code-gpu-9"),
    ],
)
def test_slug_from_name_is_a_valid_label_value(name: str | None, device_id: str | None, slug: str) -> None:
    assert slug_from_name(name, device_id) == slug
    assert LABEL_VALUE.match(slug) and len(slug) <= 63


def test_resolve_model_unknown_keeps_slug_and_has_no_limits() -> None:
    model = resolve_model("NVIDIA B300 SXM6 AC", "0x3182")
    assert (model.slug, model.form_factor, model.known) == ("b300-sxm6-ac", "sxm", False)
    assert model.min_memory_mib is None and model.pcie_h2d_gbps is None
    assert model.source_of("hbm_tbps") == "not in the model table"


def test_every_model_has_valid_slug_and_provenance_for_each_limit() -> None:
    for model in MODELS:
        assert LABEL_VALUE.match(model.slug) and len(model.slug) <= 63
        assert model.known
        for limit in ("memory_gb", "min_memory_mib", "pcie", "nvlink", "hbm_tbps", "bf16_dense_tflops"):
            assert model.provenance.get(limit), (model.names, limit)


def test_h200_limits_match_the_datasheet_and_capture() -> None:
    h200 = find_model("NVIDIA H200")
    assert h200 is not None
    assert (h200.min_memory_mib, h200.pcie_gen, h200.pcie_width, h200.nvlinks_per_gpu) == (143771, 5, 16, 18)
    assert (h200.hbm_tbps, h200.bf16_dense_tflops, h200.pcie_h2d_gbps) == (4.8, 989.4, 63.015)
    assert h200.nvlink_gbps_per_gpu == 450.0
    assert "capture" in h200.source_of("min_memory_mib")


def test_bridged_pcie_cards_require_no_nvlink() -> None:
    for name in ("NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA H100 PCIe"):
        model = find_model(name)
        assert model is not None and model.nvlinks_per_gpu == 0 and model.nvlinks_bridged
        assert model.nvlink_gbps_per_gpu is None


@pytest.mark.parametrize(("gen", "width", "gbps"), [(5, 16, 63.015), (4, 16, 31.508), (5, 8, 31.508)])
def test_pcie_ceiling_gbps(gen: int, width: int, gbps: float) -> None:
    assert round(pcie_ceiling_gbps(gen, width), 3) == gbps


def test_pcie_ceiling_gbps_unknown_generation_raises() -> None:
    with pytest.raises(ValueError, match="unknown PCIe generation 9"):
        pcie_ceiling_gbps(9, 16)


def test_model_without_pcie_link_has_no_h2d_ceiling() -> None:
    gb200 = find_model("NVIDIA GB200")
    assert gb200 is not None and gb200.pcie_h2d_gbps is None


def test_docs_labels_md_embeds_the_model_table() -> None:
    text = (REPO / "docs" / "labels.md").read_text()
    begin, end = "<!-- BEGIN models: render_models_markdown() -->\n", "<!-- END models -->"
    assert text[text.index(begin) + len(begin) : text.index(end)] == render_models_markdown()
