"""A few calls to the one-node cluster's API server with the admin certificate (node-stage.sh).

Stdlib only (the GPU machine has no kubectl in the carry and no pip):

    python3 kapi.py PKI get PATH                  print the object (JSON)
    python3 kapi.py PKI post PATH FILE            create the object in FILE
    python3 kapi.py PKI patch PATH JSON           merge-patch
    python3 kapi.py PKI wait PATH EXPR [SECONDS]  poll until the Python EXPR over `o` is true
    python3 kapi.py PKI logs NAMESPACE POD        the pod's log
"""

from __future__ import annotations

import json
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

SERVER = "https://127.0.0.1:6443"


def _context(pki: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return context


def call(
    pki: Path, method: str, path: str, body: bytes | None = None, kind: str = "application/json"
) -> bytes:
    request = urllib.request.Request(f"{SERVER}{path}", data=body, method=method)
    if body is not None:
        request.add_header("Content-Type", kind)
    with urllib.request.urlopen(request, context=_context(pki), timeout=30) as response:
        data: bytes = response.read()
        return data


def _wait(pki: Path, path: str, expr: str, seconds: float) -> int:
    deadline, last = time.monotonic() + seconds, "no answer"
    while time.monotonic() < deadline:
        try:
            o: Any = json.loads(call(pki, "GET", path))
            if eval(expr, {}, {"o": o}):  # lab-only helper; the expression is the script's own
                print(f"ok: {expr}")
                return 0
            last = "not yet"
        except (urllib.error.URLError, OSError, KeyError, IndexError, TypeError, ValueError) as error:
            last = str(error)
        time.sleep(2)
    print(f"timed out after {seconds:g} s waiting for {expr} on {path} ({last})")
    return 1


def main(argv: list[str]) -> int:
    pki, verb, rest = Path(argv[0]), argv[1], argv[2:]
    try:
        if verb == "get":
            print(call(pki, "GET", rest[0]).decode())
        elif verb == "post":
            print(call(pki, "POST", rest[0], Path(rest[1]).read_bytes()).decode()[:200])
        elif verb == "patch":
            call(pki, "PATCH", rest[0], rest[1].encode(), "application/merge-patch+json")
        elif verb == "wait":
            return _wait(pki, rest[0], rest[1], float(rest[2]) if len(rest) > 2 else 120)
        elif verb == "logs":
            print(call(pki, "GET", f"/api/v1/namespaces/{rest[0]}/pods/{rest[1]}/log").decode())
        else:
            print(f"unknown verb {verb}")
            return 2
    except urllib.error.HTTPError as error:
        print(f"{verb} {rest[0]}: HTTP {error.code}: {error.read().decode()[:400]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
