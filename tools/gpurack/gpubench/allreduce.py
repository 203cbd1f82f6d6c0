"""All-reduce bus bandwidth across the GPUs of one node: one process per GPU, NCCL on 127.0.0.1.

The parent (`run_allreduce`) needs no torch: it starts `python -m gpurack.gpubench.allreduce`
once per GPU with the multicast-off environment, and reads rank 0's JSON line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurack.gpubench import SAFE_ENV, apply_safe_env
from gpurack.gpubench.limits import busbw_from_algbw
from gpurack.gpubench.workers import WorkerGroup

GIB = 1 << 30
DEFAULT_SIZES: tuple[int, ...] = (2 * GIB, 4 * GIB)
_RESULT_PREFIX = "GPUBENCH_ALLREDUCE "


class AllReduceError(RuntimeError):
    """The all-reduce workers failed, disagreed on the sum, or ran past their time."""


@dataclass(frozen=True, slots=True)
class SizePoint:
    """Timings of one message size: per-iteration slowest-rank times and the derived rates."""

    size_bytes: int
    timings_ms: tuple[float, ...]
    algbw_gbps: float
    busbw_gbps: float


@dataclass(frozen=True, slots=True)
class AllReduceResult:
    """What the workers measured, one point per message size."""

    ranks: int
    devices: tuple[int, ...]
    points: tuple[SizePoint, ...]
    method: str
    nccl: str | None
    duration_s: float

    def point(self, size_bytes: int) -> SizePoint | None:
        """The point for `size_bytes`, None when it was not measured."""
        return next((p for p in self.points if p.size_bytes == size_bytes), None)


def worker_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment of a worker: the caller's, SAFE_ENV forced, and gpurack importable."""
    env = dict(os.environ if base is None else base)
    apply_safe_env(env)
    package_root = str(Path(__file__).resolve().parents[2])
    paths = [package_root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def parse_worker_output(stdout: str) -> dict[str, Any]:
    """Rank 0's result line from its stdout.

    Raises:
        AllReduceError: no result line, or one that is not JSON.
    """
    for line in reversed(stdout.splitlines()):
        if line.startswith(_RESULT_PREFIX):
            try:
                data = json.loads(line[len(_RESULT_PREFIX) :])
            except json.JSONDecodeError as exc:
                raise AllReduceError(f"rank 0 printed a result that is not JSON: {exc}") from exc
            if not isinstance(data, dict):
                raise AllReduceError("rank 0 printed a result that is not an object")
            return data
    raise AllReduceError("rank 0 printed no result line")


def result_from_worker(data: dict[str, Any], devices: Sequence[int], duration_s: float) -> AllReduceResult:
    """Build the result from rank 0's JSON: rates from the median slowest-rank time per size."""
    ranks = int(data["ranks"])
    points = []
    for raw in data["points"]:
        size = int(raw["size_bytes"])
        timings = tuple(float(t) for t in raw["timings_ms"])
        median_ms = statistics.median(timings)
        algbw = size / (median_ms / 1000) / 1e9
        points.append(SizePoint(size, timings, algbw, busbw_from_algbw(algbw, ranks)))
    return AllReduceResult(
        ranks=ranks,
        devices=tuple(devices),
        points=tuple(points),
        method=str(data.get("method", "")),
        nccl=data.get("nccl"),
        duration_s=round(duration_s, 3),
    )


def run_allreduce(
    devices: Sequence[int],
    sizes: Sequence[int] = DEFAULT_SIZES,
    warmup: int = 5,
    iters: int = 20,
    timeout_s: float = 240.0,
) -> AllReduceResult:
    """Measure all-reduce across `devices` (CUDA indices), one worker process per GPU.

    Raises:
        AllReduceError: fewer than two devices, a worker failed or timed out, or a wrong sum.
    """
    if len(devices) < 2:
        raise AllReduceError(f"an all-reduce measurement needs at least 2 GPUs, got {len(devices)}")
    port = _free_port()
    t0 = time.monotonic()
    with WorkerGroup(worker_env()) as group:
        for rank, device in enumerate(devices):
            group.start([
                sys.executable, "-m", "gpurack.gpubench.allreduce",
                "--rank", str(rank), "--world", str(len(devices)), "--device", str(device),
                "--port", str(port), "--warmup", str(warmup), "--iters", str(iters),
                "--sizes", ",".join(str(s) for s in sizes),
            ])  # fmt: skip
        ended = group.wait(timeout_s)
        codes = group.returncodes()
        failed = [(rank, code) for rank, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            rank, code = failed[0]
            raise AllReduceError(
                f"all-reduce rank {rank} exited {code}: {group.stderr_tail(rank) or 'no stderr'}"
            )
        if not ended:
            hung = [rank for rank, code in enumerate(codes) if code is None]
            raise AllReduceError(f"all-reduce workers ran past {timeout_s:g} s (ranks {hung} still running)")
        data = parse_worker_output(group.stdout(0))
    return result_from_worker(data, devices, time.monotonic() - t0)


def method_text(nccl: str, world: int, warmup: int, iters: int) -> str:
    """How the all-reduce figures were measured, as the result's `method` says it."""
    return (
        f"torch.distributed all_reduce (sum, float32, in place) over NCCL {nccl}, {world} "
        f"processes on 127.0.0.1, one per GPU; {warmup} warm-up + {iters} timed per "
        "size, CUDA events, slowest rank per iteration, median; algbw = bytes/time, "
        "busbw = algbw x 2(n-1)/n (nccl-tests); NVLink multicast off ("
        + ", ".join(f"{k}={v}" for k, v in SAFE_ENV.items())
        + ")"
    )


def _sum_is_right(torch: Any, dist: Any, device: Any, rank: int, world: int) -> bool:
    """All-reduce rank+1 from every rank and compare with 1+2+...+world; say so on stderr if wrong."""
    probe = torch.full((1 << 20,), float(rank + 1), dtype=torch.float32, device=device)
    dist.all_reduce(probe)
    expected = world * (world + 1) / 2
    if bool(torch.all(probe == expected)):
        return True
    got = probe[probe != expected][:3].tolist()
    print(f"rank {rank}: wrong all-reduce sum, expected {expected}, got {got}", file=sys.stderr)
    return False


def _worker(args: argparse.Namespace) -> int:
    """One rank: check the sum on a small tensor, then time in-place all-reduce per size."""
    apply_safe_env()
    torch = importlib.import_module("torch")
    dist = importlib.import_module("torch.distributed")
    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    dist.init_process_group(
        "nccl",
        init_method=f"tcp://127.0.0.1:{args.port}",
        rank=args.rank,
        world_size=args.world,
        device_id=device,
    )
    try:
        if not _sum_is_right(torch, dist, device, args.rank, args.world):
            return 3
        points = []
        for size in (int(s) for s in args.sizes.split(",")):
            # Zeros keep the sums finite however many times the buffer is reduced in place.
            buf = torch.zeros(size // 4, dtype=torch.float32, device=device)
            for _ in range(args.warmup):
                dist.all_reduce(buf)
            torch.cuda.synchronize()
            dist.barrier(device_ids=[args.device])
            pairs = []
            for _ in range(args.iters):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                dist.all_reduce(buf)
                end.record()
                pairs.append((start, end))
            torch.cuda.synchronize()
            local = torch.tensor([s.elapsed_time(e) for s, e in pairs], dtype=torch.float64, device=device)
            # An all-reduce is done when the slowest rank is: keep each iteration's maximum.
            dist.all_reduce(local, op=dist.ReduceOp.MAX)
            points.append({"size_bytes": size, "timings_ms": local.tolist()})
            del buf, local
            torch.cuda.empty_cache()
        if args.rank == 0:
            nccl = ".".join(str(p) for p in torch.cuda.nccl.version())
            method = method_text(nccl, args.world, args.warmup, args.iters)
            result = {"ranks": args.world, "points": points, "method": method, "nccl": nccl}
            print(_RESULT_PREFIX + json.dumps(result), flush=True)
    finally:
        dist.destroy_process_group()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Worker entry point (`python -m gpurack.gpubench.allreduce`); started by run_allreduce."""
    parser = argparse.ArgumentParser(prog="gpurack.gpubench.allreduce")
    for name in ("rank", "world", "device", "port", "warmup", "iters"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--sizes", required=True, help="message sizes in bytes, comma-separated")
    return _worker(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
