"""The lab's test fixtures: the shared ones of tests/conftest.py, and one lab cluster per session.

Every end-to-end test takes `lab_cluster`: the lab with Kubernetes comes up once for the
whole session (1 control plane, 2 workers), grows when a test asks for more workers
(`lab_cluster.grow(3)`, `lab_cluster.grow(4, ("ib-port-down@lab-w4",))`), and goes down when
the session ends, leaving nothing behind (asserted).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from gpurack import cli
from gpurack_lab import docker, lab_kubernetes
from gpurack_lab.state import NETWORK as LAB_NETWORK
from lab_helpers import CLUSTER_WORKERS, SITE_RUNS, LabCluster, docker_unusable, lab_leftovers


def _shared_conftest() -> ModuleType:
    """tests/conftest.py under its own name: the captures' paths and fixtures have one home."""
    path = Path(__file__).resolve().parents[2] / "tests" / "conftest.py"
    spec = importlib.util.spec_from_file_location("gpurack_tests_conftest", path)
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


_SHARED = _shared_conftest()
# The shared test helpers (tests/module_helpers.py runs a module as Ansible would) import by
# name, as they do in the unit tests.
if str(_SHARED.REPO / "tests") not in sys.path:
    sys.path.append(str(_SHARED.REPO / "tests"))
REPO, FIXTURES, HW, PUBLIC, H200X1 = (
    _SHARED.REPO,
    _SHARED.FIXTURES,
    _SHARED.HW,
    _SHARED.PUBLIC,
    _SHARED.H200X1,
)
pytest_configure = _SHARED.pytest_configure
h200x1 = _SHARED.h200x1
public = _SHARED.public


def _remove_stale_lab() -> None:
    """Remove lab containers that no longer run (a daemon restarted, a machine rebooted) or that
    the restart policy brought back for a state folder that is gone (a machine copied); refuse to
    touch a lab that runs on the lab network for a folder that exists, which may be someone's. A
    light lab on its own network (`make bench-scale-smoke`, lane 1 of `make test`) may run beside."""
    docker.ensure_engine()
    found = docker.lab_containers()
    running = [c.name for c in found if not c.orphaned() and c.network in (LAB_NETWORK, None)]
    if running:
        pytest.fail(f"a lab is running on this machine ({', '.join(running)}); run 'gpurack lab down' first")
    stale = [c for c in found if c.orphaned()]
    for container in stale:
        docker.remove_container(container.name)
    if stale and docker.network_exists(LAB_NETWORK):
        docker.remove_network(LAB_NETWORK)


@pytest.fixture(scope="session")
def lab_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    """One lab with Kubernetes for every test of the session that asks for it."""
    reason = docker_unusable()
    if reason:
        pytest.skip(f"Docker cannot run on this machine: {reason}")
    try:
        lab_kubernetes.require_build()
    except lab_kubernetes.KubernetesBuildMissingError as exc:
        pytest.skip(f"no offline Kubernetes build ({exc}); `make lab-k8s-test` builds it first")
    _remove_stale_lab()
    cluster = LabCluster(tmp_path_factory.mktemp("lab-cluster-state"))
    # The state folder (lab.json, keys, kubeconfig) stays the session's between tests.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GPURACK_STATE_DIR", str(cluster.state_dir))
        env.setenv("GPURACK_DB", str(cluster.state_dir / "inventory.db"))
        try:
            assert cluster.grow(CLUSTER_WORKERS) == 0
            yield cluster
        finally:
            assert cli.main(["lab", "down"]) == 0
            assert lab_leftovers() == [], "lab down left these behind"


@pytest.fixture(autouse=True)
def _private_state(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As tests/conftest.py's: a private inventory DB and state per test, except that a test on
    the session cluster keeps the cluster's state folder."""
    state = tmp_path / "gpurack-state"
    if "lab_cluster" in request.fixturenames:
        state = request.getfixturevalue("lab_cluster").state_dir
    monkeypatch.setenv("GPURACK_DB", str(tmp_path / "gpurack-state" / "inventory.db"))
    monkeypatch.setenv("GPURACK_STATE_DIR", str(state))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The session's whole-rack site runs: the first (it changed hosts) beside the converged
    re-runs (changed nothing), for docs/performance.md; a figure, not a test."""
    first = next((run for run in SITE_RUNS if run["changed_hosts"]), None)
    again = sorted(run["seconds"] for run in SITE_RUNS if not run["changed_hosts"])
    if first is None or not again:
        return
    median = again[len(again) // 2]
    terminalreporter.write_line(
        f"site runs: first {first['seconds']} s (changed {first['changed_hosts']} hosts); "
        f"{len(again)} converged re-run(s), median {median} s = {median / first['seconds']:.0%} of the first"
    )
