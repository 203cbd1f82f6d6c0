"""The load tool (workloads/loadgen) against a real HTTP server on loopback: what it counts, the
bounds that stop it, its exit codes, and the nearest-rank percentile rule on known numbers.

Each run is the real command, `python -m gpurack_loadgen`, in a child process: importing locust
patches a process with gevent, which the test process must not get. The server is the standard
library's, in a thread, answering as an embeddings server would (or not, on purpose)."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from gpurack_loadgen.__main__ import main
from gpurack_loadgen.stats import Recorder, failure_kind, latency_figures, nearest_rank, summary

LOADGEN = Path(__file__).resolve().parents[3] / "workloads" / "loadgen"
GOOD = json.dumps({"object": "list", "data": [{"index": 0, "embedding": [0.25, -0.5, 0.125]}]}).encode()
NO_EMBEDDING = json.dumps({"object": "list", "data": []}).encode()

Answer = Callable[[int], tuple[int, bytes]]  # the request's number (from 1) -> status, body
CLOSE = 0  # an Answer's status: close the connection without a byte of answer
RESET = -1  # ... reset it (RST, as when the request already sat unread in the server's socket)
CUT = -2  # ... send the status line and headers, then reset it in the middle of the body


class Server:
    """What the server saw: requests in order, and the most it had in flight at once."""

    def __init__(self, answer: Answer, delay_s: float) -> None:
        self.answer, self.delay_s = answer, delay_s
        self.count = self.in_flight = self.peak = 0
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.url = ""


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept-alive connections, as vLLM's server keeps them
        disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with server.lock:
                server.count += 1
                number, server.in_flight = server.count, server.in_flight + 1
                server.peak = max(server.peak, server.in_flight)
                server.bodies.append(body)
            time.sleep(server.delay_s)
            status, payload = server.answer(number)
            with server.lock:
                server.in_flight -= 1
            if status == CLOSE:  # a stopping server closing a kept-alive connection under a request
                self.close_connection = True
                return
            if status == RESET:
                self._reset()
                return
            self.send_response(200 if status == CUT else status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[:5] if status == CUT else payload)
            if status == CUT:
                time.sleep(0.2)  # the client has read the status line and waits for the rest
                self._reset()

        def _reset(self) -> None:
            """Close with SO_LINGER 0: the client reads RST, not an orderly end of stream."""
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

    return Handler


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # more than the connections a test opens at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up: expected
            super().handle_error(request, client_address)


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    """Start servers on 127.0.0.1, port 0; all are shut down after the test."""
    running: list[_HTTPServer] = []

    def start(answer: Answer = lambda _n: (200, GOOD), delay_s: float = 0.0) -> Server:
        server = Server(answer, delay_s)
        http = _HTTPServer(("127.0.0.1", 0), _handler(server))
        threading.Thread(target=http.serve_forever, daemon=True).start()
        running.append(http)
        server.url = f"http://127.0.0.1:{http.server_address[1]}"
        return server

    yield start
    for http in running:
        http.shutdown()
        http.server_close()


def _loadgen(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(LOADGEN), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "gpurack_loadgen", *args],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def _line(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The run's one JSON line: stdout holds nothing else."""
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    found: dict[str, Any] = json.loads(lines[0])
    return found


def test_a_good_server_is_loaded_at_the_concurrency_asked_until_n_requests(
    serve: Callable[..., Server],
) -> None:
    server = serve(delay_s=0.02)
    proc = _loadgen(*f"--url {server.url} --model minilm --concurrency 4 --requests 40 --text hi".split())
    line = _line(proc)
    assert line["tool"] == "locust" and line["tool_version"] == "2.47.0" and line["concurrency"] == 4
    assert (line["requests"], line["failures"], line["error_rate"], line["failure_kinds"]) == (40, 0, 0.0, {})
    assert line["first_failure_s"] is None and line["last_failure_s"] is None
    assert line["stopped_by"] == "requests" and server.count == 40
    assert server.peak == 4  # one request in flight per user, every user at once
    assert server.bodies[0] == {"model": "minilm", "input": "hi"}
    # the server's 20 ms is in every latency; loopback and the client add little
    assert 20 <= line["p50_ms"] <= line["p95_ms"] <= line["p99_ms"] <= line["max_ms"] < 2000
    assert 20 <= line["mean_ms"] <= line["max_ms"]
    assert line["rps"] == pytest.approx(40 / line["seconds"], rel=0.01)
    assert line["first_answer"] == pytest.approx(time.time(), abs=60) and line["waited_s"] == 0


def test_failures_are_counted_by_kind_with_their_first_and_last_times(serve: Callable[..., Server]) -> None:
    def answer(n: int) -> tuple[int, bytes]:
        if n % 5 == 0:
            return 503, b'{"error": "busy"}'
        return (200, NO_EMBEDDING) if n % 7 == 0 else (200, GOOD)

    server = serve(answer, delay_s=0.01)  # a run long enough for rps's 1 % below
    line = _line(_loadgen("--url", server.url, "--model", "m", "--concurrency", "2", "--requests", "50"))
    # 5, 10 ... 50 are 503s; 7, 14, 21, 28, 42, 49 are 200s without an embedding (35 is a 503)
    assert line["failure_kinds"] == {"HTTP 503": 10, "no embedding": 6}
    assert (line["requests"], line["failures"], line["error_rate"]) == (50, 16, 0.32)
    assert 0 < line["first_failure_s"] <= line["last_failure_s"] <= line["seconds"]
    assert line["rps"] == pytest.approx(34 / line["seconds"], rel=0.01)  # good answers only


def test_the_request_bound_sends_exactly_n_whatever_the_concurrency(serve: Callable[..., Server]) -> None:
    server = serve(delay_s=0.01)
    line = _line(_loadgen("--url", server.url + "/", "--model", "m", "--concurrency", "3", "--requests", "7"))
    assert line["requests"] == server.count == 7 and line["stopped_by"] == "requests"


def test_the_time_bound_stops_the_run_near_t(serve: Callable[..., Server]) -> None:
    server = serve(delay_s=0.05)
    line = _line(_loadgen("--url", server.url, "--model", "m", "--concurrency", "2", "--seconds", "1.5"))
    assert line["stopped_by"] == "seconds"
    assert 1.5 <= line["seconds"] < 2.5
    assert 2 <= line["requests"] <= 2 * 1.5 / 0.05  # 2 in flight, 50 ms each
    assert line["failures"] == 0  # those cut off at the bound are not counted


def test_sigterm_ends_the_run_early_and_still_prints_the_line(serve: Callable[..., Server]) -> None:
    """The rollout's load runs under a long bound and is ended by SIGTERM once the rollout is over."""
    server = serve(delay_s=0.05)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(LOADGEN), os.environ.get("PYTHONPATH", "")])}
    args = [sys.executable, "-m", "gpurack_loadgen", "--url", server.url, "--model", "m"]
    with subprocess.Popen(
        [*args, "--concurrency", "2", "--seconds", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    ) as proc:  # fmt: skip
        deadline = time.monotonic() + 30
        while server.count < 10 and time.monotonic() < deadline:  # the run is under way
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    line = json.loads(out)
    assert line["stopped_by"] == "signal" and line["seconds"] < 30
    assert 8 <= line["requests"] <= server.count and line["failures"] == 0  # 2 cut off in flight


def test_sigterm_while_waiting_for_the_server_gives_up_with_exit_2(serve: Callable[..., Server]) -> None:
    server = serve(lambda _n: (503, b"starting"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(LOADGEN), os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "gpurack_loadgen", "--url", server.url, "--model", "m"]
    with subprocess.Popen(
        [*argv, "--concurrency", "1", "--seconds", "600", "--wait-ready", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    ) as proc:  # fmt: skip
        deadline = time.monotonic() + 30
        while server.count < 2 and time.monotonic() < deadline:  # it is waiting: tries were refused
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (2, "")
    assert "stopped by SIGTERM before a good answer" in err


def test_wait_ready_waits_for_the_first_good_answer_and_does_not_count_the_wait(
    serve: Callable[..., Server],
) -> None:
    server = serve(lambda n: (503, b"starting") if n <= 3 else (200, GOOD))
    before = time.time()
    proc = _loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 3 --wait-ready 20".split())
    line = _line(proc)
    assert (line["requests"], line["failures"], server.count) == (3, 0, 7)  # 3 refused, 1 good, then 3
    assert line["waited_s"] >= 1.0  # three tries half a second apart
    assert before < line["first_answer"] < time.time()


def test_no_good_answer_within_wait_ready_is_exit_2(serve: Callable[..., Server]) -> None:
    server = serve(lambda _n: (503, b"starting"))
    proc = _loadgen(*f"--url {server.url} --model m --concurrency 1 --seconds 5 --wait-ready 1".split())
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"gpurack_loadgen: no good answer from {server.url} within 1 s (last: HTTP 503)\n"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_unreachable_url_is_exit_2_with_one_line_and_no_traceback() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    proc = _loadgen("--url", url, "--model", "m", "--concurrency", "2", "--requests", "5")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"gpurack_loadgen: cannot connect to {url[7:]} ({url}): Connection refused\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "ftp://h:1", "--concurrency", "1", "--seconds", "1"], "give http://HOST:PORT"),
        (["--url", "http://:80", "--concurrency", "1", "--seconds", "1"], "no host"),
        (["--url", "http://h:99999", "--concurrency", "1", "--seconds", "1"], "out of range"),
        (["--url", "http://h:1", "--concurrency", "1"], "give --requests N, --seconds T or both"),
        (["--url", "http://h:1", "--concurrency", "0", "--requests", "1"], "--concurrency must be 1 to"),
        (["--url", "http://h:1", "--concurrency", "1", "--seconds", "7200"], "--seconds must be over 0"),
        (["--url", "http://h:1", "--concurrency", "1", "--seconds", "nan"], "--seconds must be over 0"),
        (["--url", "http://h:1", "--concurrency", "x", "--seconds", "1"], "invalid int value: 'x'"),
        (["--url", "http://h:1", "--concurrency", "1", "--seconds", "1", "--bogus"], "unrecognized"),
        (["--url", "http://h:1", "--concurrency", "1", "--seconds", "1", "--retries", "4"], "--retries must"),
    ],
)
def test_bad_arguments_are_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--model", "m", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("gpurack_loadgen: ") and message in err and err.count("\n") == 1


def test_help_and_argument_errors_never_import_locust(capsys: pytest.CaptureFixture[str]) -> None:
    """`--help` is fast, and the tests may import the tool: gevent patches nothing until a run."""
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0 and "--concurrency" in capsys.readouterr().out
    closed = f"http://127.0.0.1:{_closed_port()}"
    assert main(f"--url {closed} --model m --concurrency 1 --seconds 1".split()) == 2
    assert "locust" not in sys.modules and "gpurack_loadgen.load" not in sys.modules


def test_nearest_rank_on_known_numbers() -> None:
    hundred = [float(v) for v in range(1, 101)]
    assert [nearest_rank(hundred, p) for p in (1, 50, 95, 99, 100)] == [1, 50, 95, 99, 100]
    four = [10.0, 20.0, 30.0, 40.0]  # ranks ceil(0.5*4)=2, ceil(0.95*4)=4, ceil(0.25*4)=1
    assert [nearest_rank(four, p) for p in (25, 50, 95, 99)] == [10, 20, 40, 40]
    assert nearest_rank([7.5], 99) == 7.5
    twenty = [float(v) for v in range(20)]  # 0.95*20 = 19 exactly: rank 19, not 20
    assert nearest_rank(twenty, 95) == 18
    with pytest.raises(ValueError, match="needs values"):
        nearest_rank([], 50)


def test_figures_of_known_latencies_and_of_a_run_with_no_answers() -> None:
    figures = latency_figures([30.0, 10.0, 20.0, 40.0, 1000.0])
    assert figures == {"p50_ms": 30.0, "p95_ms": 1000.0, "p99_ms": 1000.0, "mean_ms": 220.0, "max_ms": 1000.0}
    recorder = Recorder()
    recorder.add(12.0, "timeout", at_s=0.5)
    recorder.add(13.0, "timeout", at_s=0.75)
    line = summary(recorder, concurrency=1, seconds=2.0, tool_version="x")
    assert line["p50_ms"] is None and line["rps"] == 0.0 and line["error_rate"] == 1.0
    assert (line["first_failure_s"], line["last_failure_s"], line["failure_kinds"]) == (
        0.5,
        0.75,
        {"timeout": 2},
    )
    assert summary(Recorder(), concurrency=1, seconds=1.0, tool_version="x")["error_rate"] is None


def test_failure_kinds_of_each_answer() -> None:
    assert failure_kind(200, GOOD, None) is None
    assert failure_kind(200, NO_EMBEDDING, None) == "no embedding"
    assert failure_kind(200, b'{"data": [{"embedding": []}]}', None) == "no embedding"
    assert failure_kind(200, b"<html>", None) == "no embedding"
    assert failure_kind(503, b"", None) == "HTTP 503"
    assert (
        failure_kind(0, None, ConnectionRefusedError(111, "refused")) == "connection: ConnectionRefusedError"
    )
    assert failure_kind(0, None, TimeoutError("timed out")) == "timeout"
    wrapped = ConnectionError("retries exceeded")
    wrapped.original = ConnectionResetError(104, "reset")  # type: ignore[attr-defined]
    assert failure_kind(0, None, wrapped) == "connection: ConnectionResetError"


def test_a_request_the_server_closed_unanswered_is_sent_again_once_and_counted(
    serve: Callable[..., Server],
) -> None:
    server = serve(lambda n: (CLOSE, b"") if n in (3, 7) else (200, GOOD))
    # one in flight, so the server's numbers are the tool's order: 3 and 7 are first tries
    line = _line(_loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 20".split()))
    assert (line["requests"], line["failures"], line["retried"], line["failure_kinds"]) == (20, 0, 2, {})
    assert server.count == 22  # the two closed under it were sent once more


def test_a_request_reset_before_any_answer_is_sent_again_but_not_one_cut_mid_answer(
    serve: Callable[..., Server],
) -> None:
    server = serve(lambda n: (RESET, b"") if n == 3 else (200, GOOD))
    line = _line(_loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 10".split()))
    assert (line["requests"], line["failures"], line["retried"], server.count) == (10, 0, 1, 11)
    server = serve(lambda n: (CUT, GOOD) if n == 3 else (200, GOOD))
    line = _line(_loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 10".split()))
    assert (line["failures"], line["retried"], server.count) == (1, 0, 10), line


def test_a_request_sent_three_times_counts_once_and_its_latency_covers_every_try(
    serve: Callable[..., Server],
) -> None:
    server = serve(lambda n: (CLOSE, b"") if n in (1, 2) else (200, GOOD), delay_s=0.2)
    line = _line(_loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 1 --retries 2".split()))
    assert (line["requests"], line["failures"], line["retried"], server.count) == (1, 0, 1, 3)
    assert line["p50_ms"] >= 600  # three tries of 200 ms each: what the user waited


def test_without_retries_or_when_the_retry_is_closed_too_the_request_fails(
    serve: Callable[..., Server],
) -> None:
    server = serve(lambda n: (CLOSE, b"") if n == 4 else (200, GOOD))
    line = _line(_loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 10 --retries 0".split()))
    assert (line["failures"], line["retried"]) == (1, 0)
    assert line["failure_kinds"] == {"connection: HTTPConnectionClosed": 1} and server.count == 10
    server = serve(lambda n: (CLOSE, b"") if n in (4, 5) else (200, GOOD))
    line = _line(_loadgen(*f"--url {server.url} --model m --concurrency 1 --requests 10".split()))
    assert (line["failures"], line["retried"], server.count) == (1, 1, 11)


def test_an_answer_slower_than_the_timeout_is_a_timeout(serve: Callable[..., Server]) -> None:
    server = serve(delay_s=1.0)
    args = ["--url", server.url, "--model", "m", "--concurrency", "2", "--requests", "2", "--timeout", "0.2"]
    line = _line(_loadgen(*args))
    assert (line["failures"], line["failure_kinds"], line["p99_ms"], line["rps"]) == (
        2,
        {"timeout": 2},
        None,
        0.0,
    )
