"""Measured checks for the standard and burn-in tiers: copies, matrix products, all-reduce.

Importing this package needs only the standard library; PyTorch is imported inside the
functions that measure, so a node without it gets checks that skip with a reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

# NVLink multicast (NVLS) can take every GPU of a shared host out of service when a program
# misuses it, and nothing here needs it. These must be in the environment before CUDA or NCCL
# initialise in any process, so they are set when the package is imported (every measuring
# path goes through it) and passed explicitly to each worker process.
SAFE_ENV: Mapping[str, str] = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
    # CUDA numbers devices fastest-first by default; nvidia-smi and the facts number them in
    # PCI bus order. Same order, so GPU i in a report is GPU i in nvidia-smi.
    "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
}


def apply_safe_env(environ: MutableMapping[str, str] | None = None) -> None:
    """Set SAFE_ENV in `environ`, by default this process's environment (overriding any value)."""
    (os.environ if environ is None else environ).update(SAFE_ENV)


apply_safe_env()
