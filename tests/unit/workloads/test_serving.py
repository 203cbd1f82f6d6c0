"""The model server launcher without vLLM: the node-local cache (hits, its limit, least recently
used first, never a model a running server holds), the settings, and the runtime's command line.

"A running server" is a real child process that inherited the launcher's shared lock, as vLLM
does after the exec."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpurack_serving.__main__ import main
from gpurack_serving.cache import Launch, ModelCache, model_key
from gpurack_serving.drain import DrainMiddleware
from gpurack_serving.drain import main as drain_main
from gpurack_serving.errors import CacheFullError, InputError
from gpurack_serving.launch import cache_event, runtime_argv, settings_from
from gpurack_serving.store import DirSource, S3Source, source_for
from hypothesis import given, settings
from hypothesis import strategies as st


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


def _model(tmp_path: Path, name: str, size: int) -> DirSource:
    folder = tmp_path / "store" / name
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "sub" / "weights.bin").write_bytes(b"w" * (size - 2))
    return DirSource(f"file://{folder}", folder)


def _release(launch: Launch) -> None:
    os.close(launch.lock_fd)


@pytest.fixture
def cache(tmp_path: Path) -> ModelCache:
    return ModelCache(tmp_path / "cache", limit_bytes=250, clock=Clock())


@pytest.fixture
def server() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start `sleep` children holding a launch's lock, as a server that exec'd would."""
    children: list[subprocess.Popen[bytes]] = []
    yield children
    for child in children:
        child.kill()
        child.wait()


def _serve(launch: Launch, children: list[subprocess.Popen[bytes]]) -> None:
    children.append(subprocess.Popen(["sleep", "60"], pass_fds=(launch.lock_fd,)))
    _release(launch)  # only the child holds it now


def test_a_second_start_downloads_nothing(cache: ModelCache, tmp_path: Path) -> None:
    source = _model(tmp_path, "minilm", 100)
    first = cache.acquire(source)
    _release(first)
    (tmp_path / "store" / "minilm" / "config.json").unlink()  # the store changes; the cache does not
    second = cache.acquire(source)
    assert (first.hit, second.hit) == (False, True)
    assert first.bytes == second.bytes == 100
    assert Path(second.path, "sub", "weights.bin").stat().st_size == 98
    assert second.path == first.path and second.download_s == 0.0


def test_the_least_recently_used_model_goes_first(cache: ModelCache, tmp_path: Path) -> None:
    a, b, c = (_model(tmp_path, n, 100) for n in ("a", "b", "c"))
    for source in (a, b, a):  # a used last: b is the least recently used
        _release(cache.acquire(source))
    third = cache.acquire(c)
    assert third.evicted == (b.uri,)
    assert {m.uri for m in cache.list()} == {a.uri, c.uri}
    assert third.used_bytes == 200 <= third.limit_bytes


def test_a_model_a_server_holds_is_never_evicted(
    cache: ModelCache, tmp_path: Path, server: list[subprocess.Popen[bytes]]
) -> None:
    a, b, c = (_model(tmp_path, n, 100) for n in ("a", "b", "c"))
    _serve(cache.acquire(a), server)  # a: oldest, but running
    _release(cache.acquire(b))
    third = cache.acquire(c)
    assert third.evicted == (b.uri,)
    report = cache.report()
    assert [(m["uri"], m["in_use"]) for m in report["models"]] == [(a.uri, True), (c.uri, True)]  # type: ignore[attr-defined]


def test_a_cache_full_of_running_models_refuses_with_what_holds_it(
    cache: ModelCache, tmp_path: Path, server: list[subprocess.Popen[bytes]]
) -> None:
    a, b, c = (_model(tmp_path, n, 100) for n in ("a", "b", "c"))
    _serve(cache.acquire(a), server)
    _serve(cache.acquire(b), server)
    with pytest.raises(CacheFullError, match=r"running servers hold 200 of it \(file://.*/a, file://.*/b\)"):
        cache.acquire(c)
    assert {m.uri for m in cache.list()} == {a.uri, b.uri}
    server[0].kill()
    server[0].wait()  # a's server stops: its lock goes with the process
    assert cache.acquire(c).evicted == (a.uri,)


def test_a_model_larger_than_the_cache_is_refused(cache: ModelCache, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="more than the cache's limit of 250"):
        cache.acquire(_model(tmp_path, "huge", 300))
    assert cache.list() == []


def test_a_model_folder_without_its_record_is_removed_and_not_counted(
    cache: ModelCache, tmp_path: Path
) -> None:
    """A crash after the rename and before the record: the next start removes the folder."""
    stray = cache.root / "models" / "orphan-0123456789ab"
    stray.mkdir(parents=True)
    (stray / "weights.bin").write_bytes(b"x" * 500)  # more than the whole limit
    launch = cache.acquire(_model(tmp_path, "m", 100))
    assert not stray.exists() and launch.used_bytes == 100


def test_a_key_that_would_leave_the_models_folder_is_refused(tmp_path: Path) -> None:
    from gpurack_serving.store import _relative_parts

    assert _relative_parts("s3://a/m", "1_Pooling/config.json") == ["1_Pooling", "config.json"]
    for bad in ("../.lock", "/etc/passwd", "a//b", "a/./b", ""):
        with pytest.raises(InputError, match="outside the model's folder"):
            _relative_parts("s3://a/m", bad)


def test_an_interrupted_download_leaves_nothing_behind(cache: ModelCache, tmp_path: Path) -> None:
    class Failing(DirSource):
        def fetch(self, into: Path) -> None:
            into.mkdir(parents=True)
            (into / "half").write_bytes(b"x")
            raise InputError("the store went away")

    source = _model(tmp_path, "m", 100)
    with pytest.raises(InputError, match="went away"):
        cache.acquire(Failing(source.uri, source.path))
    assert cache.list() == []
    launch = cache.acquire(source)
    assert not launch.hit and not any((cache.root / "partial").iterdir())


def test_the_report_is_written_for_the_node(cache: ModelCache, tmp_path: Path) -> None:
    _release(cache.acquire(_model(tmp_path, "m", 100)))
    report = json.loads((cache.root / "report.json").read_text())
    assert report["limit_bytes"] == 250 and report["used_bytes"] == 100
    assert report["models"][0]["in_use"] is True  # written as its server starts
    assert cache.report()["models"][0]["in_use"] is False  # type: ignore[index]  # released: read live


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(3, 120)), min_size=1, max_size=12))
def test_the_limit_holds_after_any_sequence_of_starts(starts: list[tuple[int, int]]) -> None:
    """Whatever models start, in whatever order and sizes (a model keeps its first size)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cache = ModelCache(root / "cache", limit_bytes=250, clock=Clock())
        sources: dict[int, DirSource] = {}
        for which, size in starts:
            if which not in sources:
                sources[which] = _model(root, f"m{which}", size)
            launch = cache.acquire(sources[which])
            _release(launch)
            assert sum(m.bytes for m in cache.list()) == launch.used_bytes <= 250
            assert Path(launch.path).is_dir()


def test_keys_are_readable_and_distinct() -> None:
    assert model_key("s3://alpha/models/minilm").startswith("minilm-")
    assert model_key("s3://alpha/models/minilm") != model_key("s3://beta/models/minilm")
    assert model_key("s3://alpha/../..").startswith("model-")


def test_sources_by_uri(tmp_path: Path) -> None:
    s3 = source_for("s3://alpha/models/minilm")
    assert isinstance(s3, S3Source) and (s3.bucket, s3.prefix) == ("alpha", "models/minilm/")
    assert isinstance(source_for(f"file://{tmp_path}"), DirSource)
    for bad in ("s3://alpha", "s3:///x", "http://x/y", ""):
        with pytest.raises(InputError):
            source_for(bad)


def test_settings_from_the_environment(tmp_path: Path) -> None:
    env = {
        "GPURACK_MODEL_URI": "s3://a/m",
        "GPURACK_MODEL_CACHE": str(tmp_path),
        "GPURACK_MODEL_CACHE_LIMIT": "9",
    }
    got = settings_from(env)
    assert (got.cache, got.cache_limit, got.port, got.served_name) == (tmp_path, 9, 8000, "model")
    bad_settings = (
        {},
        {k: v for k, v in env.items() if k != "GPURACK_MODEL_CACHE"},
        {**env, "GPURACK_MODEL_CACHE_LIMIT": "-1"},
        {**env, "GPURACK_MODEL_CACHE_LIMIT": "\u00b2"},  # a digit to str.isdigit, not to int
        {**env, "GPURACK_PORT": "x"},
    )
    for bad in bad_settings:
        with pytest.raises(InputError):
            settings_from(bad)


def test_the_runtime_command_keeps_what_gpurack_sets(tmp_path: Path) -> None:
    env = {
        "GPURACK_MODEL_URI": "s3://a/m",
        "GPURACK_MODEL_CACHE": "/cache",
        "GPURACK_MODEL_CACHE_LIMIT": "9",
        "GPURACK_SERVED_NAME": "embed",
    }
    argv = runtime_argv(settings_from(env), "/cache/m", ["--runner", "pooling"])
    assert argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert argv[argv.index("--model") + 1] == "/cache/m" and argv[-2:] == ["--runner", "pooling"]
    assert argv[argv.index("--served-model-name") + 1] == "embed"
    assert argv.count("--enforce-eager") == 1  # no compiler in the image for torch.compile
    # One replica per server: its worker in the engine's process, not a third Python process.
    assert argv[argv.index("--distributed-executor-backend") + 1] == "uni"
    # A stopping server drains its connections, then finishes what is in flight (drain.py).
    assert argv[argv.index("--middleware") + 1] == "gpurack_serving.drain.DrainMiddleware"
    assert argv[argv.index("--shutdown-timeout") + 1] == "15"
    own = runtime_argv(settings_from(env), "/cache/m", ["--shutdown-timeout=5"])
    assert "--shutdown-timeout" not in own and own[-1] == "--shutdown-timeout=5"
    ray = runtime_argv(settings_from(env), "/cache/m", ["--distributed-executor-backend", "ray"])
    assert ray.count("--distributed-executor-backend") == 1 and ray[-1] == "ray"
    with pytest.raises(InputError, match="--port"):
        runtime_argv(settings_from(env), "/cache/m", ["--port=9"])


def test_the_cache_line_says_what_happened(cache: ModelCache, tmp_path: Path) -> None:
    source = _model(tmp_path, "m", 100)
    event = json.loads(cache_event(cache.acquire(source), source.uri))
    assert event["gpurack"] == "model-cache" and event["hit"] is False and event["bytes"] == 100


def test_bad_settings_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GPURACK_MODEL_URI", raising=False)
    assert main([]) == 2
    assert capsys.readouterr().err == "gpurack_serving: GPURACK_MODEL_URI is not set\n"


def test_the_launcher_becomes_the_runtime(tmp_path: Path) -> None:
    """A real launch through `python -m gpurack_serving`, with a fake vllm package that prints
    its arguments: the model is fetched into the cache and the exec gets its folder."""
    fake = tmp_path / "fake" / "vllm" / "entrypoints" / "openai"
    fake.mkdir(parents=True)
    for folder in (fake, fake.parent, fake.parent.parent):
        (folder / "__init__.py").write_text("")
    (fake / "api_server.py").write_text(
        "import json, os, sys; print(json.dumps(sys.argv[1:]));"
        "print(os.environ['VLLM_CACHE_ROOT'], os.environ['VLLM_ENABLE_V1_MULTIPROCESSING'])\n"
    )
    source = _model(tmp_path, "minilm", 50)
    serving = Path(__file__).resolve().parents[3] / "workloads" / "serving"
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": f"{serving}:{tmp_path / 'fake'}",
        "GPURACK_MODEL_URI": source.uri,
        "GPURACK_MODEL_CACHE": str(tmp_path / "cache"),
        "GPURACK_MODEL_CACHE_LIMIT": "1000",
    }
    done = subprocess.run(
        [sys.executable, "-m", "gpurack_serving", "--runner", "pooling"],
        env=env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    cache_line, runtime_line, runtime_cache = done.stdout.splitlines()
    assert json.loads(cache_line)["hit"] is False
    args = json.loads(runtime_line)
    assert args[args.index("--model") + 1] == str(tmp_path / "cache" / "models" / model_key(source.uri))
    assert args[-2:] == ["--runner", "pooling"]
    # vLLM's own cache (its model inspection) lives beside the models, so later starts on the node
    # skip the inspection's extra Python process.
    # The worker in the engine's process, with `--distributed-executor-backend uni`.
    assert runtime_cache == f"{tmp_path / 'cache' / 'runtime' / 'vllm'} 0"


def _answer(marker: Path, scope_type: str = "http") -> list[dict[str, Any]]:
    """What a server would send for one request through DrainMiddleware (marker = its drain file)."""
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json"), (b"Connection", b"keep-alive")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    asyncio.run(DrainMiddleware(app, marker)({"type": scope_type}, receive, send))
    return sent


def test_a_draining_server_closes_each_connection_after_its_answer(tmp_path: Path) -> None:
    marker = tmp_path / "draining"
    start, body = _answer(marker)
    assert (b"connection", b"close") not in start["headers"] and body["body"] == b"{}"
    marker.touch()  # the preStop hook ran
    start, body = _answer(marker)
    assert start["headers"] == [(b"content-type", b"application/json"), (b"connection", b"close")]
    assert body == {"type": "http.response.body", "body": b"{}"}  # the answer itself is whole
    assert _answer(marker, "lifespan")[0]["headers"][-1] == (b"Connection", b"keep-alive")


def test_the_prestop_hook_marks_the_server_draining_then_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "draining"
    monkeypatch.setenv("GPURACK_DRAIN_FILE", str(marker))
    started = time.monotonic()
    assert drain_main(["0.2"]) == 0
    assert marker.is_file() and time.monotonic() - started >= 0.2
    for bad in ([], ["x"], ["-1"], ["1", "2"]):
        assert drain_main(bad) == 2
    assert capsys.readouterr().err.count("expected SECONDS") == 4
