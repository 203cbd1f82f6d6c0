"""The GPU node stage's helpers (lab/gpu-node/, docs/gpu-node.md), which run on a real GPU
machine; here on their inputs: the two pods' specs and the pod/host ratios."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parents[1] / "gpu-node"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"gpu_node_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_validate_pod_asks_for_one_gpu_and_mounts_the_host_read_only() -> None:
    pods = _load("pods")
    pod = pods.validate_pod("/opt/torch/.venv/lib/python3.12/site-packages")
    (container,) = pod["spec"]["containers"]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert "--tier" in container["command"] and "standard" in container["command"]
    assert all(m["readOnly"] for m in container["volumeMounts"])
    paths = {v["hostPath"]["path"] for v in pod["spec"]["volumes"]}
    assert paths == {
        "/usr",
        "/opt/gpurack-ansible",
        "/opt/gpurack-collections",
        "/opt/torch/.venv/lib/python3.12/site-packages",
    }
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["ANSIBLE_COLLECTIONS_PATH"] == "/opt/gpurack-collections"  # the installed collection
    assert pod["spec"]["tolerations"][0]["key"] == "gpurack.io/validating"
    # A torch under /usr needs no mount of its own.
    assert len(pods.validate_pod("/usr/lib/python3/dist-packages")["spec"]["volumes"]) == 3


def test_the_pod_without_a_gpu_asks_for_nothing_and_mounts_nothing() -> None:
    pod = _load("pods").no_gpu_pod()
    (container,) = pod["spec"]["containers"]
    assert "resources" not in container and pod["spec"]["volumes"] == []


def _run(results: list[dict[str, Any]]) -> str:
    return json.dumps({"summary": {"verdict": "pass"}, "results": results})


def _measured(check: str, value: float, tier: str = "standard") -> dict[str, Any]:
    return {
        "id": check,
        "component": "GPU 0",
        "measured": value,
        "unit": "GB/s",
        "verdict": "pass",
        "tier": tier,
    }


def test_ratios_are_pod_over_host_for_measured_results_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host, pod = tmp_path / "host.json", tmp_path / "pod.log"
    host.write_text(_run([_measured("gpu.h2d_bandwidth", 55.0), _measured("gpu.count", 1, tier="quick")]))
    # The pod's log carries progress lines before its JSON document.
    pod.write_text("[09:36:48] measuring...\n" + _run([_measured("gpu.h2d_bandwidth", 54.45)]))
    assert _load("ratios").main(str(host), str(pod)) == 0
    out = capsys.readouterr().out
    assert "verdict: host pass, pod pass" in out
    (line,) = [row for row in out.splitlines() if row.startswith("gpu.h2d_bandwidth")]
    assert line.split()[-2:] == ["0.990", "GB/s"]
    assert "gpu.count" not in out


def test_no_measured_result_on_a_side_is_a_failure(tmp_path: Path) -> None:
    host, pod = tmp_path / "host.json", tmp_path / "pod.log"
    host.write_text(_run([_measured("gpu.h2d_bandwidth", 55.0)]))
    pod.write_text(_run([]))
    assert _load("ratios").main(str(host), str(pod)) == 1
