"""The command line, read and checked before locust is imported: importing locust patches the
process with gevent, and `--help` or a bad argument should not pay for that."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn
from urllib.parse import urlsplit

from gpurack_loadgen.errors import LoadgenError

ENDPOINT = "/v1/embeddings"
DEFAULT_SECONDS = 600.0  # the time bound when only --requests is given: a run always ends
MAX_SECONDS = 3600.0
MAX_REQUESTS = 10_000_000  # every latency is kept: 80 MB at most
MAX_CONCURRENCY = 1024
DEFAULT_TEXT = "gpurack measures how the model server answers under load."
CONNECT_S = 5.0  # the reachability check's connect timeout
MAX_RETRIES = 3


@dataclass(frozen=True, slots=True)
class Settings:
    """One run: `concurrency` requests in flight until `requests` are answered or `seconds` pass."""

    url: str  # the server's base URL, no trailing slash
    model: str
    concurrency: int
    requests: int | None
    seconds: float
    text: str
    timeout: float  # per request (connect, then each read)
    wait_ready: float  # > 0: first wait as long for one good answer; 0: check the port once
    retries: int  # sends again a request whose connection closed before any answer

    @property
    def host(self) -> str:
        """scheme://host:port, as locust's user takes it."""
        split = urlsplit(self.url)
        return f"{split.scheme}://{split.netloc}"

    @property
    def path(self) -> str:
        """The embeddings endpoint under the URL's path (a proxy may serve the API under a prefix)."""
        return urlsplit(self.url).path + ENDPOINT

    @property
    def address(self) -> tuple[str, int]:
        split = urlsplit(self.url)
        return split.hostname or "", split.port or (443 if split.scheme == "https" else 80)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a LoadgenError: one line on stderr, exit 2."""

    def error(self, message: str) -> NoReturn:
        raise LoadgenError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m gpurack_loadgen",
        description="Load an OpenAI-compatible embeddings server with CONCURRENCY requests in flight "
        "until N requests are answered or T seconds pass; print one JSON line of figures.",
    )
    parser.add_argument("--url", required=True, help="the server's base URL, e.g. http://10.0.0.5:8000")
    parser.add_argument("--model", required=True, help="the served model's name, as /v1/models lists it")
    parser.add_argument("--concurrency", type=int, required=True, help="requests in flight at once")
    parser.add_argument("--requests", type=int, help="stop once this many requests are answered")
    parser.add_argument(
        "--seconds",
        type=float,
        help=f"stop after this long (default {DEFAULT_SECONDS:g}, at most {MAX_SECONDS:g})",
    )
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the input each request embeds")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    parser.add_argument(
        "--wait-ready",
        type=float,
        default=0.0,
        metavar="S",
        help="first wait up to S seconds for one good answer (a server still starting); "
        "the line reports when it came",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        metavar="N",
        help="send a request again, up to N times, when the server closed its connection before "
        "any answer (a kept-alive connection to a stopping server); counted as retried (default 1)",
    )
    return parser


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise LoadgenError(message)


def _base_url(url: str) -> str:
    """The URL without a trailing slash, when it is one the tool can load."""
    try:
        split = urlsplit(url)
        port = split.port
    except ValueError as exc:
        raise LoadgenError(f"--url {url!r}: {exc}") from exc
    _check(split.scheme in ("http", "https"), f"--url {url!r}: give http://HOST:PORT or https://HOST:PORT")
    _check(bool(split.hostname), f"--url {url!r}: no host")
    _check(not split.query and not split.fragment, f"--url {url!r}: no query or fragment, the base URL only")
    _check(port != 0, f"--url {url!r}: port 0")
    return url.rstrip("/")


def parse(argv: Sequence[str]) -> Settings:
    """The settings of a bounded run.

    Raises:
        LoadgenError: an unknown, missing or out-of-range argument; neither bound given.
    """
    ns = _parser().parse_args(list(argv))
    _check(ns.requests is not None or ns.seconds is not None, "give --requests N, --seconds T or both")
    _check(1 <= ns.concurrency <= MAX_CONCURRENCY, f"--concurrency must be 1 to {MAX_CONCURRENCY}")
    _check(ns.requests is None or 1 <= ns.requests <= MAX_REQUESTS, f"--requests must be 1 to {MAX_REQUESTS}")
    seconds = DEFAULT_SECONDS if ns.seconds is None else ns.seconds
    _check(0 < seconds <= MAX_SECONDS, f"--seconds must be over 0 and at most {MAX_SECONDS:g}")
    _check(0 < ns.timeout <= MAX_SECONDS, f"--timeout must be over 0 and at most {MAX_SECONDS:g}")
    _check(0 <= ns.wait_ready <= MAX_SECONDS, f"--wait-ready must be 0 to {MAX_SECONDS:g}")
    _check(bool(ns.model.strip()), "--model must name the served model")
    _check(0 <= ns.retries <= MAX_RETRIES, f"--retries must be 0 to {MAX_RETRIES}")
    return Settings(
        url=_base_url(ns.url),
        model=ns.model,
        concurrency=ns.concurrency,
        requests=ns.requests,
        seconds=seconds,
        text=ns.text,
        timeout=ns.timeout,
        wait_ready=ns.wait_ready,
        retries=ns.retries,
    )


def check_reachable(settings: Settings) -> None:
    """Connect once, so that a wrong URL is exit 2 at once, not a run of connection failures.

    Raises:
        LoadgenError: the host does not resolve or nothing accepts the connection.
    """
    host, port = settings.address
    try:
        with socket.create_connection((host, port), timeout=min(CONNECT_S, settings.timeout)):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise LoadgenError(f"cannot connect to {host}:{port} ({settings.url}): {reason}") from exc
