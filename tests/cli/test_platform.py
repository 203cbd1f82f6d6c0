"""`gpurack platform render`: the inventory's objects as YAML files, the same the module builds."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.objects import build_objects
from cli_helpers import invoke
from gpurack import platform
from gpurack.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "inventory" / "example"
LAB_HOSTS = """\
all:
  children:
    gpu_nodes:
      children:
        lab_h200x1: {hosts: {lab-w1: {}}}
        lab_hgx_h100x8_ib: {hosts: {lab-w2: {}}}
"""


def _documents(path: Path) -> list[dict[str, object]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def _copy_example(tmp_path: Path) -> Path:
    copy = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, copy)
    return copy


def test_render_example_writes_the_example_sites_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = invoke(capsys, "platform", "render", "-i", EXAMPLE, "--output", out)
    assert result.code == ExitCode.OK, result.err
    assert sorted(p.name for p in out.iterdir()) == [
        "dra.yaml",
        "gpu_operator.yaml",
        "inference.yaml",
        "kueue.yaml",
        "observability.yaml",
        "tenancy.yaml",
    ]
    site = platform.load_site(EXAMPLE)
    assert _documents(out / "tenancy.yaml") == build_objects(site, ("tenancy",))
    assert _documents(out / "kueue.yaml") == build_objects(site, ("kueue",))
    for section in ("dra", "inference", "gpu_operator", "observability"):
        assert _documents(out / f"{section}.yaml") == build_objects(site, (section,))
    observability = {(d["kind"], d["metadata"]["name"]) for d in _documents(out / "observability.yaml")}  # type: ignore[index]
    assert ("ServiceAccount", "gpurack-prometheus") in observability
    assert ("Namespace", "gpurack-observability") in observability
    gpu_operator = _documents(out / "gpu_operator.yaml")
    assert [(d["kind"], d["metadata"]["name"]) for d in gpu_operator] == [("Namespace", "gpu-operator")]  # type: ignore[index]
    kueue = {(d["kind"], d["metadata"]["name"]) for d in _documents(out / "kueue.yaml")}  # type: ignore[index]
    assert {
        ("ClusterQueue", "research"),
        ("ClusterQueue", "inference"),
        ("ResourceFlavor", "h100-train-a"),
        ("ResourceFlavor", "h200-inference"),
        ("LocalQueue", "research"),
    } <= kueue
    assert "wrote 9 objects to" in result.out
    assert "wrote 1 object to" in result.out  # gpu_operator.yaml: its namespace alone
    assert "h100-train-a" in result.out


def test_render_example_counts_gpus_from_expectations(tmp_path: Path) -> None:
    pools = {p.name: (p.gpus, p.gpus_source, len(p.hosts)) for p in platform.load_site(EXAMPLE).pools}
    assert pools == {"h100-train-a": (32, "expect", 4), "h200-inference": (2, "expect", 2)}
    teams = {t.name: t for t in platform.load_site(EXAMPLE).teams}
    assert sorted(teams) == ["inference", "research"]
    assert teams["research"].borrowing_limit["h100-train-a"].gpus == 8


def test_render_is_deterministic(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert invoke(capsys, "platform", "render", "-i", EXAMPLE, "-o", tmp_path / name).code == 0
    for name in ("kueue.yaml", "tenancy.yaml"):
        text = (tmp_path / "a" / name).read_text()
        assert text == (tmp_path / "b" / name).read_text()
        assert "&id" not in text and "*id" not in text  # each object whole, no YAML anchors


def test_render_refuses_a_non_empty_folder_without_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    result = invoke(capsys, "platform", "render", "-i", EXAMPLE, "-o", out)
    assert result.code == ExitCode.USAGE
    assert result.err.count("\n") == 1
    assert "is not empty (use --force to write into it)" in result.err
    assert invoke(capsys, "platform", "render", "-i", EXAMPLE, "-o", out, "--force").code == 0
    assert (out / "notes.txt").read_text() == "mine\n"
    assert (out / "kueue.yaml").is_file()


def test_render_refuses_overcommit_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inventory = _copy_example(tmp_path)
    teams = inventory / "group_vars" / "all" / "teams.yml"
    teams.write_text(teams.read_text().replace("{gpus: 24,", "{gpus: 30,"))
    result = invoke(capsys, "platform", "render", "-i", inventory, "-o", tmp_path / "out")
    assert result.code == ExitCode.USAGE == 64
    assert result.err.count("\n") == 1, result.err
    assert (
        "teams inference (8), research (30) ask 38 GPUs of pool h100-train-a, which has 32 (expect)"
        in result.err
    )
    assert not (tmp_path / "out").exists()
    overcommit = teams.read_text().replace(
        "gpurack_quota_overcommit: false", "gpurack_quota_overcommit: true"
    )
    teams.write_text(overcommit)
    assert invoke(capsys, "platform", "render", "-i", inventory, "-o", tmp_path / "out").code == 0


def test_render_refuses_bad_teams_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inventory = _copy_example(tmp_path)
    teams = inventory / "group_vars" / "all" / "teams.yml"
    teams.write_text(teams.read_text().replace("h200-inference: {gpus: 2,", "h200-inferense: {gpus: -2,"))
    result = invoke(capsys, "platform", "render", "-i", inventory, "-o", tmp_path / "out")
    assert result.code == ExitCode.USAGE
    assert result.err.count("\n") == 1, result.err
    assert "team inference: quota names pool 'h200-inferense'" in result.err
    assert "Traceback" not in result.err


def test_render_refuses_an_inventory_without_matching_hosts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = invoke(
        capsys, "platform", "render", "-i", EXAMPLE, "-o", tmp_path / "o", "--hosts", "nothing_here"
    )
    assert result.code == ExitCode.USAGE
    assert result.err.count("\n") == 1, result.err
    assert "match 'nothing_here'" in result.err
    missing = invoke(capsys, "platform", "render", "-i", tmp_path / "absent", "-o", tmp_path / "o")
    assert (missing.code, missing.err.count("\n")) == (ExitCode.USAGE, 1)


def test_lab_teams_fit_the_lab_workers(tmp_path: Path) -> None:
    """lab-w1 is lab-h200x1 (1 GPU), lab-w2 lab-hgx-h100x8-ib (8): alpha and beta fit, with borrowing."""
    inventory = tmp_path / "lab"
    inventory.mkdir()
    (inventory / "hosts.yml").write_text(LAB_HOSTS)
    (inventory / "group_vars").symlink_to(REPO / "lab" / "inventory" / "group_vars")
    site = platform.load_site(inventory)
    assert {p.name: p.gpus for p in site.pools} == {"lab-h200x1": 1, "lab-hgx-h100x8-ib": 8}
    teams = {t.name: t for t in site.teams}
    assert sorted(teams) == ["alpha", "beta"]
    h100 = "lab-hgx-h100x8-ib"
    assert teams["alpha"].quota[h100].gpus == teams["beta"].quota[h100].gpus == 4
    assert teams["alpha"].borrowing_limit[h100].gpus == 4
    objects = build_objects(site)  # within capacity: not refused
    quota = next(o for o in objects if o["kind"] == "ResourceQuota" and o["metadata"]["namespace"] == "alpha")
    assert quota["spec"]["hard"]["requests.nvidia.com/gpu"] == "8"  # 4 own + 4 borrowed


def test_render_runs_prometheus_adapter_against_the_first_control_planes_prometheus(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert invoke(capsys, "platform", "render", "-i", EXAMPLE, "--output", out).code == ExitCode.OK
    docs = {(d["kind"], d["metadata"]["name"]): d for d in _documents(out / "inference.yaml")}  # type: ignore[index]
    assert ("APIService", "v1beta1.custom.metrics.k8s.io") in docs
    pod = docs[("Deployment", "gpurack-prometheus-adapter")]["spec"]["template"]["spec"]  # type: ignore[index]
    # The example's embed service serves, so the adapter comes; cp-01 is 192.0.2.11.
    assert "--prometheus-url=http://192.0.2.11:9090/" in pod["containers"][0]["args"]
    config = docs[("ConfigMap", "gpurack-prometheus-adapter")]["data"]["config.yaml"]  # type: ignore[index]
    assert [r["name"]["as"] for r in yaml.safe_load(config)["rules"]] == [
        "gpurack_inference_requests_in_flight",
        "gpurack_inference_requests_running",
        "gpurack_inference_requests_waiting",
    ]
    # A config file reads as one: a literal block, not an escaped string.
    assert "config.yaml: |" in (out / "inference.yaml").read_text()


@pytest.mark.parametrize(
    ("settings", "url"),
    [
        ("gpurack_prometheus_url: https://prometheus.example:443/\n", "https://prometheus.example:443/"),
        (
            "observability_prometheus_host: cp-02\nobservability_prometheus_port: 9091\n",
            "http://192.0.2.12:9091/",
        ),
    ],
)
def test_render_takes_prometheus_from_the_inventory(tmp_path: Path, settings: str, url: str) -> None:
    inventory = _copy_example(tmp_path)
    (inventory / "group_vars" / "all" / "metrics.yml").write_text("---\n" + settings)
    assert platform.load_site(inventory).prometheus_url == url


def test_the_lab_runs_the_adapter_it_builds(tmp_path: Path) -> None:
    inventory = tmp_path / "lab"
    inventory.mkdir()
    (inventory / "hosts.yml").write_text(LAB_HOSTS)
    (inventory / "group_vars").symlink_to(REPO / "lab" / "inventory" / "group_vars")
    versions = (REPO / "lab" / "k8s-build" / "versions.env").read_text()
    (version,) = re.findall(r"^PROMETHEUS_ADAPTER_VERSION=(\S+)$", versions, re.MULTILINE)
    image = f"registry.gpurack.lab/prometheus-adapter:{version}"
    assert platform.load_site(inventory).metrics_adapter_image == image


def test_render_refuses_a_bad_pool_allocation_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inventory = _copy_example(tmp_path)
    pool = inventory / "group_vars" / "h100_train_a" / "pool.yml"
    pool.write_text(
        pool.read_text().replace("  sharing: full-gpu", "  sharing: full-gpu\n  allocation: dynamic")
    )
    result = invoke(capsys, "platform", "render", "-i", inventory, "-o", tmp_path / "out")
    assert result.code == ExitCode.USAGE
    assert result.err.count("\n") == 1, result.err
    assert "gpurack_pool: pool.allocation must be one of device-plugin, dra; got 'dynamic'" in result.err
    assert "Traceback" not in result.err
    assert not (tmp_path / "out").exists()
