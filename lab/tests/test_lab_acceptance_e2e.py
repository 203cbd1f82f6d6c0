"""The seed's acceptance test end to end on the session's lab cluster (docs/acceptance.md).

The trainer image is built offline (lab/images/build-trainer-image.sh) and loaded into the
H100 pool's node; site.yml has set up the object store (versitygw, a bucket per team, the
dataset sample and the base weights in it) and the teams' queues. Then, through the real CLI:

- `gpurack accept` runs the seven steps in alpha's queue: all seven rows have their figures,
  the deleted pod's job resumed from a checkpoint and lost at most one checkpoint interval,
  and the run is in the inventory DB;
- a job that asks for more GPUs than alpha's queue may hold waits, and the queue row names
  the quota that blocks it;
- a job whose pod fails (its dataset is not in the bucket) is a failed run: no accepted
  units, its GPU-hours counted as failed;
- `gpurack cost` over the window prices the three runs from the lab's inventory.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpurack import cli
from gpurack.inventory import open_store
from gpurack.runner import RunRequest, run_playbook
from gpurack_lab import rack
from gpurack_lab.paths import playbook
from gpurack_lab.state import lab_dir
from lab_helpers import LabCluster, ensure_site, json_run

pytestmark = pytest.mark.kubernetes

REPO = Path(__file__).resolve().parents[2]
BUILD_IMAGE = REPO / "lab" / "images" / "build-trainer-image.sh"
STEPS = tuple(
    f"accept.{step}" for step in ("queue", "staging", "allreduce", "train", "restore", "labels", "cost")
)
INTERVAL = 5  # lab/inventory/group_vars/all/acceptance.yml
H100_NODE = "lab-w2"


@pytest.fixture
def cluster(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[Path]:
    """The session cluster with site applied, the NetworkPolicy agent running and the trainer
    image on the H100 pool's node; its inventory folder."""
    ensure_site(capsys)
    result = run_playbook(
        RunRequest(playbook=playbook("lab_network_policies"), inventory=rack.hosts_file().parent),
        lab_dir() / "runs",
    )
    assert result.exit_code == 0, result
    built = subprocess.run([str(BUILD_IMAGE)], capture_output=True, text=True, check=False, timeout=1800)
    assert built.returncode == 0, built.stderr[-2000:]
    image = built.stdout.strip().splitlines()[-1]
    assert cli.main(["lab", "load-image", image, "--host", H100_NODE]) == 0
    yield rack.hosts_file().parent


def _rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in result["results"]}


def test_acceptance_rows_restore_waiting_and_failed_runs(
    cluster: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inventory = str(cluster)
    code, accepted = json_run(["accept", "-i", inventory], capsys)
    rows = _rows(accepted)
    assert code == 0, [(r["id"], r["verdict"], r["reason"]) for r in accepted["results"]]
    assert tuple(rows) == STEPS
    for step in STEPS:
        assert isinstance(rows[step]["measured"], (int, float)), rows[step]
    assert rows["accept.allreduce"]["details"]["backend"] == "gloo"
    restore = rows["accept.restore"]["details"]
    # Resumed from a checkpoint (not from step 0), losing at most one interval of steps.
    assert restore["restored_step"] >= INTERVAL and restore["restored_step"] % INTERVAL == 0, restore
    assert 0 <= restore["steps_lost"] <= INTERVAL, restore
    assert rows["accept.labels"]["details"]["pool"][H100_NODE]["gpurack.io/pool"] == "lab-hgx-h100x8-ib"
    assert accepted["outcome"] == "accepted" and accepted["accepted_units"] > 0

    # 5 GPUs per pod x 2 pods: more than alpha's 4 nominal + 4 borrowable H100 GPUs.
    code, waiting = json_run(
        [
            "accept",
            "-i",
            inventory,
            "-e",
            "acceptance_gpus_per_pod=5",
            "-e",
            "acceptance_admission_timeout=20",
        ],
        capsys,
    )
    queue = _rows(waiting)["accept.queue"]
    assert code == 1 and queue["verdict"] == "fail", queue
    assert "insufficient" in queue["reason"] and "nvidia.com/gpu" in queue["reason"], queue["reason"]
    assert "lab-hgx-h100x8-ib" in queue["reason"], queue["reason"]

    code, failed = json_run(
        ["accept", "-i", inventory, "-e", "acceptance_data=s3://alpha/datasets/none.txt", "-e",
         "acceptance_backoff_limit=0"],
        capsys,
    )  # fmt: skip
    assert code == 1 and failed["outcome"] == "failed", failed
    assert "BackoffLimitExceeded" in _rows(failed)["accept.train"]["reason"]

    with open_store(None) as store:
        runs = {view.record.name: view.record for view in store.acceptance_runs()}
    outcomes = sorted(r.outcome for r in runs.values())
    assert outcomes == ["accepted", "failed", "other"], outcomes
    failed_run = runs[failed["name"]]
    assert failed_run.units == 0 and failed_run.gpus == 2

    # The window of these runs, priced from the lab's inventory, with Kueue's Workloads too.
    out = tmp_path / "cost"
    code = cli.main(["cost", "-i", inventory, "--since", "3h", "--kueue", "--output", str(out)])
    assert code == 0
    doc = json.loads((out / "cost.json").read_text())
    by_name = {job["name"]: job for job in doc["jobs"]}
    assert by_name[accepted["name"]]["outcome"] == "accepted", doc["jobs"]
    assert by_name[failed["name"]]["outcome"] == "failed", doc["jobs"]
    assert waiting["name"] not in by_name  # never admitted: it held no GPUs
    assert doc["accepted_units"] == accepted["accepted_units"]
    h100 = next(p for p in doc["pools"] if p["pool"] == "lab-hgx-h100x8-ib")
    assert h100["failed_gpu_hours"] > 0 and doc["terms"]["failed_runs"] > 0, h100
    assert doc["effective_cost"] == pytest.approx(doc["terms"]["total"] / doc["accepted_units"])
