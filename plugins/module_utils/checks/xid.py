# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The Xid codes gpurack recognises: name, severity and what an operator should do.

Severity maps to a check verdict: `critical` fails the node, `warn` warns, `info` passes
(application-side events that say nothing about the hardware on their own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["critical", "warn", "info"]

PROVENANCE = (
    "NVIDIA GPU Deployment and Management documentation, 'Xid Errors' catalogue "
    "(docs.nvidia.com/deploy/xid-errors), summarised; re-check against the catalogue for the driver in use"
)

_RESET = "drain the node and reset the GPU (nvidia-smi -r -i <index>) or reboot"


@dataclass(frozen=True)
class Xid:
    """One Xid code from NVIDIA's catalogue."""

    code: int
    name: str
    severity: Severity
    resolution: str


XIDS: tuple[Xid, ...] = (
    Xid(
        13,
        "Graphics engine exception",
        "warn",
        "an application fault (out-of-range access) as a rule; diagnose if it recurs across applications",
    ),
    Xid(
        31,
        "GPU memory page fault (MMU fault)",
        "warn",
        "an application touching an illegal address as a rule; diagnose if it recurs across applications",
    ),
    Xid(
        43,
        "GPU stopped processing (user application fault)",
        "info",
        "an application was stopped; no hardware action needed",
    ),
    Xid(
        45,
        "Preemptive cleanup, due to previous errors",
        "info",
        "the driver cleaned up after an earlier error or a killed process; look at the Xid logged before it",
    ),
    Xid(
        48,
        "Double bit ECC error (DBE)",
        "critical",
        f"{_RESET} so that the row is remapped; replace the GPU if DBEs recur",
    ),
    Xid(
        61,
        "Internal micro-controller breakpoint/warning",
        "critical",
        f"{_RESET}; update the driver and report to NVIDIA if it recurs",
    ),
    Xid(
        62,
        "Internal micro-controller halt",
        "critical",
        f"{_RESET}; update the driver and report to NVIDIA if it recurs",
    ),
    Xid(
        63,
        "ECC page retirement or row remapping recording event",
        "warn",
        "a row remap or page retirement was recorded; reset the GPU at the next drain so it takes effect",
    ),
    Xid(
        64,
        "ECC page retirement or row remapper recording failure",
        "critical",
        f"{_RESET}; the GPU could not record the remap: replace it if the failure persists",
    ),
    Xid(68, "NVDEC0 exception (video decoder)", "warn", "a video decode error; reset the GPU if it recurs"),
    Xid(
        69,
        "Graphics engine class error",
        "warn",
        "usually a driver or application problem; reset the GPU if it recurs",
    ),
    Xid(
        74,
        "NVLink error",
        "critical",
        f"{_RESET}; check nvidia-smi nvlink -s and the baseboard; reseat or replace if it recurs",
    ),
    Xid(
        79,
        "GPU has fallen off the bus",
        "critical",
        f"{_RESET}; reseat the GPU and check PCIe, power and cooling if it recurs",
    ),
    Xid(
        92,
        "High single-bit ECC error rate",
        "warn",
        "watch the corrected-error counters; replace the GPU if the rate stays high",
    ),
    Xid(
        94,
        "Contained ECC error",
        "warn",
        "the affected application was stopped; reset the GPU at the next drain to remap the row",
    ),
    Xid(95, "Uncontained ECC error", "critical", f"{_RESET}; every application on the GPU was affected"),
    Xid(
        109,
        "Context switch timeout",
        "warn",
        "usually an application or driver hang; reset the GPU if it recurs",
    ),
    Xid(119, "GSP RPC timeout", "critical", f"{_RESET}; update to a fixed driver branch if it recurs"),
    Xid(120, "GSP error", "critical", f"{_RESET}; update the driver if it recurs"),
    Xid(121, "C2C link error (NVLink-C2C)", "critical", f"{_RESET}; replace the module if it recurs"),
    Xid(140, "Unrecovered ECC error", "critical", f"{_RESET}; replace the GPU if it recurs"),
    Xid(
        143,
        "GPU initialization failure",
        "critical",
        "reboot the node; replace the GPU if it does not initialise after a cold boot",
    ),
    Xid(
        154,
        "GPU recovery action changed",
        "warn",
        "read 'GPU Recovery Action' in nvidia-smi -q and do what it says (reset, reboot or drain)",
    ),
)

_BY_CODE = {x.code: x for x in XIDS}


def xid_info(code: int) -> Xid:
    """The catalogue entry for an Xid, or a `warn` placeholder for codes not listed."""
    known = _BY_CODE.get(code)
    if known is not None:
        return known
    return Xid(
        code,
        f"Xid {code} (not in gpurack's catalogue)",
        "warn",
        f"look up Xid {code} in NVIDIA's Xid catalogue; reset the GPU if it recurs",
    )
