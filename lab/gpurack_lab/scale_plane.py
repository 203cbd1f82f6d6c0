"""A Kubernetes control plane of plain processes on loopback, for benchmarks at fleet size.

etcd (its data in a temporary folder), kube-apiserver with real TLS (a self-made CA, an admin
client certificate: pki.py), kwok keeping the fake Nodes annotated `kwok.x-k8s.io/node=fake`
Ready, kube-controller-manager's node lifecycle controller (the not-ready taint), and, when
asked, kube-scheduler, the Kueue manager (its CRDs applied, its webhooks not registered:
nothing can reach them on loopback, so Jobs are created suspended) and the controllers that turn
a Job into pods (`jobs`: kwok then fakes them Running): all from the offline build
(lab/k8s-build, `current/bin` and `current/manifests`), all bound to 127.0.0.1 on free ports. No
Docker, no containers, no kubelet: the Nodes are API objects that kwok heartbeats.
`scale_plane()` starts it and tears it all down on exit.
"""

from __future__ import annotations

import base64
import json
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from gpurack.errors import ExitCode, GpurackError

from gpurack_lab.lab_kubernetes import build_dir
from gpurack_lab.paths import lab_root
from gpurack_lab.pki import write_pki

# kwok manages only the Nodes carrying this annotation (its --manage-nodes-with-annotation-selector).
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_VALUE = "fake"
# The fake pods' addresses, outside the lab cluster's pod subnet (10.244.0.0/16).
KWOK_CIDR = "10.128.0.0/12"
STAGES = "manifests/kwok-stages.yaml"
KUEUE_MANIFEST = "manifests/kueue.yaml"
LOOPBACK = "127.0.0.1"
# What a Job's pods need besides the scheduler: the Job controller makes them, the service account
# controller the `default` ServiceAccount they run as, the garbage collector deletes the pods and
# the Workload of a deleted Job (freeing their quota and Nodes).
JOB_CONTROLLERS = ("job-controller", "serviceaccount-controller", "garbage-collector-controller")
# The product's Kueue configuration: the kueue role's defaults (kueue_wait_for_pods_ready).
KUEUE_DEFAULTS = "roles/kueue/defaults/main.yml"
STOP_SECONDS = 15.0
# Kueue's manifest is 1.7 MB of YAML: libyaml's loader when PyYAML has it.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class ScalePlaneError(GpurackError):
    """The scale plane could not start: a binary is missing or a process died or never got ready."""

    code = ExitCode.NOT_ASSESSED


@dataclass(frozen=True, slots=True)
class ScalePlane:
    """A running plane: its folder (PKI, etcd data, logs), the admin kubeconfig and the API URL."""

    folder: Path
    kubeconfig: Path
    server: str
    bin_dir: Path

    @property
    def logs(self) -> Path:
        """Where each process writes its output (<name>.log)."""
        return self.folder / "logs"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def require_binaries(bin_dir: Path, names: tuple[str, ...]) -> None:
    """Raise ScalePlaneError naming the build commands when one of `names` is not in `bin_dir`."""
    missing = [n for n in names if not (bin_dir / n).is_file()]
    if missing or not (bin_dir.parent / STAGES).is_file():
        raise ScalePlaneError(
            f"the offline build lacks {', '.join(missing) or STAGES} in {bin_dir.parent}: "
            "run `make lab-k8s` and `lab/k8s-build/build.sh --only kwok`"
        )


class _Processes:
    """The plane's processes, each in its own session, stopped newest first."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.running: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        with (self.logs / f"{name}.log").open("wb") as log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.running.append((name, proc))
        return proc

    def check(self) -> None:
        """Raise ScalePlaneError when a process has exited, with the end of its log."""
        for name, proc in self.running:
            if proc.poll() is not None:
                tail = (self.logs / f"{name}.log").read_text(errors="replace").splitlines()[-8:]
                raise ScalePlaneError(f"{name} exited with {proc.returncode}", tuple(tail))

    def stop(self) -> None:
        """SIGTERM each, newest first, after the one before it ended: the API server shuts down
        gracefully only while etcd still answers."""
        while self.running:
            _, proc = self.running.pop()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait(
    procs: _Processes, what: str, probe: urllib.request.Request, ctx: ssl.SSLContext | None, seconds: float
) -> None:
    """Poll `probe` until it answers 200, failing early when a process exits."""
    deadline = time.monotonic() + seconds
    last = ""
    while time.monotonic() < deadline:
        procs.check()
        try:
            with urllib.request.urlopen(probe, timeout=5, context=ctx) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        time.sleep(0.3)
    raise ScalePlaneError(f"{what} was not ready after {seconds:.0f} s: {last}")


def _tls(folder: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(folder / "ca.crt"))
    ctx.load_cert_chain(str(folder / "admin.crt"), str(folder / "admin.key"))
    return ctx


def _etcd(procs: _Processes, bin_dir: Path, folder: Path) -> str:
    client, peer = f"http://{LOOPBACK}:{free_port()}", f"http://{LOOPBACK}:{free_port()}"
    procs.start(
        "etcd",
        [str(bin_dir / "etcd"), "--name=scale", f"--data-dir={folder / 'etcd'}",
         f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
         f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
         f"--initial-cluster=scale={peer}", "--log-level=warn"],
    )  # fmt: skip
    _wait(procs, "etcd", urllib.request.Request(f"{client}/health"), None, 60)
    return client


def _apiserver(procs: _Processes, bin_dir: Path, folder: Path, etcd: str, port: int) -> None:
    pki = folder
    procs.start(
        "kube-apiserver",
        [str(bin_dir / "kube-apiserver"), f"--etcd-servers={etcd}", f"--bind-address={LOOPBACK}",
         f"--advertise-address={LOOPBACK}", f"--secure-port={port}", f"--cert-dir={folder / 'serving'}",
         f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
         f"--client-ca-file={pki / 'ca.crt'}", "--authorization-mode=Node,RBAC",
         "--service-cluster-ip-range=10.96.0.0/16", "--service-account-issuer=https://kubernetes.default.svc",
         f"--service-account-key-file={pki / 'sa.pub'}",
         f"--service-account-signing-key-file={pki / 'sa.key'}",
         # No Service can reach 127.0.0.1: keep the `kubernetes` Endpoints out of it.
         "--endpoint-reconciler-type=none"],
    )  # fmt: skip
    probe = urllib.request.Request(f"https://{LOOPBACK}:{port}/readyz")
    _wait(procs, "kube-apiserver", probe, _tls(folder), 120)


def kwok_argv(bin_dir: Path, kubeconfig: Path, stages: Path | None = None) -> list[str]:
    """kwok's command line from the offline build: it keeps Ready only the Nodes annotated
    `kwok.x-k8s.io/node=fake` on the cluster of `kubeconfig`, and runs their pods by the build's
    stages, or `stages` (the scale plane's kwok, and the lab's in lab/benchmarks/bench_add_node.py)."""
    config = stages or bin_dir.parent / STAGES
    return [str(bin_dir / "kwok"), f"--kubeconfig={kubeconfig}", f"--config={config}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}={KWOK_VALUE}",
            # the fake pods' addresses (the default /24 holds 254)
            f"--cidr={KWOK_CIDR}", f"--node-ip={LOOPBACK}"]  # fmt: skip


def _kwok(procs: _Processes, bin_dir: Path, folder: Path, jobs: bool) -> None:
    """kwok; with `jobs`, by the build's stages less `pod-complete`, which ends a Job's pod as soon
    as it runs: here they run until deleted, as a training job's pods run until it is done."""
    stages = None
    if jobs:
        docs = yaml.safe_load_all((bin_dir.parent / STAGES).read_text())
        kept = [d for d in docs if d and d.get("metadata", {}).get("name") != "pod-complete"]
        stages = folder / "kwok-stages.yaml"
        stages.write_text(yaml.safe_dump_all(kept))
    procs.start("kwok", kwok_argv(bin_dir, folder / "admin.conf", stages))


def _controllers(procs: _Processes, bin_dir: Path, kubeconfig: Path, jobs: bool) -> None:
    """kube-controller-manager with its node lifecycle controller: it lifts the
    node.kubernetes.io/not-ready taint the API server puts on a new Node once kwok makes it Ready,
    and edits taints concurrently with gpurack, as on a real cluster; with `jobs`, JOB_CONTROLLERS too."""
    names = ",".join(("node-lifecycle-controller", *(JOB_CONTROLLERS if jobs else ())))
    procs.start(
        "kube-controller-manager",
        [str(bin_dir / "kube-controller-manager"), f"--kubeconfig={kubeconfig}", "--leader-elect=false",
         f"--controllers={names}", f"--bind-address={LOOPBACK}", f"--secure-port={free_port()}"],
    )  # fmt: skip


def product_wait_for_pods_ready() -> dict[str, object]:
    """Kueue's waitForPodsReady as the product configures it (the kueue role's default), so that
    all-or-nothing admission is tested as a site runs it."""
    defaults = yaml.safe_load((lab_root().parent / KUEUE_DEFAULTS).read_text())
    return dict(defaults["kueue_wait_for_pods_ready"])


def _scheduler(procs: _Processes, bin_dir: Path, kubeconfig: Path) -> None:
    procs.start(
        "kube-scheduler",
        [str(bin_dir / "kube-scheduler"), f"--kubeconfig={kubeconfig}", "--leader-elect=false",
         f"--bind-address={LOOPBACK}", f"--secure-port={free_port()}"],
    )  # fmt: skip


def _kueue_crds(procs: _Processes, bin_dir: Path, folder: Path, kubeconfig: Path) -> None:
    """Apply the CustomResourceDefinitions of the build's Kueue manifest and empty webhook
    configurations, wait until the CRDs are served, and make Kueue's namespace and Secret."""
    docs = yaml.load_all((bin_dir.parent / KUEUE_MANIFEST).read_text(), Loader=_LOADER)
    crds = [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]
    # Kueue's certificate rotator waits until it has put its CA into these two; with no webhooks
    # in them the API server calls nothing (a Service cannot reach a process on loopback).
    hooks = [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "webhooks": [],
         "metadata": {"name": f"kueue-{name}-webhook-configuration"}}
        for kind, name in (
            ("MutatingWebhookConfiguration", "mutating"),
            ("ValidatingWebhookConfiguration", "validating"),
        )
    ]  # fmt: skip
    (folder / "kueue-crds.yaml").write_text(yaml.dump_all([*crds, *hooks], Dumper=_DUMPER))
    kubectl = [str(bin_dir / "kubectl"), f"--kubeconfig={kubeconfig}"]
    for argv in (
        ["apply", "--server-side", f"--filename={folder / 'kueue-crds.yaml'}"],
        ["wait", "--for=condition=Established", "--timeout=120s", "crd", "--all"],
        ["create", "namespace", "kueue-system"],
        # where Kueue keeps the webhook certificate it makes (empty in its manifest too)
        ["create", "secret", "generic", "kueue-webhook-server-cert", "--namespace=kueue-system"],
    ):
        done = subprocess.run([*kubectl, *argv], capture_output=True, text=True, timeout=180, check=False)
        if done.returncode != 0:
            raise ScalePlaneError(f"kubectl {argv[0]} for Kueue failed: {done.stderr.strip()[-400:]}")
    procs.check()


def _kueue(procs: _Processes, bin_dir: Path, folder: Path, kubeconfig: Path, jobs: bool) -> None:
    """The Kueue manager as the build's manifest configures it (its client rate limits included),
    on loopback ports, with the product's waitForPodsReady when pods run (`jobs`). It makes its own
    webhook certificate (internal cert management, its default): without that it reads the metrics
    certificate from a fixed /etc path."""
    _kueue_crds(procs, bin_dir, folder, kubeconfig)
    health = free_port()
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": "kueue-system",
        "health": {"healthProbeBindAddress": f"{LOOPBACK}:{health}"},
        "metrics": {"bindAddress": f"{LOOPBACK}:{free_port()}"},
        "webhook": {"host": LOOPBACK, "port": free_port(), "certDir": str(folder / "kueue-certs")},
        "visibilityServer": {"bindAddress": LOOPBACK, "bindPort": free_port()},
        "leaderElection": {"leaderElect": False},
        "controller": {"groupKindConcurrency": {"Job.batch": 5, "Workload.kueue.x-k8s.io": 5}},
        "clientConnection": {"qps": 50, "burst": 100},
        "integrations": {"frameworks": ["batch/job"]},
    }
    if jobs:
        config["waitForPodsReady"] = product_wait_for_pods_ready()
    (folder / "kueue-config.yaml").write_text(yaml.safe_dump(config))
    procs.start(
        "kueue",
        [str(bin_dir / "kueue"), f"--config={folder / 'kueue-config.yaml'}", f"--kubeconfig={kubeconfig}",
         "--zap-log-level=1"],
    )  # fmt: skip
    _mount_secret(procs, folder, kubeconfig)
    _wait(procs, "kueue", urllib.request.Request(f"http://{LOOPBACK}:{health}/readyz"), None, 120)


def _mount_secret(procs: _Processes, folder: Path, kubeconfig: Path, seconds: float = 60) -> None:
    """Write the certificate Kueue put in its Secret into its cert folder, as the kubelet mounts
    that Secret in Kueue's pod: Kueue waits for the files before it serves."""
    server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    url = f"{server}/api/v1/namespaces/kueue-system/secrets/kueue-webhook-server-cert"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        procs.check()
        with urllib.request.urlopen(url, timeout=10, context=_tls(folder)) as answer:
            data = json.load(answer).get("data") or {}
        if data.get("tls.crt") and data.get("tls.key"):
            certs = folder / "kueue-certs"
            certs.mkdir(exist_ok=True)
            for name in ("tls.crt", "tls.key"):
                (certs / name).write_bytes(base64.b64decode(data[name]))
            return
        time.sleep(0.5)
    raise ScalePlaneError(f"Kueue wrote no certificate into its Secret in {seconds:.0f} s")


@contextmanager
def scale_plane(
    *, scheduler: bool = False, kueue: bool = False, jobs: bool = False, keep: bool = False
) -> Iterator[ScalePlane]:
    """Start etcd, kube-apiserver, kwok and the node lifecycle controller (and kube-scheduler,
    Kueue, the controllers that run Jobs' pods) on loopback; stop them and remove the folder on
    exit (`keep` leaves the folder, for its logs).

    Raises:
        ScalePlaneError: a binary is missing, or a process exited or never got ready.
    """
    bin_dir = build_dir() / "bin"
    extra = (("kube-scheduler",) if scheduler else ()) + (("kueue", "kubectl") if kueue else ())
    require_binaries(bin_dir, ("etcd", "kube-apiserver", "kube-controller-manager", "kwok", *extra))
    folder = Path(tempfile.mkdtemp(prefix="gpurack-scale-plane."))
    with ExitStack() as stack:
        if not keep:
            stack.callback(shutil.rmtree, folder, ignore_errors=True)
        procs = _Processes(folder / "logs")
        procs.logs.mkdir()
        stack.callback(procs.stop)
        port = free_port()
        server = f"https://{LOOPBACK}:{port}"
        write_pki(folder, server=server)
        _apiserver(procs, bin_dir, folder, _etcd(procs, bin_dir, folder), port)
        kubeconfig = folder / "admin.conf"
        _kwok(procs, bin_dir, folder, jobs)
        if scheduler:
            _scheduler(procs, bin_dir, kubeconfig)
        if kueue:
            _kueue(procs, bin_dir, folder, kubeconfig, jobs)
        # after Kueue's CRDs: the garbage collector then watches Workloads from its start, where
        # it would find them only at its next discovery, up to 30 s later
        _controllers(procs, bin_dir, kubeconfig, jobs)
        procs.check()
        yield ScalePlane(folder=folder, kubeconfig=kubeconfig, server=server, bin_dir=bin_dir)
        procs.check()


def tls_context(plane: ScalePlane) -> ssl.SSLContext:
    """TLS to the plane's API server: its CA, and the admin's client certificate."""
    return _tls(plane.folder)


def ready_nodes(plane: ScalePlane) -> int:
    """How many Nodes have Ready=True (one LIST of all of them, through the admin certificate)."""
    url = f"{plane.server}/api/v1/nodes"
    with urllib.request.urlopen(url, timeout=60, context=tls_context(plane)) as answer:
        items = json.load(answer).get("items") or []
    return sum(
        1
        for node in items
        if any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in node.get("status", {}).get("conditions") or []
        )
    )
