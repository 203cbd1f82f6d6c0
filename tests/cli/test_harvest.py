"""gpurack run records what each host showed: the preflight playbook over a capture replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke


def _inventory(tmp_path: Path, capture: Path) -> Path:
    # localhost replays the real H200 capture through the facts modules' `root` parameter,
    # the way the lab hands sysfs and command captures to its hosts.
    inventory = {
        "all": {
            "hosts": {
                "localhost": {
                    "ansible_connection": "local",
                    "ansible_python_interpreter": sys.executable,
                    "preflight_facts_root": str(capture),
                    "gpurack_pool": {"name": "h200-infer", "workload": "inference", "sharing": "full-gpu"},
                    "gpurack_expect": {"gpu": {"count": 1, "model": "NVIDIA H200"}, "numa_nodes": 1},
                }
            }
        }
    }
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def test_run_preflight_records_host_facts_labels_and_verdicts(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(
        capsys,
        "run",
        "preflight",
        "-i",
        _inventory(tmp_path, h200x1),
        "-e",
        "gpurack_hosts=localhost",
        "--json",
    )
    assert result.code == 0, result.out + result.err

    shown = json.loads(invoke(capsys, "inventory", "show", "localhost", "--json").out)
    assert shown["pool"] == "h200-infer"
    assert shown["labels"]["gpurack.io/accelerator"] == "h200-141gb"
    assert shown["labels"]["gpurack.io/workload"] == "inference"
    assert [g["serial"] for g in shown["gpus"]] == ["1654924064277"]
    verdicts = {r["id"]: r["verdict"] for r in shown["results"]}
    assert verdicts["gpu.count"] == "pass"


def test_run_no_record_keeps_inventory_empty(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    inventory = _inventory(tmp_path, h200x1)
    result = invoke(
        capsys, "run", "preflight", "-i", inventory, "-e", "gpurack_hosts=localhost", "--no-record", "--json"
    )
    assert result.code == 0, result.out + result.err
    assert json.loads(invoke(capsys, "inventory", "list", "--json").out) == []
