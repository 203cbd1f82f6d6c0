"""The load, through locust as a library: one locust Environment, a local runner and a FastHttpUser
whose one task posts one embeddings request, with no wait between requests, so each user keeps
exactly one request in flight and the number of users is the concurrency.

Importing this module imports locust, which monkey-patches the process with gevent: `__main__`
imports it only once the arguments are good, and the tests run the tool in a child process.
"""

from __future__ import annotations

import http.client
import json
import logging
import signal
import ssl
import sys
import time
from typing import Any

import gevent
import locust
from gevent.event import Event
from geventhttpclient.response import HTTPConnectionClosed
from locust import FastHttpUser, constant, task
from locust.env import Environment

from gpurack_loadgen.errors import LoadgenError
from gpurack_loadgen.settings import Settings
from gpurack_loadgen.stats import Recorder, failure_kind, root_error, summary

HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
POLL_S = 0.5  # --wait-ready: between two tries


def _body(settings: Settings) -> str:
    return json.dumps({"model": settings.model, "input": settings.text})


class _Budget:
    """The requests left to send: a user takes one before each request, so a request bound sends
    exactly N and the run waits for their answers (greenlets switch only on I/O: no lock needed)."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def take(self) -> bool:
        if self.left is None:
            return True
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def _unanswered(answer: Any) -> bool:
    """The server closed the connection before a single byte of an answer: on a kept-alive
    connection, a server that closed it as idle (a stopping pod) while the request was on its way."""
    return isinstance(root_error(answer.request_meta.get("exception")), HTTPConnectionClosed)


def _user_class(settings: Settings, budget: _Budget) -> type[FastHttpUser]:
    """A user with one embeddings task and no wait: one request in flight per user, on one
    kept-alive connection (FastHttpUser: geventhttpclient, cheaper per request than requests).

    A request the server closed its connection under, unanswered, is sent once more on a new
    connection, as HTTP clients do for a request they know to be safe to repeat (RFC 9110 9.2.2;
    an embedding changes nothing; the OpenAI SDK retries connection errors). The retry is counted
    and its time is in the request's latency: the user waited for both."""
    body = _body(settings)

    class EmbeddingsUser(FastHttpUser):
        host = settings.host
        wait_time = constant(0)
        network_timeout = settings.timeout
        connection_timeout = settings.timeout

        @task
        def embed(self) -> None:
            if not budget.take():
                gevent.sleep(settings.seconds)  # all N are sent: idle until the run stops the users
                return
            started = time.perf_counter()
            for attempt in range(1 + settings.retries):
                answer = self.client.post(
                    settings.path, data=body, headers=HEADERS, name="embeddings", catch_response=True
                )
                if attempt == settings.retries or not _unanswered(answer):
                    break
            if attempt:  # the user waited for every try: the latency is theirs together
                answer.request_meta["response_time"] = (time.perf_counter() - started) * 1000
            answer.request_meta["context"] = {**answer.request_meta.get("context", {}), "tries": attempt + 1}
            with answer:  # reports the last try only, by its status, as without catch_response
                pass

    return EmbeddingsUser


class _Stop:
    """SIGTERM, from the start of the process's work: how a caller ends a load that must cover
    something of unknown length (a rollout). The run stops as at its time bound and the line is
    still printed; before the run, the wait for the server gives up."""

    def __init__(self) -> None:
        self.event = Event()  # also set by the request bound: the run's one "done"
        self.signalled = False
        gevent.signal_handler(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self) -> None:
        self.signalled = True
        self.event.set()


class _Run:
    """One run's state and its `events.request` listener: every answer, classified and timed."""

    def __init__(self, settings: Settings, stop: _Stop) -> None:
        self.settings = settings
        self.recorder = Recorder()
        self.stop = stop
        self.done = stop.event
        self.start = 0.0
        self.stopped = False
        self.first_answer: float | None = None  # Unix time of the first good answer

    def on_request(
        self,
        *,
        response: Any,
        exception: BaseException | None,
        response_time: float,
        context: dict[str, Any] | None = None,
        **_: Any,
    ) -> None:
        if self.stopped:  # an answer that came after the bound: not part of the run
            return
        status = int(getattr(response, "status_code", 0) or 0)
        body = response.content if status == 200 else None
        kind = failure_kind(status, body, exception)
        if kind is None and self.first_answer is None:
            self.first_answer = time.time()
        tries = int((context or {}).get("tries", 1))
        self.recorder.add(response_time, kind, time.perf_counter() - self.start, tries)
        if self.settings.requests is not None and self.recorder.requests >= self.settings.requests:
            self.done.set()


def run(settings: Settings, stop: _Stop) -> tuple[_Run, float]:
    """All users started at once; stop at the request bound, the time bound or SIGTERM, whichever
    comes first. Requests still in flight then are cut off and not counted."""
    state = _Run(settings, stop)
    user = _user_class(settings, _Budget(settings.requests))
    env = Environment(user_classes=[user], catch_exceptions=True)
    env.events.request.add_listener(state.on_request)  # type: ignore[no-untyped-call]
    runner = env.create_local_runner()
    state.start = time.perf_counter()
    runner.start(settings.concurrency, spawn_rate=settings.concurrency)
    state.done.wait(timeout=settings.seconds)
    wall = time.perf_counter() - state.start
    state.stopped = True
    runner.quit()
    return state, wall


def _try_once(settings: Settings) -> str | None:
    """One embeddings request outside locust: None when the answer is good, else why not."""
    host, port = settings.address
    timeout = min(settings.timeout, 10.0)
    conn: http.client.HTTPConnection
    if settings.url.startswith("https:"):
        context = ssl.create_default_context()  # unchecked, as locust's FastHttpUser (insecure=True)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", settings.path, body=_body(settings), headers=HEADERS)
        answer = conn.getresponse()
        return failure_kind(answer.status, answer.read(), None)
    except (OSError, http.client.HTTPException) as exc:
        return failure_kind(0, None, exc)
    finally:
        conn.close()


def wait_ready(settings: Settings, stop: _Stop) -> float:
    """Try until the first good answer (a server still starting); the Unix time it came.

    Raises:
        LoadgenError: no good answer within --wait-ready seconds, or SIGTERM before one.
    """
    started = time.perf_counter()
    while True:
        if stop.signalled:
            raise LoadgenError(f"stopped by SIGTERM before a good answer from {settings.url}")
        why = _try_once(settings)
        if why is None:
            return time.time()
        if time.perf_counter() - started + POLL_S > settings.wait_ready:
            raise LoadgenError(
                f"no good answer from {settings.url} within {settings.wait_ready:g} s (last: {why})"
            )
        gevent.sleep(POLL_S)


def measure(settings: Settings) -> dict[str, Any]:
    """The whole run: wait for the server if asked, load it, and the JSON line's figures."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(name)s %(levelname)s: %(message)s"
    )
    stop = _Stop()
    waiting = time.perf_counter()
    first_answer = wait_ready(settings, stop) if settings.wait_ready > 0 else None
    waited = time.perf_counter() - waiting if first_answer is not None else 0.0
    state, wall = run(settings, stop)
    line = summary(
        state.recorder, concurrency=settings.concurrency, seconds=wall, tool_version=locust.__version__
    )
    line["stopped_by"] = "signal" if stop.signalled else "requests" if state.done.is_set() else "seconds"
    first = first_answer or state.first_answer
    line["first_answer"] = round(first, 3) if first is not None else None
    line["waited_s"] = round(waited, 3)
    return line
