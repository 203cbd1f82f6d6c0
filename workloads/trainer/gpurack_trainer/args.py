"""Command line and the torchrun-style environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NoReturn

from gpurack_trainer.errors import InputError

Device = Literal["auto", "cpu", "cuda"]


@dataclass(frozen=True, slots=True)
class Shape:
    """A BERT encoder shape, for a random-init model of another size than the weights."""

    layers: int
    hidden: int
    heads: int
    intermediate: int


@dataclass(frozen=True, slots=True)
class Options:
    data: str
    weights: str
    checkpoints: str
    window_s: float
    checkpoint_interval_steps: int
    batch_size: int
    allreduce_mib: float
    allreduce_iters: int
    device: Device
    seed: int
    log_every_steps: int
    lr: float
    eval_fraction: float
    keep_checkpoints: int
    rendezvous_timeout_s: float
    random_init_shape: Shape | None


@dataclass(frozen=True, slots=True)
class Dist:
    rank: int
    world_size: int
    master_addr: str
    master_port: int


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, no usage block: the caller is a Job whose log is read by a program.
        raise InputError(message)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _shape(text: str) -> Shape:
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)x(\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected LAYERSxHIDDENxHEADSxINTERMEDIATE, got {text}")
    shape = Shape(*(int(g) for g in m.groups()))
    if min(shape.layers, shape.hidden, shape.heads, shape.intermediate) < 1 or shape.hidden % shape.heads:
        raise argparse.ArgumentTypeError(f"hidden size must be a positive multiple of heads: {text}")
    return shape


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m gpurack_trainer", description=__doc__)
    p.add_argument("--data", required=True, help="the VADER lexicon: s3://bucket/key or a local file")
    p.add_argument(
        "--weights", required=True, help="folder or prefix with config.json, vocab.txt, model.safetensors"
    )
    p.add_argument("--checkpoints", required=True, help="folder or prefix for ckpt-<step>.pt")
    p.add_argument("--window-s", type=_positive_float, required=True, help="training seconds across restarts")
    p.add_argument("--checkpoint-interval-steps", type=_positive_int, required=True)
    p.add_argument("--batch-size", type=_positive_int, required=True, help="samples per rank per step")
    p.add_argument("--allreduce-mib", type=_positive_float, default=64.0)
    p.add_argument("--allreduce-iters", type=_positive_int, default=10)
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every-steps", type=_positive_int, default=10)
    p.add_argument("--lr", type=_positive_float, default=1e-4)
    p.add_argument(
        "--eval-fraction", type=float, default=0.1, help="held-out share of the lexicon, 0 for none"
    )
    p.add_argument("--keep-checkpoints", type=_positive_int, default=2, help="newest checkpoints kept")
    p.add_argument("--rendezvous-timeout-s", type=_positive_float, default=300.0)
    p.add_argument(
        "--random-init-shape",
        type=_shape,
        default=None,
        metavar="LxHxAxI",
        help="a random-init encoder of this shape instead of the pretrained weights (vocab kept)",
    )
    return p


def parse(argv: Sequence[str]) -> Options:
    """The options, validated.

    Raises:
        InputError: for a bad or missing argument.
    """
    ns = build_parser().parse_args(list(argv))
    if not 0 <= ns.eval_fraction < 1:
        raise InputError(f"--eval-fraction must be in [0, 1), got {ns.eval_fraction}")
    return Options(
        data=ns.data,
        weights=ns.weights,
        checkpoints=ns.checkpoints,
        window_s=ns.window_s,
        checkpoint_interval_steps=ns.checkpoint_interval_steps,
        batch_size=ns.batch_size,
        allreduce_mib=ns.allreduce_mib,
        allreduce_iters=ns.allreduce_iters,
        device=ns.device,
        seed=ns.seed,
        log_every_steps=ns.log_every_steps,
        lr=ns.lr,
        eval_fraction=ns.eval_fraction,
        keep_checkpoints=ns.keep_checkpoints,
        rendezvous_timeout_s=ns.rendezvous_timeout_s,
        random_init_shape=ns.random_init_shape,
    )


def _int_env(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise InputError(f"{name} must be an integer, got {raw!r}") from None


def dist_from_env(env: Mapping[str, str] | None = None) -> Dist:
    """Rank and world as torchrun sets them; an Indexed Job's JOB_COMPLETION_INDEX stands in for RANK.

    Raises:
        InputError: for a non-integer value, a rank outside the world, or a missing MASTER_ADDR.
    """
    env = os.environ if env is None else env
    world = _int_env(env, "WORLD_SIZE") or 1
    rank = _int_env(env, "RANK")
    if rank is None:
        rank = _int_env(env, "JOB_COMPLETION_INDEX")
    rank = 0 if rank is None else rank
    if world < 1 or not 0 <= rank < world:
        raise InputError(f"RANK {rank} is outside WORLD_SIZE {world}")
    addr = env.get("MASTER_ADDR", "")
    port = _int_env(env, "MASTER_PORT") or 29500
    if world > 1 and not addr:
        raise InputError("MASTER_ADDR is needed when WORLD_SIZE > 1")
    return Dist(rank=rank, world_size=world, master_addr=addr or "127.0.0.1", master_port=port)
