"""Prometheus HTTP service discovery for the pods behind gpurack's inference Services.

Debian's Prometheus is built without Kubernetes service discovery, so the observability role runs
this beside it: on each GET, it lists the EndpointSlices of the Services labelled
gpurack.io/inference-service (the EndpointSlice controller copies a Service's labels), with
Prometheus's own service account token, and answers every ready endpoint's address on the port
named `http` as a target, labelled with its namespace, service, pod and node. Prometheus asks
again every refresh interval, so a pod the HPA adds is scraped from the next refresh on.

Standard library only; it listens on loopback. The role's template runs it as:

    gpurack-scrape-targets.py --listen 127.0.0.1:9095 --server URL --token-file F --ca-file F
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import urllib.request
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SELECTOR = "gpurack.io/inference-service"
SERVICE_NAME = "kubernetes.io/service-name"
PORT_NAME = "http"


def targets(slices: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Prometheus's HTTP SD answer for an EndpointSliceList: one group per ready endpoint."""
    groups = []
    for item in slices.get("items") or []:
        meta = item.get("metadata") or {}
        port = next((p.get("port") for p in item.get("ports") or [] if p.get("name") == PORT_NAME), None)
        if port is None:
            continue
        for endpoint in item.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            pod = (endpoint.get("targetRef") or {}).get("name", "")
            labels = {
                "namespace": meta.get("namespace", ""),
                "service": (meta.get("labels") or {}).get(SERVICE_NAME, ""),
                "pod": pod,
                "node": endpoint.get("nodeName", ""),
            }
            for address in endpoint.get("addresses") or []:
                host = f"[{address}]" if ":" in address else address
                groups.append({"targets": [f"{host}:{port}"], "labels": labels})
    return sorted(groups, key=lambda g: g["targets"][0])


def fetcher(server: str, token_file: str, ca_file: str) -> Callable[[], dict[str, Any]]:
    context = ssl.create_default_context(cafile=ca_file)
    url = f"{server.rstrip('/')}/apis/discovery.k8s.io/v1/endpointslices?labelSelector={SELECTOR}"

    def fetch() -> dict[str, Any]:
        with open(token_file, encoding="utf-8") as f:
            token = f.read().strip()  # read each time: the role may rewrite it
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            data: dict[str, Any] = json.load(answer)
            return data

    return fetch


def handler(fetch: Callable[[], dict[str, Any]]) -> type[BaseHTTPRequestHandler]:
    class Targets(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                body = json.dumps(targets(fetch())).encode()
                status = 200
            except (OSError, ValueError) as exc:
                # Prometheus keeps the last good list when a refresh fails.
                body, status = json.dumps({"error": str(exc)}).encode(), 502
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return  # one line per scrape refresh would flood the journal

    return Targets


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1:9095")
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--server", required=True, help="the API server's URL")
    args = parser.parse_args(argv)
    host, port = args.listen.rsplit(":", 1)
    server_address = (host.strip("[]"), int(port))
    fetch = fetcher(args.server, args.token_file, args.ca_file)
    ThreadingHTTPServer(server_address, handler(fetch)).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
