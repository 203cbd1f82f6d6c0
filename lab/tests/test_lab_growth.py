"""`lab up` on a running lab: what it may add (workers, Kubernetes) and what it refuses (no Docker)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from gpurack import cli, commands
from gpurack.errors import UsageError
from gpurack_lab import docker, inventory_writer, lab_kubernetes, rack
from gpurack_lab.state import LabState

RUNNING = LabState(
    "gpurack-node:abc",
    "lab-net",
    "172.30.42.0/24",
    "/k",
    tuple(h for h, _, _ in rack.plan(2, ["h200x1", "hgx-h100x8-ib"], [])),
)


def test_growth_gives_only_the_workers_the_lab_lacks() -> None:
    new = rack._growth(RUNNING, rack.plan(3, ["h200x1", "hgx-h100x8-ib"], []))
    assert [(h.name, h.profile) for h, _, _ in new] == [("lab-w3", "hgx-h100x8-ib")]


def test_growth_with_the_same_plan_adds_nothing() -> None:
    assert rack._growth(RUNNING, rack.plan(2, ["h200x1", "hgx-h100x8-ib"], [])) == []


def test_growth_refuses_another_profile_for_a_running_worker() -> None:
    with pytest.raises(UsageError, match="lab-w2 runs profile hgx-h100x8-ib"):
        rack._growth(RUNNING, rack.plan(2, ["h200x1", "h200x1"], []))


def test_growth_refuses_a_new_fault_on_a_running_worker() -> None:
    with pytest.raises(UsageError, match="lab-w1 runs profile h200x1 with faults"):
        rack._growth(RUNNING, rack.plan(2, ["h200x1", "hgx-h100x8-ib"], ["gpu-missing@lab-w1"]))


def test_growth_refuses_to_shrink() -> None:
    with pytest.raises(UsageError, match="lab-w2 too; a running lab only grows"):
        rack._growth(RUNNING, rack.plan(1, ["h200x1"], []))


def test_inventory_says_whether_the_lab_has_kubernetes() -> None:
    plain = inventory_writer.render(RUNNING)["all"]["vars"]
    assert plain["gpurack_lab_kubernetes"] is False
    assert plain["gpurack_kubeconfig"] == str(lab_kubernetes.kubeconfig())
    assert (
        inventory_writer.render(replace(RUNNING, kubernetes=True))["all"]["vars"]["gpurack_lab_kubernetes"]
        is True
    )


def test_require_build_names_what_is_missing_and_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lab_kubernetes.CACHE_ENV, str(tmp_path))
    with pytest.raises(lab_kubernetes.KubernetesBuildMissingError, match=r"bin/kubeadm.*make lab-k8s"):
        lab_kubernetes.require_build()
    for name in lab_kubernetes.REQUIRED:
        (tmp_path / "current" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "current" / name).write_text("x")
    assert lab_kubernetes.require_build() == tmp_path / "current"


def test_lab_up_kubernetes_without_build_exits_64_before_docker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(lab_kubernetes.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(rack.docker, "ensure_engine", lambda: pytest.fail("Docker was touched"))
    assert cli.main(["lab", "up", "--kubernetes"]) == 64
    assert "make lab-k8s" in capsys.readouterr().err


def test_the_lab_verb_comes_from_the_gpurack_lab_entry_point() -> None:
    from gpurack_lab import cli as lab_cli

    assert commands.plugins()["lab"] is lab_cli
    assert "lab" in cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("state", "owner_exists", "labelled", "orphaned"),
    [
        ("running", True, True, False),  # someone's lab: never touched
        ("running", False, True, True),  # brought back by the restart policy for a folder that is gone
        ("running", False, False, False),  # started before owners were labelled: treated as someone's
        ("exited", True, True, True),
    ],
)
def test_a_lab_container_is_orphaned_when_it_stopped_or_its_owner_folder_is_gone(
    tmp_path: Path, state: str, owner_exists: bool, labelled: bool, orphaned: bool
) -> None:
    owner = tmp_path / "lab"
    if owner_exists:
        owner.mkdir()
    container = docker.Container("lab-w1", state, "172.30.42.11", str(owner) if labelled else None)
    assert container.orphaned() is orphaned
