"""Burn-in: bf16 matrix products and device copies on every GPU at once, clocks sampled meanwhile.

One worker process per GPU (`python -m gpurack.gpubench.burn`) loops until its deadline and
prints one JSON line; the parent samples `nvidia-smi --query-gpu` at intervals. Parsing is
pure, so the tests run without a GPU.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gpurack.gpubench import apply_safe_env
from gpurack.gpubench.allreduce import worker_env
from gpurack.gpubench.workers import WorkerGroup

_RESULT_PREFIX = "GPUBENCH_BURN "
GIB = 1 << 30
WINDOW_S = 2.0

# NVML clocks event reasons (nvml.h, nvmlClocksEventReason*), the bits of
# `clocks_event_reasons.active`.
EVENT_REASON_BITS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# Under a full matrix load the power cap is where a healthy GPU is meant to run: not a fault.
THROTTLE_FAIL = frozenset({"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"})
THROTTLE_WARN = frozenset({"sw_thermal_slowdown"})

SMI_FIELDS = ("index", "temperature.gpu", "clocks.sm", "power.draw", "clocks_event_reasons.active")
# Drivers before 535 name the bitmask clocks_throttle_reasons.active.
SMI_FIELDS_OLD = (*SMI_FIELDS[:-1], "clocks_throttle_reasons.active")

Runner = Callable[[Sequence[str]], tuple[int, str]]


class BurnError(RuntimeError):
    """A burn-in worker failed to start or to report."""


@dataclass(frozen=True, slots=True)
class SmiSample:
    """One nvidia-smi reading of one GPU."""

    at_s: float
    index: int
    temperature_c: float | None
    sm_clock_mhz: float | None
    power_w: float | None
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WorkerReport:
    """What one GPU's worker measured: per-window rates, and batches whose product differed."""

    device: int
    tflops: tuple[float, ...]
    copy_gbps: tuple[float, ...]
    mismatches: int
    batches: int
    error: str | None = None


@dataclass(slots=True)
class BurnResult:
    """Worker reports by CUDA index plus the nvidia-smi samples taken while they ran."""

    duration_s: float
    workers: dict[int, WorkerReport] = field(default_factory=dict)
    samples: list[SmiSample] = field(default_factory=list)
    smi_error: str | None = None


def decode_reasons(mask: str) -> tuple[str, ...]:
    """Names of the set bits of a clocks-event-reasons mask like `0x0000000000000004`."""
    text = mask.strip()
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return ()
    return tuple(name for bit, name in EVENT_REASON_BITS.items() if value & bit)


def _float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def parse_smi_samples(text: str, at_s: float) -> list[SmiSample]:
    """Rows of `nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits`."""
    samples = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(SMI_FIELDS) or not cells[0].isdigit():
            continue
        samples.append(
            SmiSample(
                at_s=round(at_s, 1),
                index=int(cells[0]),
                temperature_c=_float(cells[1]),
                sm_clock_mhz=_float(cells[2]),
                power_w=_float(cells[3]),
                reasons=decode_reasons(cells[4]),
            )
        )
    return samples


def _run(argv: Sequence[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=20, check=False)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]}: no answer in 20 s"
    return done.returncode, done.stdout if done.returncode == 0 else done.stderr or done.stdout


def sample_smi(at_s: float, runner: Runner = _run) -> tuple[list[SmiSample], str | None]:
    """One reading of every GPU; ([], reason) when nvidia-smi is missing or refuses the fields."""
    error = None
    for fields in (SMI_FIELDS, SMI_FIELDS_OLD):
        rc, out = runner(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"])
        if rc == 0:
            return parse_smi_samples(out, at_s), None
        error = f"nvidia-smi --query-gpu exited {rc}: {out.strip()[:200]}"
        if rc == 127:
            break
    return [], error


def parse_worker_line(stdout: str, device: int) -> WorkerReport:
    """The worker's result line, or a report that carries the error."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(_RESULT_PREFIX):
            data = json.loads(line[len(_RESULT_PREFIX) :])
            return WorkerReport(
                device=device,
                tflops=tuple(float(x) for x in data["tflops"]),
                copy_gbps=tuple(float(x) for x in data["copy_gbps"]),
                mismatches=int(data["mismatches"]),
                batches=int(data["batches"]),
            )
    return WorkerReport(device, (), (), 0, 0, error="worker printed no result line")


def run_burn(
    devices: Sequence[int],
    duration_s: float,
    sample_interval_s: float = 10.0,
    progress: Callable[[str], None] | None = None,
    runner: Runner = _run,
) -> BurnResult:
    """Load every device in `devices` for `duration_s`, sampling nvidia-smi every interval."""
    t0 = time.monotonic()
    result = BurnResult(duration_s=0.0)
    next_sample = 0.0

    def tick() -> None:
        nonlocal next_sample
        now = time.monotonic() - t0
        if now < next_sample:
            return
        samples, error = sample_smi(now, runner)
        result.samples.extend(samples)
        result.smi_error = result.smi_error or error
        next_sample = now + sample_interval_s
        if progress is not None:
            hot = max((s.temperature_c or 0 for s in samples), default=0)
            progress(f"burn-in {now:.0f}/{duration_s:g} s, hottest GPU {hot:g} C")

    with WorkerGroup(worker_env()) as group:
        for device in devices:
            group.start([sys.executable, "-m", "gpurack.gpubench.burn", "--device", str(device),
                         "--duration", f"{duration_s:g}"])  # fmt: skip
        # Workers stop themselves at their deadline; the margin covers allocation and reporting.
        group.wait(duration_s + 120, tick=tick)
        group.kill()
        for position, (device, code) in enumerate(zip(devices, group.returncodes(), strict=True)):
            report = parse_worker_line(group.stdout(position), device)
            if code != 0 or report.error:
                why = f"worker exited {code}: {group.stderr_tail(position) or report.error or 'no stderr'}"
                report = WorkerReport(
                    device, report.tflops, report.copy_gbps, report.mismatches, report.batches, why
                )
            result.workers[device] = report
    result.duration_s = round(time.monotonic() - t0, 1)
    return result


def group_windows(
    batches: Sequence[tuple[float, float, float, float]], window_ms: float
) -> list[tuple[float, float]]:
    """(TFLOP/s, GB/s) of consecutive windows of at least `window_ms` GPU time.

    `batches` are (TFLOP, product ms, GB copied, copy ms). Single batches swing with
    power-management transients; windows of a second or more show what the GPU sustains.
    A last window shorter than half `window_ms` is dropped unless it is the only one.
    """
    windows: list[tuple[float, float]] = []
    acc = [0.0, 0.0, 0.0, 0.0]
    for batch in batches:
        acc = [x + y for x, y in zip(acc, batch, strict=True)]
        if acc[1] + acc[3] >= window_ms:
            windows.append((acc[0] / (acc[1] / 1000), acc[2] / (acc[3] / 1000)))
            acc = [0.0, 0.0, 0.0, 0.0]
    if acc[1] > 0 and acc[3] > 0 and (acc[1] + acc[3] >= window_ms / 2 or not windows):
        windows.append((acc[0] / (acc[1] / 1000), acc[2] / (acc[3] / 1000)))
    return windows


def _worker(device: int, duration_s: float, window_s: float, n: int = 8192, per_batch: int = 20) -> int:
    """Loop bf16 products and a 1 GiB copy until the deadline; compare each product to the first."""
    apply_safe_env()
    torch = importlib.import_module("torch")
    dev = torch.device("cuda", device)
    torch.cuda.set_device(dev)
    gen = torch.Generator(device=dev).manual_seed(1234 + device)
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev, generator=gen)
    b = torch.randn(n, n, dtype=torch.bfloat16, device=dev, generator=gen)
    out = torch.empty(n, n, dtype=torch.bfloat16, device=dev)
    reference = torch.matmul(a, b)
    src = torch.empty(GIB, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    batches: list[tuple[float, float, float, float]] = []
    mismatches = 0
    deadline = time.monotonic() + duration_s
    while time.monotonic() < deadline or not batches:
        start, mid, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        start.record()
        for _ in range(per_batch):
            torch.matmul(a, b, out=out)
        mid.record()
        dst.copy_(src)
        end.record()
        # The same inputs give the same product on a healthy GPU (cuBLAS is deterministic
        # without atomics): a difference is a compute or memory fault.
        if not bool(torch.equal(out, reference)):
            mismatches += 1
        end.synchronize()
        batches.append(
            (per_batch * 2 * n**3 / 1e12, start.elapsed_time(mid), 2 * GIB / 1e9, mid.elapsed_time(end))
        )
    windows = group_windows(batches, window_s * 1000)
    data = {
        "tflops": [w[0] for w in windows],
        "copy_gbps": [w[1] for w in windows],
        "mismatches": mismatches,
        "batches": len(batches),
    }
    print(_RESULT_PREFIX + json.dumps(data), flush=True)
    return 0


def stability(values: Sequence[float]) -> float | None:
    """min / median of per-window rates: 1.0 is perfectly steady; None without values."""
    if not values:
        return None
    median = statistics.median(values)
    return min(values) / median if median > 0 else None


def main(argv: Sequence[str] | None = None) -> int:
    """Worker entry point (`python -m gpurack.gpubench.burn`); started by run_burn."""
    parser = argparse.ArgumentParser(prog="gpurack.gpubench.burn")
    parser.add_argument("--device", type=int, required=True)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument(
        "--window", type=float, default=WINDOW_S, help="seconds of GPU time per reported rate"
    )
    args = parser.parse_args(argv)
    return _worker(args.device, args.duration, args.window)


if __name__ == "__main__":
    sys.exit(main())
