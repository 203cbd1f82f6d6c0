"""playbooks/preflight.yml end to end on this machine (-c local), no GPU needed.

It asserts the failure path: a CPU-only host checked against an 8-GPU pool ends with the
per-host report, the summary table and a non-zero exit, never a traceback; and a bad
inventory value is refused by argument validation before any gather task runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import H200X1
from role_cases import HostRun, run_cases

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = ["ansible-playbook", "-c", "local", "-i", "localhost,", "-e", "gpurack_hosts=localhost"]
EIGHT_GPUS = {"gpurack_expect": {"gpu": {"count": 8}}}
GOOD_POOL = {"name": "h100-train-a", "workload": "distributed-training", "sharing": "full-gpu"}


def _run(*extra: str, timeout: int = 240) -> subprocess.CompletedProcess[str]:
    cmd = [str(Path(sys.executable).parent / PLAYBOOK[0]), *PLAYBOOK[1:], *extra, "playbooks/preflight.yml"]
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }
    return subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _has_gpu() -> bool:
    return Path("/dev/nvidia0").exists()


@pytest.fixture(scope="module")
def eight_gpu_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    if _has_gpu():
        pytest.skip("this machine has an NVIDIA GPU; the test asserts the no-GPU failure path")
    reports = tmp_path_factory.mktemp("reports")
    extra = {**EIGHT_GPUS, "gpurack_pool": GOOD_POOL}  # a valid pool passes its check
    return _run("-e", json.dumps(extra), "-e", f"preflight_report_dir={reports}"), reports


def test_no_gpu_fails_with_summary(eight_gpu_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, _ = eight_gpu_run
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Traceback" not in out
    assert "no GPUs found" in out
    assert "FAIL gpu.count" in out
    assert "preflight summary, 1 host(s)" in out
    assert "HOST" in out and "VERDICT" in out
    assert "preflight FAIL on localhost" in out
    # Every check ran before the host was failed: the summary precedes the failure.
    assert out.index("preflight summary") < out.index("preflight FAIL on localhost")


def test_json_report_written(eight_gpu_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, reports = eight_gpu_run
    report = json.loads((reports / "localhost.json").read_text())
    assert report["summary"]["verdict"] == "fail"
    gpu_count = next(r for r in report["results"] if r["id"] == "gpu.count")
    assert gpu_count["verdict"] == "fail" and gpu_count["expected"] == 8
    assert "gpurack_gpu" in report["facts"]
    assert report["pool"] == "h100-train-a" and report["pool_settings"] == GOOD_POOL
    assert oct((reports / "localhost.json").stat().st_mode & 0o777) == "0o644"


def test_check_mode_reports_the_same_failure() -> None:
    if _has_gpu():
        pytest.skip("this machine has an NVIDIA GPU; the test asserts the no-GPU failure path")
    proc = _run("--check", "-e", json.dumps(EIGHT_GPUS))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "no GPUs found" in out and "preflight summary" in out
    assert "changed=0" in out


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"gpu": {"count": "eight"}}, "argument 'count' is of type str found in 'preflight_expect -> gpu'"),
        ({"gpu": {"cont": 8}}, "preflight_expect.gpu.cont"),
        ({"gpu": {"count": -1}}, "gpurack_expect.gpu.count: expected a non-negative integer, got -1"),
    ],
)
def test_bad_inventory_value_is_refused_before_gathering(value: dict[str, object], message: str) -> None:
    proc = _run("-e", json.dumps({"gpurack_expect": value}), timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert message in out
    assert "Traceback" not in out
    assert "Gather GPU facts" not in out
    assert "preflight summary" not in out


BAD_POOLS: dict[str, tuple[object, str]] = {
    "name_space": ({**GOOD_POOL, "name": "H100 Train A"}, "pool.name: 'H100 Train A' must be a DNS label"),
    "wrkload": (
        {**GOOD_POOL, "wrkload": "inference"},
        "pool: unknown key 'wrkload' (did you mean 'workload'?)",
    ),
    "sharing": (
        {**GOOD_POOL, "sharing": "shared"},
        "pool.sharing must be one of full-gpu, mig, time-slicing",
    ),
    "reserved": ({**GOOD_POOL, "labels": {"kubernetes.io/hostname": "x"}}, "reserved for Kubernetes"),
    "node_role": ({**GOOD_POOL, "labels": {"node-role.kubernetes.io/gpu": ""}}, "node roles are applied"),
    "label_value": ({**GOOD_POOL, "labels": {"team": "a b"}}, "pool.labels: team: label value 'a b'"),
    "taint_effect": (
        {**GOOD_POOL, "taints": [{"key": "gpurack.io/pool", "effect": "NoSchedul"}]},
        "effect must be one of",
    ),
    # A string is refused by the argument spec, before the check.
    "not_a_mapping": (
        "h100-train-a",
        "argument 'preflight_pool' is of type str and we were unable to convert",
    ),
}


@pytest.fixture(scope="module")
def bad_pool_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HostRun]:
    """playbooks/preflight.yml once, over one local host per bad pool (role_cases)."""
    cases = {name: {"gpurack_pool": pool} for name, (pool, _) in BAD_POOLS.items()}
    runs, out = run_cases(
        tmp_path_factory.mktemp("pools"), REPO / "playbooks/preflight.yml", cases, ("-e", "gpurack_hosts=all")
    )
    assert "Traceback" not in out
    return runs


@pytest.mark.parametrize("case", sorted(BAD_POOLS))
def test_bad_pool_fails_preflight_before_gathering(bad_pool_runs: dict[str, HostRun], case: str) -> None:
    """Issue 13: the pool was checked only at join, after prepare had changed every node."""
    run = bad_pool_runs[case]
    assert run.failed_task is not None, run
    if case != "not_a_mapping":
        assert "Refuse a bad pool before touching the node" in run.failed_task
        assert f"gpurack_pool of {case} is invalid" in run.message
    assert BAD_POOLS[case][1] in run.message
    assert not run.ran("Gather")
    assert not run.ran("Summarise preflight")


# Inventory host names kubeadm would register as a Node that the API server refuses.
BAD_NODE_NAMES = ("GPU-01", "gpu_01", "gpu-01.", "g" * 254)


@pytest.fixture(scope="module")
def bad_node_name_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HostRun]:
    """playbooks/preflight.yml once, over one local host per bad name, each with a good pool."""
    cases = {name: {"gpurack_pool": GOOD_POOL} for name in BAD_NODE_NAMES}
    runs, out = run_cases(
        tmp_path_factory.mktemp("names"), REPO / "playbooks/preflight.yml", cases, ("-e", "gpurack_hosts=all")
    )
    assert "Traceback" not in out
    return runs


@pytest.mark.parametrize("host", BAD_NODE_NAMES)
def test_a_host_kubernetes_would_refuse_as_a_node_fails_preflight_before_gathering(
    bad_node_name_runs: dict[str, HostRun], host: str
) -> None:
    """kubeadm registers a host under its inventory name: the API server must not refuse it first."""
    run = bad_node_name_runs[host]
    assert run.failed_task is not None and "Refuse a host whose name Kubernetes" in run.failed_task, run
    assert "inventory host name: " in run.message and "must be a DNS subdomain" in run.message
    assert not run.ran("Gather")


@pytest.fixture(scope="module")
def cgroup_v1_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The H200 capture with a cgroup v1 hierarchy: os.cgroup_v2 warns, nothing fails."""
    root = tmp_path_factory.mktemp("capture") / "h200x1"
    shutil.copytree(H200X1, root, copy_function=shutil.copyfile)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (root / "sys/fs/cgroup/memory").mkdir(parents=True)
    return root


@pytest.mark.parametrize("fail_on_warn", [False, True])
def test_a_warn_is_reported_as_warn_and_fails_only_with_fail_on_warn(
    cgroup_v1_capture: Path, fail_on_warn: bool
) -> None:
    extra = {
        "gpurack_facts_root": str(cgroup_v1_capture),
        "gpurack_expect": {"gpu": {"count": 1}},
        "preflight_fail_on_warn": fail_on_warn,
    }
    proc = _run("-e", json.dumps(extra))
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    assert "preflight WARN - 0 fail, 1 warn" in out  # the module's verdict, never shown as pass
    assert "WARN os.cgroup_v2" in out
    assert "preflight summary, 1 host(s): 0 pass, 1 warn, 0 fail" in out
    if fail_on_warn:
        assert proc.returncode != 0, out
        assert "warned and preflight_fail_on_warn is true: os.cgroup_v2" in out
    else:
        assert proc.returncode == 0, out


@pytest.fixture(scope="module")
def nothing_readable_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A capture bundle holding only `uname -a`: no facts can be read, so every check skips."""
    root = tmp_path_factory.mktemp("capture") / "uname-only"
    root.mkdir()
    shutil.copyfile(H200X1 / "uname.txt", root / "uname.txt")
    return root


def test_a_skip_node_fails_saying_nothing_was_assessed(
    nothing_readable_capture: Path, tmp_path: Path
) -> None:
    extra = {"gpurack_facts_root": str(nothing_readable_capture), "preflight_report_dir": str(tmp_path)}
    proc = _run("-e", json.dumps(extra))
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    report = json.loads((tmp_path / "localhost.json").read_text())
    assert report["summary"]["verdict"] == "skip"  # the module's node verdict
    assert {r["verdict"] for r in report["results"]} == {"skip"}
    assert "preflight summary, 1 host(s): 0 pass, 0 warn, 0 fail, 1 skip (nothing assessed)" in out
    assert proc.returncode != 0, out
    failure = " ".join(out[out.index("preflight SKIP on localhost") :].split())  # unwrapped
    checks = len(report["results"])
    assert failure.startswith(f"preflight SKIP on localhost: nothing was assessed, all {checks} checks")
    # The skip reasons say why: here, no GPU facts could be read.
    assert "GPU facts unavailable" in failure


def test_the_pool_sharing_reaches_the_checks(tmp_path: Path) -> None:
    """A GPU with MIG enabled in a full-gpu pool fails preflight: the role passes gpurack_pool."""
    root = tmp_path / "h200x1"
    shutil.copytree(H200X1, root, copy_function=shutil.copyfile)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    xml = root / "nvidia-smi-q.xml"
    xml.write_text(
        xml.read_text().replace("<current_mig>Disabled</current_mig>", "<current_mig>Enabled</current_mig>")
    )
    extra = {
        "gpurack_facts_root": str(root),
        "gpurack_expect": {"gpu": {"count": 1}},
        "gpurack_pool": {"name": "h200-inference", "workload": "inference", "sharing": "full-gpu"},
    }
    proc = _run("-e", json.dumps(extra))
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    assert proc.returncode != 0, out
    assert "FAIL gpu.mig_mode" in out
    assert "preflight FAIL on localhost" in out
