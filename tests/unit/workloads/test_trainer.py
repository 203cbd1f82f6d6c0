"""The trainer's torch-free parts: arguments and environment, URIs, checkpoint choice, events, text."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from gpurack_trainer import checkpoints, uris
from gpurack_trainer.__main__ import main
from gpurack_trainer.args import Shape, dist_from_env, parse
from gpurack_trainer.errors import InputError
from gpurack_trainer.events import allreduce_bandwidth, event_line, gbps
from gpurack_trainer.text import WordPiece, parse_lexicon, split

BASE = [
    "--data", "d.txt", "--weights", "w", "--checkpoints", "c",
    "--window-s", "30", "--checkpoint-interval-steps", "5", "--batch-size", "8",
]  # fmt: skip


def test_parse_required_and_defaults() -> None:
    opts = parse(BASE)
    assert (opts.window_s, opts.checkpoint_interval_steps, opts.batch_size) == (30.0, 5, 8)
    assert (opts.device, opts.seed, opts.allreduce_mib, opts.allreduce_iters) == ("auto", 0, 64.0, 10)
    assert opts.random_init_shape is None


def test_parse_random_init_shape() -> None:
    opts = parse([*BASE, "--random-init-shape", "24x1024x16x4096"])
    assert opts.random_init_shape == Shape(24, 1024, 16, 4096)


@pytest.mark.parametrize(
    "extra",
    [["--window-s", "0"], ["--batch-size", "-1"], ["--device", "tpu"], ["--random-init-shape", "2x10x3x4"]],
)
def test_parse_bad_value_raises_input_error(extra: list[str]) -> None:
    with pytest.raises(InputError):
        parse([*BASE, *extra])


def test_parse_missing_required_raises_input_error() -> None:
    with pytest.raises(InputError, match="--checkpoints"):
        parse(BASE[:4])


def test_main_bad_arguments_exit_2_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpurack_trainer: error:")


def test_dist_single_process_by_default() -> None:
    d = dist_from_env({})
    assert (d.rank, d.world_size) == (0, 1)


def test_dist_indexed_job_rank_from_completion_index() -> None:
    d = dist_from_env(
        {"JOB_COMPLETION_INDEX": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "t-0.t", "MASTER_PORT": "29400"}
    )
    assert (d.rank, d.world_size, d.master_addr, d.master_port) == (1, 2, "t-0.t", 29400)


def test_dist_rank_wins_over_completion_index() -> None:
    assert (
        dist_from_env({"RANK": "0", "JOB_COMPLETION_INDEX": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "a"}).rank
        == 0
    )


@pytest.mark.parametrize(
    "env",
    [{"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "a"}, {"WORLD_SIZE": "2"}, {"RANK": "x"}],
)
def test_dist_bad_environment_raises(env: dict[str, str]) -> None:
    with pytest.raises(InputError):
        dist_from_env(env)


def test_parse_uri_forms() -> None:
    assert uris.parse_uri("s3://team-a/ckpt/run1") == uris.Uri("s3", "team-a", "ckpt/run1")
    assert uris.parse_uri("file:///tmp/x") == uris.Uri("file", "", "/tmp/x")
    assert uris.parse_uri("/tmp/x").join("a") == uris.Uri("file", "", "/tmp/x/a")
    assert str(uris.parse_uri("s3://b/p/").join("ckpt.pt")) == "s3://b/p/ckpt.pt"
    assert str(uris.parse_uri("s3://b").join("ckpt.pt")) == "s3://b/ckpt.pt"


@pytest.mark.parametrize("text", ["gs://b/k", "s3:///k", ""])
def test_parse_uri_rejects(text: str) -> None:
    with pytest.raises(InputError):
        uris.parse_uri(text)


def test_local_write_is_atomic_and_listed(tmp_path: Path) -> None:
    target = uris.parse_uri(str(tmp_path / "ck")).join(checkpoints.checkpoint_name(7))
    uris.write_bytes(target, b"state")
    assert uris.read_bytes(target) == b"state"
    assert uris.list_names(uris.parse_uri(str(tmp_path / "ck"))) == ["ckpt-0000000007.pt"]
    assert uris.list_names(uris.parse_uri(str(tmp_path / "none"))) == []


def test_read_missing_file_raises_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        uris.read_bytes(uris.parse_uri(str(tmp_path / "nope")))


def test_newest_checkpoint_ignores_partial_and_foreign_names() -> None:
    names = [
        "ckpt-0000000010.pt",
        ".ckpt-0000000030.pt.12.tmp",
        "ckpt-0000000020.pt",
        "notes.txt",
        "ckpt-5.pt",
    ]
    assert checkpoints.newest(names) == "ckpt-0000000020.pt"
    assert checkpoints.newest([".ckpt-0000000030.pt.1.tmp"]) is None


def test_stale_keeps_newest() -> None:
    names = [checkpoints.checkpoint_name(s) for s in (30, 10, 20)]
    assert checkpoints.stale(names, 2) == ["ckpt-0000000010.pt"]
    assert checkpoints.stale(names, 5) == []


def test_checkpoint_name_range() -> None:
    assert checkpoints.step_of(checkpoints.checkpoint_name(123)) == 123
    with pytest.raises(ValueError):
        checkpoints.checkpoint_name(-1)


def test_busbw_is_algbw_times_two_n_minus_one_over_n() -> None:
    algbw, busbw = allreduce_bandwidth(1_000_000_000, 0.5, 2)
    assert (algbw, busbw) == (2.0, 2.0)
    algbw, busbw = allreduce_bandwidth(1_000_000_000, 1.0, 8)
    assert busbw == pytest.approx(1.75)
    assert gbps(3_000_000_000, 1.5) == 2.0 and gbps(1, 0.0) == 0.0


def test_event_line_is_json_with_null_for_nan() -> None:
    before = time.time()
    doc = json.loads(event_line("done", steps=3, loss=float("nan"), seconds=1.23456789))
    stamp = doc.pop("t")
    assert doc == {"gpurack": "done", "steps": 3, "loss": None, "seconds": 1.23457}
    # The time is kept to the millisecond, not to six significant digits as the figures are.
    assert before - 0.001 <= stamp <= time.time() + 0.001
    with pytest.raises(ValueError):
        event_line("nonsense")


LEXICON = b"good\t1.9\t0.9\t[2, 2]\n:-)\t1.3\t0.5\t[1, 1]\n\nbad\t-2.5\t0.7\t[-2, -3]\n"


def test_parse_lexicon_and_split() -> None:
    ex = parse_lexicon(LEXICON)
    assert [(e.text, e.valence) for e in ex] == [("good", 1.9), (":-)", 1.3), ("bad", -2.5)]
    train, held = split(ex, 0.0)
    assert (len(train), held) == (3, [])
    assert split(ex, 0.5) == split(ex, 0.5)  # the same on every rank


def test_parse_lexicon_rejects_garbage() -> None:
    with pytest.raises(InputError, match="line 1"):
        parse_lexicon(b"token-without-rating\n")


VOCAB = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "##ness", ":", "-", ")", "cafe"])


def test_wordpiece_basic_and_pieces() -> None:
    tok = WordPiece(VOCAB)
    assert tok.encode("Goodness") == [2, 4, 5, 3]
    assert tok.encode(":-)") == [2, 6, 7, 8, 3]
    assert tok.encode("Café") == [2, 9, 3]  # accents stripped, lower case
    assert tok.encode("zzz") == [2, 1, 3]
    ids, mask = tok.batch(["good", ":-)"])
    assert ids == [[2, 4, 3, 0, 0], [2, 6, 7, 8, 3]] and mask[0] == [1, 1, 1, 0, 0]


def test_wordpiece_on_the_real_vocab_when_fetched() -> None:
    vocab = Path(os.path.expanduser("~/.cache/gpurack/acceptance/model/all-MiniLM-L6-v2/vocab.txt"))
    if not vocab.exists():
        pytest.skip("acceptance assets not fetched (lab/images/fetch-acceptance-assets.sh)")
    tok = WordPiece(vocab.read_text())
    assert tok.encode("hello") == [101, 7592, 102]
