"""Stop a model server without failing a request: drain its kept-alive connections first.

A pod told to stop leaves the Service's endpoints, but a client's kept-alive connection stays
pinned to it (kube-proxy balances connections, not requests): an active client keeps sending
there until the server closes the connection, and a request on its way at that moment fails.

The pod's preStop hook runs `python -m gpurack_serving.drain SECONDS`: it marks the server as
draining and waits. From then on `DrainMiddleware` (vLLM's `--middleware`) adds
`Connection: close` to every answer, so each active client gets its answer, then opens a new
connection, which the Service sends to a pod that stays. When the wait ends and the kubelet
sends SIGTERM, no active client is left on the pod, and vLLM (`--shutdown-timeout`) finishes
the requests still in flight instead of aborting them.

The mark is a file (GPURACK_DRAIN_FILE, default /tmp/gpurack-draining): the hook runs in a
process of its own, beside the server.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

DEFAULT_DRAIN_FILE = "/tmp/gpurack-draining"  # the image writes only to /tmp
CLOSE = (b"connection", b"close")

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


def drain_file(env: MutableMapping[str, str] | None = None) -> Path:
    return Path((os.environ if env is None else env).get("GPURACK_DRAIN_FILE") or DEFAULT_DRAIN_FILE)


class DrainMiddleware:
    """ASGI middleware: once the drain file exists, every HTTP answer closes its connection."""

    def __init__(self, app: App, marker: Path | None = None) -> None:
        self.app = app
        self.marker = marker or drain_file()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            # One stat per answer (about a microsecond), at the moment the answer starts.
            if message.get("type") == "http.response.start" and self.marker.exists():
                headers = [h for h in message.get("headers", []) if h[0].lower() != CLOSE[0]]
                message = {**message, "headers": [*headers, CLOSE]}
            await send(message)

        await self.app(scope, receive, send_closing)


def main(argv: list[str] | None = None) -> int:
    """`python -m gpurack_serving.drain SECONDS`: mark the server draining, then wait SECONDS.
    Exit 2 for a bad argument (the kubelet then sends SIGTERM at once: said on stderr)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        seconds = float(args[0]) if len(args) == 1 else -1.0
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        sys.stderr.write(f"gpurack_serving.drain: expected SECONDS, 0 to 3600, got {' '.join(args)!r}\n")
        return 2
    marker = drain_file()
    marker.touch()
    time.sleep(seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
