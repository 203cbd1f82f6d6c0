# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU facts (`gpurack_gpu`, docs/facts.md): gather them from nvidia-smi, else the PCI bus.

Stdlib only. `gather_gpu(source)` is the entry point; the parsers are in `_gpu_smi`
(nvidia-smi -q), `_gpu_topology` (topo -m, nvlink -s) and `_gpu_pci_scan` (sysfs), the views
in `_gpu_views`.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_pci_scan import (
    PCI_DEVICES,
    numa_node,
    scan_pci_gpus,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    CMD_TEXT,
    CMD_XML,
    SRC_TEXT,
    SRC_XML,
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_topology import (
    CMD_NVLINK,
    CMD_TOPO,
    SRC_NVLINK,
    SRC_TOPO,
    is_nvswitch_mesh,
    parse_nvlink_status,
    parse_topo_matrix,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureError, Source

# ---------------------------------------------------------------------------------------
# gather


def _failure(output_rc: int, text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
    return f"rc={output_rc}: {first}"


def _run_smi(source: Source) -> tuple[dict[str, Any] | None, str, str]:
    """(parsed, source name, why not) from nvidia-smi -q -x, else nvidia-smi -q."""
    xml = source.run(CMD_XML)
    if xml.rc == 0 and xml.stdout.strip():
        return parse_nvidia_smi_xml(xml.stdout), "nvidia-smi-xml", ""
    # Old drivers and some containers lack -x; operators' pasted captures may hold only text.
    text = source.run(CMD_TEXT)
    if text.rc == 0 and text.stdout.strip():
        return parse_nvidia_smi_text(text.stdout), "nvidia-smi-text", ""
    if xml.missing and text.missing:
        return None, "none", "nvidia-smi not found"
    failed = text if not text.missing else xml
    return None, "none", f"nvidia-smi failed ({_failure(failed.rc, failed.stdout + failed.stderr)})"


def _add_topology(facts: dict[str, Any], source: Source) -> None:
    facts["topology"] = None
    topo = source.run(CMD_TOPO)
    if topo.rc != 0 or not topo.stdout.strip():
        return
    parsed = parse_topo_matrix(topo.stdout)
    if len(parsed["gpus"]) != facts["count"]:
        raise FactsError(
            f"{SRC_TOPO}: {len(parsed['gpus'])} GPU rows but nvidia-smi -q lists {facts['count']} GPUs"
        )
    affinity = parsed.pop("affinity")
    for gpu in facts["gpus"]:
        found = affinity.get(f"GPU{gpu['index']}", {})
        gpu["cpu_affinity"] = found.get("cpu_affinity")
        gpu["numa_node"] = found.get("numa_node")
    facts["topology"] = parsed
    facts["sources"].append(SRC_TOPO)
    facts["nvswitch"] = facts["nvswitch"] or is_nvswitch_mesh(parsed)


def _add_nvlinks(facts: dict[str, Any], source: Source) -> None:
    nvlink = source.run(CMD_NVLINK)
    if nvlink.rc != 0:
        return
    links = parse_nvlink_status(nvlink.stdout)
    unknown = sorted(set(links) - {gpu["index"] for gpu in facts["gpus"]})
    if unknown:
        raise FactsError(f"{SRC_NVLINK}: lists GPU {unknown[0]} but nvidia-smi -q has {facts['count']} GPUs")
    for gpu in facts["gpus"]:
        gpu["nvlinks"] = links.get(gpu["index"], [])
        gpu["nvlink_source"] = SRC_NVLINK
    facts["sources"].append(SRC_NVLINK)


def _gather(source: Source) -> dict[str, Any]:
    parsed, smi_source, why_not = _run_smi(source)
    # What nvidia-smi listed, kept beside a PCI scan so checks can compare the two counts.
    smi_count = parsed["count"] if parsed is not None else None
    if parsed is not None and parsed["count"] > 0:
        facts: dict[str, Any] = {
            "available": True,
            "source": smi_source,
            "driver_loaded": True,
            "sources": [SRC_XML if smi_source == "nvidia-smi-xml" else SRC_TEXT],
            "nvidia_smi_count": smi_count,
            **parsed,
        }
        _add_topology(facts, source)
        _add_nvlinks(facts, source)
        for gpu in facts["gpus"]:
            if gpu["numa_node"] is None and gpu["bus_id"]:
                gpu["numa_node"] = numa_node(source, gpu["bus_id"])
        return facts
    if parsed is not None:
        why_not = "nvidia-smi lists no GPUs"

    empty: dict[str, Any] = {
        "driver_version": None,
        "cuda_version": None,
        "driver_loaded": False,
        "topology": None,
        "nvswitch": None,
        "nvidia_smi_count": smi_count,
    }
    gpus = scan_pci_gpus(source)
    if gpus:
        return {
            "available": True,
            "source": "pci-scan",
            "reason": f"{why_not}; {len(gpus)} NVIDIA GPU(s) found on the PCI bus (driver not loaded?)",
            "sources": [PCI_DEVICES],
            **empty,
            "count": len(gpus),
            "gpus": gpus,
        }
    return {
        "available": False,
        "source": "none",
        "reason": f"{why_not} and no NVIDIA PCI devices in sysfs",
        "sources": [],
        **empty,
        "count": 0,
        "gpus": [],
    }


def gather_gpu(source: Source) -> dict[str, Any]:
    """The `gpurack_gpu` facts of one node (docs/facts.md).

    Raises:
        FactsError: nvidia-smi printed malformed or truncated output, or a capture file is
            broken; the message names the node, the command and the problem.
    """
    try:
        return _gather(source)
    except FactsError as exc:
        raise FactsError(f"{source.description}: {exc}") from exc
    except CaptureError as exc:
        raise FactsError(f"{source.description}: {exc}") from exc
