"""The training run: stage, rendezvous, all-reduce benchmark, restore, train for the window, checkpoint."""

from __future__ import annotations

import datetime
import io
import os
import random
import socket
import time
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from gpurack_trainer import checkpoints, uris
from gpurack_trainer.args import Dist, Options
from gpurack_trainer.errors import InputError, TrainerError
from gpurack_trainer.events import allreduce_bandwidth, emit, log
from gpurack_trainer.model import Regressor, init_random, load_pretrained, parameter_count, shape_from_config
from gpurack_trainer.text import Example, WordPiece, parse_lexicon, split


def _device(opts: Options) -> torch.device:
    if opts.device == "cuda" or (opts.device == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise InputError("--device cuda but no CUDA device is visible")
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def _resolve(host: str, timeout_s: float) -> str:
    """The peer's address, retried: a headless Service publishes a pod's name only once it runs."""
    deadline = time.monotonic() + timeout_s
    delay = 0.5
    while True:
        try:
            return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][4][0]  # type: ignore[return-value]
        except socket.gaierror as exc:
            if time.monotonic() >= deadline:
                raise TrainerError(
                    f"MASTER_ADDR {host!r} did not resolve in {timeout_s:.0f} s: {exc}"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


def _rendezvous(d: Dist, backend: str, timeout_s: float) -> None:
    addr = _resolve(d.master_addr, timeout_s)
    # TCPStore's client retries its connection until the timeout, so a rank that starts
    # before rank 0 listens waits rather than fails.
    dist.init_process_group(
        backend,
        init_method=f"tcp://{addr}:{d.master_port}" if ":" not in addr else f"tcp://[{addr}]:{d.master_port}",
        rank=d.rank,
        world_size=d.world_size,
        timeout=datetime.timedelta(seconds=timeout_s),
    )


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _allreduce_bench(opts: Options, d: Dist, device: torch.device, backend: str) -> None:
    n = int(opts.allreduce_mib * 1024 * 1024) // 4
    buf = torch.ones(n, dtype=torch.float32, device=device)
    for _ in range(2):
        dist.all_reduce(buf)
    _sync(device)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(opts.allreduce_iters):
        dist.all_reduce(buf)
    _sync(device)
    seconds = time.perf_counter() - start
    algbw, busbw = allreduce_bandwidth(n * 4, seconds / opts.allreduce_iters, d.world_size)
    if d.rank == 0:
        emit(
            "allreduce",
            bytes=n * 4,
            iterations=opts.allreduce_iters,
            seconds=seconds,
            algbw_gbps=algbw,
            busbw_gbps=busbw,
            world_size=d.world_size,
            backend=backend,
        )
    del buf


def _stage(opts: Options) -> tuple[bytes, bytes, bytes, bytes | None, int, float]:
    start = time.perf_counter()
    weights = uris.parse_uri(opts.weights)
    data = uris.read_bytes(uris.parse_uri(opts.data))
    config = uris.read_bytes(weights.join("config.json"))
    vocab = uris.read_bytes(weights.join("vocab.txt"))
    tensors = None if opts.random_init_shape else uris.read_bytes(weights.join("model.safetensors"))
    total = len(data) + len(config) + len(vocab) + (len(tensors) if tensors else 0)
    return data, config, vocab, tensors, total, time.perf_counter() - start


def _rng_state(device: torch.device) -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: dict[str, Any], device: torch.device) -> None:
    # torch.load's map_location moved the state tensors to the device; RNG states live on the CPU.
    torch.set_rng_state(state["torch"].cpu())
    random.setstate(state["python"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"].cpu(), device)


@dataclass
class _Job:
    """What one attempt trains: the model, its optimizer, the tokenized data and the progress."""

    model: Regressor
    optim: torch.optim.Optimizer
    tok: WordPiece
    ids: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    y: torch.Tensor
    held: list[Example]
    step: int = 0
    elapsed: float = 0.0
    first_loss: float | None = None


def _prepare(opts: Options, d: Dist, device: torch.device) -> _Job:
    data, config, vocab_raw, tensors_raw, staged_bytes, staged_s = _stage(opts)
    if d.rank == 0:
        emit("staging", seconds=staged_s, bytes=staged_bytes)
    vocab_size, shape, max_pos, eps = shape_from_config(config)
    tok = WordPiece(vocab_raw.decode("utf-8"))
    train_set, held = split(parse_lexicon(data), opts.eval_fraction)
    if not train_set:
        raise InputError("no training examples after the eval split")
    model = Regressor(vocab_size, opts.random_init_shape or shape, max_pos, eps)
    if opts.random_init_shape:
        init_random(model, opts.seed)
        log(f"random-init encoder {opts.random_init_shape}, {parameter_count(model) / 1e6:.1f} M parameters")
    else:
        from safetensors.torch import load as load_safetensors  # noqa: PLC0415

        try:
            tensors = load_safetensors(tensors_raw)
        except Exception as exc:  # safetensors raises its own SafetensorError
            raise InputError(f"model.safetensors is unreadable: {exc}") from None
        load_pretrained(model, tensors)
        del tensors
    model.to(device)
    ids, mask = tok.batch([e.text for e in train_set])
    return _Job(
        model=model,
        optim=torch.optim.AdamW(model.parameters(), lr=opts.lr, weight_decay=0.01),
        tok=tok,
        ids=torch.tensor(ids, dtype=torch.long, device=device),
        mask=torch.tensor(mask, dtype=torch.long, device=device),
        lengths=torch.tensor([sum(m) for m in mask], dtype=torch.long),
        y=torch.tensor([e.valence for e in train_set], dtype=torch.float32, device=device),
        held=held,
    )


def _restore(job: _Job, ckpt_dir: uris.Uri, d: Dist, device: torch.device) -> None:
    """Every rank reads the newest complete checkpoint itself (no broadcast needed)."""
    name = checkpoints.newest(uris.list_names(ckpt_dir))
    if name is None:
        if d.rank == 0:
            emit("resume", step=0, seconds=0.0, bytes=0, uri=str(ckpt_dir))
        return
    start = time.perf_counter()
    raw = uris.read_bytes(ckpt_dir.join(name))
    read_s = time.perf_counter() - start
    state = torch.load(io.BytesIO(raw), map_location=device, weights_only=True)
    job.model.load_state_dict(state["model"])
    job.optim.load_state_dict(state["optim"])
    job.step, job.elapsed, job.first_loss = (
        int(state["step"]),
        float(state["elapsed_s"]),
        state.get("first_loss"),
    )
    _set_rng_state(state["rng"], device)
    _sync(device)
    seconds = time.perf_counter() - start
    if d.rank == 0:
        uri = str(ckpt_dir.join(name))
        emit("resume", step=job.step, seconds=seconds, bytes=len(raw), uri=uri, read_s=read_s)


def run(opts: Options, d: Dist) -> dict[str, Any]:
    """Train for the rest of the window; returns the `done` event's fields."""
    device = _device(opts)
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(opts.seed)
    random.seed(opts.seed)
    job = _prepare(opts, d, device)
    if d.world_size > 1:
        _rendezvous(d, backend, opts.rendezvous_timeout_s)
        _allreduce_bench(opts, d, device, backend)
    ckpt_dir = uris.parse_uri(opts.checkpoints)
    _restore(job, ckpt_dir, d, device)

    start_step, attempt_start = job.step, time.perf_counter()
    loss_value = _train(opts, d, device, job, ckpt_dir)
    _sync(device)
    seconds = time.perf_counter() - attempt_start
    eval_loss = _evaluate(job.model, job.tok, job.held, device) if job.held else None
    samples = (job.step - start_step) * opts.batch_size * d.world_size
    if d.world_size > 1:
        dist.barrier()
        dist.destroy_process_group()
    return {
        "steps": job.step,
        "samples": samples,
        "seconds": seconds,
        "elapsed_s": job.elapsed,
        "samples_per_s": samples / seconds if seconds > 0 else 0.0,
        "loss": loss_value,
        "first_loss": job.first_loss,
        "eval_loss": eval_loss,
        "rank": d.rank,
        "world_size": d.world_size,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "parameters": parameter_count(job.model),
    }


def _train(opts: Options, d: Dist, device: torch.device, job: _Job, ckpt_dir: uris.Uri) -> float:
    """Steps until the window is spent; returns the last step's loss (NaN when none ran)."""
    net: torch.nn.Module = job.model
    if d.world_size > 1:
        net = DistributedDataParallel(job.model, device_ids=[device.index] if device.type == "cuda" else None)
    cuda = device.type == "cuda"
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else torch.autocast("cpu", enabled=False)
    loss, loss_value = None, float("nan")
    last_log_t, last_log_step = time.perf_counter(), job.step
    loop_origin = time.perf_counter() - job.elapsed  # the loop's wall time, checkpoints included
    while True:
        job.elapsed = time.perf_counter() - loop_origin
        flag = torch.tensor([1.0 if job.elapsed >= opts.window_s else 0.0], device=device)
        if d.world_size > 1:
            dist.all_reduce(flag)  # rank clocks differ: stop together when any rank's window is over
        if flag.item() > 0:
            break
        # Batches are a function of (seed, step, rank): a resumed run draws what the lost one would have.
        gen = torch.Generator().manual_seed(opts.seed * 1_000_003 + job.step * d.world_size + d.rank)
        idx = torch.randint(len(job.y), (opts.batch_size,), generator=gen)
        width = int(job.lengths[idx].max())  # most tokens are 1-3 pieces: pad to the batch's longest only
        idx = idx.to(device)
        net.train()
        with amp:
            pred = net(job.ids[idx, :width], job.mask[idx, :width])
        loss = torch.nn.functional.mse_loss(pred.float(), job.y[idx])
        job.optim.zero_grad(set_to_none=True)
        loss.backward()
        job.optim.step()
        job.step += 1
        logging = job.step % opts.log_every_steps == 0
        saving = job.step % opts.checkpoint_interval_steps == 0
        if job.first_loss is None or logging or saving:
            loss_value = float(loss.item())  # a device sync: only when the value is used
            job.first_loss = loss_value if job.first_loss is None else job.first_loss
        if logging and d.rank == 0:
            now = time.perf_counter()
            rate = (job.step - last_log_step) * opts.batch_size * d.world_size / max(now - last_log_t, 1e-9)
            emit("step", step=job.step, loss=loss_value, samples_per_s=rate)
            last_log_t, last_log_step = now, job.step
        if saving and d.rank == 0:
            _save(opts, ckpt_dir, job, time.perf_counter() - loop_origin, device)
    return float(loss.item()) if loss is not None else loss_value


def _save(opts: Options, ckpt_dir: uris.Uri, job: _Job, elapsed: float, device: torch.device) -> None:
    start = time.perf_counter()
    buf = io.BytesIO()
    state = {
        "model": job.model.state_dict(),
        "optim": job.optim.state_dict(),
        "step": job.step,
        "elapsed_s": elapsed,
        "first_loss": job.first_loss,
        "rng": _rng_state(device),
    }
    torch.save(state, buf)
    serialize_s = time.perf_counter() - start
    target = ckpt_dir.join(checkpoints.checkpoint_name(job.step))
    uris.write_bytes(target, buf.getbuffer())
    seconds = time.perf_counter() - start
    emit(
        "checkpoint",
        step=job.step,
        seconds=seconds,
        bytes=buf.getbuffer().nbytes,
        uri=str(target),
        serialize_s=serialize_s,
        write_s=seconds - serialize_s,
    )
    try:
        for old in checkpoints.stale(uris.list_names(ckpt_dir), opts.keep_checkpoints):
            uris.delete(ckpt_dir.join(old))
    except Exception as exc:  # a store that refuses deletes keeps every checkpoint: not fatal
        log(f"could not delete old checkpoints under {ckpt_dir}: {exc}")


def _evaluate(model: Regressor, tok: WordPiece, held: list[Example], device: torch.device) -> float:
    ids, mask = tok.batch([e.text for e in held])
    model.eval()
    with torch.no_grad():
        pred = model(torch.tensor(ids, device=device), torch.tensor(mask, device=device))
        y = torch.tensor([e.valence for e in held], device=device)
        return float(torch.nn.functional.mse_loss(pred.float(), y).item())
