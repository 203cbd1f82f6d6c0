"""Single-GPU measurements through PyTorch: pinned copies, device copy, bf16 matrix product.

PyTorch is imported lazily (`load_torch`) so this module imports on nodes without it; torch
objects are typed `Any` because torch is not a dependency of the driver.
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpurack.gpubench import apply_safe_env

GIB = 1 << 30
NO_TORCH = "PyTorch not installed on this node"
NO_CUDA = "no CUDA device visible"


class TorchUnavailableError(RuntimeError):
    """PyTorch or a CUDA device is missing; str(exc) is the reason a check reports."""


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured rate: the median of timed iterations, with the raw timings as evidence."""

    value: float
    unit: str
    samples: tuple[float, ...]
    timings_ms: tuple[float, ...]
    method: str
    duration_s: float

    def evidence_lines(self) -> list[str]:
        """The raw numbers, one line each, as they go into a check's evidence."""
        return [
            f"timings_ms: {', '.join(f'{t:.4f}' for t in self.timings_ms)}",
            f"samples ({self.unit}): {', '.join(f'{s:.4g}' for s in self.samples)}",
            f"median {self.value:.4g} {self.unit}; min {min(self.samples):.4g}; max {max(self.samples):.4g}",
        ]


def load_torch() -> Any:
    """The torch module, with CUDA usable.

    Raises:
        TorchUnavailableError: torch cannot be imported, or it sees no CUDA device.
    """
    apply_safe_env()
    try:
        torch = importlib.import_module("torch")
    except ImportError as exc:
        raise TorchUnavailableError(NO_TORCH) from exc
    if not torch.cuda.is_available():
        raise TorchUnavailableError(NO_CUDA)
    return torch


def unavailable_reason() -> str | None:
    """Why measurements cannot run here, or None when they can."""
    try:
        load_torch()
    except TorchUnavailableError as exc:
        return str(exc)
    return None


def environment() -> dict[str, Any]:
    """Versions a report needs to compare runs: torch, CUDA, NCCL, visible devices."""
    torch = load_torch()
    nccl: str | None = None
    try:
        nccl = ".".join(str(p) for p in torch.cuda.nccl.version())
    except (AttributeError, RuntimeError):
        nccl = None
    return {
        "torch": str(torch.__version__),
        "cuda": str(torch.version.cuda),
        "nccl": nccl,
        "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
    }


def visible_devices() -> list[dict[str, Any]]:
    """CUDA's devices as PyTorch sees them: index, name, uuid (no `GPU-`), PCI bus id."""
    torch = load_torch()
    devices = []
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        uuid = getattr(props, "uuid", None)
        bus: str | None = None
        if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
            bus = f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
        devices.append(
            {
                "index": index,
                "name": str(props.name),
                "uuid": str(uuid).lower() if uuid is not None else None,
                "bus_id": bus,
                "memory_bytes": int(props.total_memory),
            }
        )
    return devices


def time_cuda(
    torch: Any, op: Callable[[], object], warmup: int, iters: int, warmup_s: float = 0.0
) -> list[float]:
    """Milliseconds of each of `iters` runs of `op` on the current stream, after warm-up.

    Warm-up is at least `warmup` runs and `warmup_s` seconds: an idle GPU sits at a few hundred
    MHz and needs a moment of load to reach its working clocks. Each timed run sits between two
    CUDA events on the stream, so host overhead is not counted while the queue stays ahead.
    """
    start_s = time.monotonic()
    done = 0
    while done < warmup or time.monotonic() - start_s < warmup_s:
        op()
        done += 1
        if done % 8 == 0:  # keep the host from queueing far ahead of the clock it checks
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        op()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return [float(start.elapsed_time(end)) for start, end in pairs]


def _rate(
    timings_ms: Sequence[float], *, work: float, scale: float, unit: str, method: str, t0: float
) -> Measurement:
    """Turn per-iteration times into rates of `work / scale` per second; value is the median."""
    samples = tuple(work / (t / 1000) / scale for t in timings_ms if t > 0)
    if not samples:
        raise RuntimeError(f"{method}: no timing was above zero: {list(timings_ms)}")
    return Measurement(
        value=statistics.median(samples),
        unit=unit,
        samples=samples,
        timings_ms=tuple(timings_ms),
        method=method,
        duration_s=round(time.monotonic() - t0, 3),
    )


def _on_device(torch: Any, device: int, timed: Callable[[], list[float]]) -> list[float]:
    """Run `timed` with `device` current; its buffers are freed and uncached when it returns."""
    with torch.cuda.device(device):
        try:
            return timed()
        finally:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


def copy_bandwidth(
    device: int,
    direction: Literal["h2d", "d2h"],
    size_bytes: int = GIB,
    warmup: int = 2,
    iters: int = 7,
) -> Measurement:
    """Pinned host<->device copy rate of one GPU in GB/s (10^9 bytes), median of `iters`.

    Raises:
        TorchUnavailableError: no torch or no CUDA device.
    """
    torch = load_torch()
    t0 = time.monotonic()

    def timed() -> list[float]:
        host = torch.empty(size_bytes, dtype=torch.uint8, pin_memory=True)
        gpu = torch.empty(size_bytes, dtype=torch.uint8, device=f"cuda:{device}")
        if direction == "h2d":
            return time_cuda(torch, lambda: gpu.copy_(host, non_blocking=True), warmup, iters)
        return time_cuda(torch, lambda: host.copy_(gpu, non_blocking=True), warmup, iters)

    timings = _on_device(torch, device, timed)
    what = "host-to-device" if direction == "h2d" else "device-to-host"
    method = (
        f"torch {what} copy of a {size_bytes / GIB:g} GiB pinned buffer (non_blocking copy_), "
        f"CUDA events around each copy, {warmup} warm-up + {iters} timed, median; GB/s = 10^9 bytes/s"
    )
    return _rate(timings, work=size_bytes, scale=1e9, unit="GB/s", method=method, t0=t0)


def d2d_bandwidth(
    device: int, size_bytes: int = 2 * GIB, warmup: int = 3, iters: int = 10, warmup_s: float = 0.2
) -> Measurement:
    """Device-memory copy rate of one GPU in TB/s (10^12 bytes), counting bytes read plus written.

    Raises:
        TorchUnavailableError: no torch or no CUDA device.
    """
    torch = load_torch()
    t0 = time.monotonic()

    def timed() -> list[float]:
        src = torch.empty(size_bytes, dtype=torch.uint8, device=f"cuda:{device}")
        dst = torch.empty_like(src)
        return time_cuda(torch, lambda: dst.copy_(src), warmup, iters, warmup_s)

    timings = _on_device(torch, device, timed)
    method = (
        f"torch copy_ between two {size_bytes / GIB:g} GiB device buffers, bytes read + written "
        f"({2 * size_bytes / GIB:g} GiB per copy), CUDA events, >= {warmup} and >= {warmup_s:g} s warm-up, "
        f"{iters} timed, median; TB/s = 10^12 bytes/s"
    )
    return _rate(timings, work=2 * size_bytes, scale=1e12, unit="TB/s", method=method, t0=t0)


def bf16_matmul(
    device: int, n: int = 8192, warmup: int = 3, iters: int = 10, warmup_s: float = 0.0
) -> Measurement:
    """bf16 n x n x n matrix-product rate of one GPU in TFLOP/s (2n^3 per product), median.

    Random inputs: zeros run faster (less switching power) and would overstate the rate.
    With the default short warm-up this is the rate at boost clocks, before the power
    controller clamps them (H200: ~790 TFLOP/s); after ~0.5 s of load an H200 at its 700 W cap
    settles near 660 (seen on two H200s here). The burn-in tier judges that sustained rate.

    Raises:
        TorchUnavailableError: no torch or no CUDA device.
    """
    torch = load_torch()
    t0 = time.monotonic()

    def timed() -> list[float]:
        dev = f"cuda:{device}"
        a = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
        b = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
        out = torch.empty(n, n, dtype=torch.bfloat16, device=dev)
        return time_cuda(torch, lambda: torch.matmul(a, b, out=out), warmup, iters, warmup_s)

    timings = _on_device(torch, device, timed)
    method = (
        f"torch.matmul bf16 {n}x{n}x{n} on random normal data, 2n^3 FLOP per product, "
        f"CUDA events around each product, >= {warmup} and >= {warmup_s:g} s warm-up, {iters} timed, median"
    )
    return _rate(timings, work=2 * n**3, scale=1e12, unit="TFLOP/s", method=method, t0=t0)
