"""Check results as the report tests record them (a plain module, like cli_helpers)."""

from __future__ import annotations

from typing import Any

# The bus numbers of the HGX H100 capture's eight GPUs.
GPU_BUS = ("19", "3b", "4c", "5d", "9b", "bb", "cb", "db")


def clock_warning(index: int, reasons: tuple[str, ...] = ("hw_slowdown",)) -> dict[str, Any]:
    """gpu.clocks_event_reasons as the quick tier records it for one GPU of the HGX H100 capture."""
    comp = f"GPU {index} (0000:{GPU_BUS[index]}:00.0)"
    return {
        "id": "gpu.clocks_event_reasons",
        "title": "No hardware clock slowdown",
        "tier": "quick",
        "component": comp,
        "verdict": "warn",
        "measured": list(reasons),
        "expected": [],
        "reason": f"{comp}: clocks held down by {', '.join(reasons)}",
        "remediation": "check cooling (fans, inlet temperature, airflow) and the power supply",
        "evidence": {"source": "nvidia-smi -q", "lines": [f"{comp} active clock event reasons: hw_slowdown"]},
    }


def downgraded(bus: str, now: float, top: float, width: int = 4) -> dict[str, Any]:
    """pci.downgraded as recorded for a platform bridge (measured and expected are link objects)."""
    return {
        "id": "pci.downgraded",
        "title": "No downgraded PCIe links",
        "component": f"PCI {bus}",
        "verdict": "warn",
        "measured": {"speed_gts": now, "width": width},
        "expected": {"speed_gts": top, "width": width},
        "reason": f"PCI {bus} (PCI bridge: Broadcom / LSI PEX890xx (rev b0)) links at {now} GT/s x{width}, "
        f"capable of {top} GT/s x{width}",
        "remediation": "reseat the device or riser",
        "evidence": {"source": "lspci -vvv", "lines": [f"{bus} LnkSta: Speed {now}GT/s (downgraded)"]},
    }
