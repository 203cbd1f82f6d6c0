"""gpurack facts over the real captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke, truncated_copy
from gpurack import facts
from gpurack.errors import UsageError


def test_facts_h200x1_json_reports_one_h200_and_its_label(
    capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    result = invoke(capsys, "facts", "--from-capture", h200x1, "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    gpu = data["facts"]["gpurack_gpu"]
    assert gpu["count"] == 1
    card = gpu["gpus"][0]
    assert card["name"] == "NVIDIA H200"
    assert card["memory_total_mib"] == 143771
    assert (card["pcie"]["gen_current"], card["pcie"]["width_current"]) == (5, 16)
    assert data["labels"]["gpurack.io/accelerator"] == "h200-141gb"


def test_facts_h200x1_json_lists_every_fact_and_the_host(
    capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    data = json.loads(invoke(capsys, "facts", "--from-capture", h200x1, "--format", "json").out)
    assert data["host"] == "vm"  # from the captured `uname -a`
    expected = {"gpurack_gpu", "gpurack_pci", "gpurack_numa", "gpurack_nic", "gpurack_nvme", "gpurack_os"}
    assert set(data["facts"]) == expected


def test_facts_default_pool_labels_unassigned_batch_full_gpu(
    capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    labels = json.loads(invoke(capsys, "facts", "--from-capture", h200x1, "--format", "json").out)["labels"]
    assert labels["gpurack.io/pool"] == "unassigned"
    assert labels["gpurack.io/workload"] == "batch"
    assert labels["gpurack.io/sharing"] == "full-gpu"


def test_facts_pool_file_with_group_vars_key_sets_pool_labels(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    pool = tmp_path / "pool.yml"
    pool.write_text("gpurack_pool: {name: h200-inference, workload: inference, sharing: full-gpu}\n")
    result = invoke(capsys, "facts", "--from-capture", h200x1, "--format", "json", "--pool", pool)
    labels = json.loads(result.out)["labels"]
    assert labels["gpurack.io/pool"] == "h200-inference"
    assert labels["gpurack.io/workload"] == "inference"


def test_facts_yaml_format_parses_to_the_json_document(
    capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    as_yaml = yaml.safe_load(invoke(capsys, "facts", "--from-capture", h200x1, "--format", "yaml").out)
    as_json = json.loads(invoke(capsys, "facts", "--from-capture", h200x1, "--format", "json").out)
    assert as_yaml == as_json


def test_facts_table_format_shows_gpu_and_labels(capsys: pytest.CaptureFixture[str], h200x1: Path) -> None:
    result = invoke(capsys, "facts", "--from-capture", h200x1, "--format", "table")
    assert result.code == 0
    for text in ("NVIDIA H200", "143771", "Gen5 x16", "gpurack.io/accelerator", "h200-141gb"):
        assert text in result.out


def test_facts_truncated_capture_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    h200x1_copy = truncated_copy(h200x1, tmp_path)
    result = invoke(capsys, "facts", "--from-capture", h200x1_copy, "--format", "json")
    assert result.code == 2
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1
    assert "nvidia-smi-q" in result.err
    assert "Traceback" not in result.err


def test_facts_missing_folder_exits_64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = invoke(capsys, "facts", "--from-capture", tmp_path / "nope")
    assert result.code == 64
    assert "no such folder" in result.err


def test_facts_folder_without_captures_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    result = invoke(capsys, "facts", "--from-capture", tmp_path)
    assert result.code == 2
    assert "not a capture bundle" in result.err


def test_facts_without_origin_exits_64(capsys: pytest.CaptureFixture[str]) -> None:
    result = invoke(capsys, "facts", "--format", "json")
    assert result.code == 64
    assert "--from-capture" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "case",
    [
        # The typo was ignored: the node got the default workload, batch.
        ("{name: h200-inference, wrkload: inference}", "unknown key 'wrkload' (did you mean 'workload'?)"),
        # These were a LabelError traceback (exit 70).
        ("{name: H200 Inference}", "pool.name: 'H200 Inference' must be a DNS label"),
        ("{name: a, labels: {kubernetes.io/hostname: x}}", "reserved for Kubernetes"),
        ("{name: a, taints: [{key: gpurack.io/x, effect: Never}]}", "effect must be one of"),
        ("{name: a, sharing: MIG}", "pool.sharing must be one of full-gpu, mig, time-slicing"),
    ],
)
@pytest.mark.parametrize("verb", ["facts", "validate"])
def test_bad_pool_file_exits_64_with_one_line(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, verb: str, case: tuple[str, str]
) -> None:
    pool, message = case
    path = tmp_path / "pool.yml"
    path.write_text(f"gpurack_pool: {pool}\n")
    result = invoke(capsys, verb, "--from-capture", h200x1, "--pool", path)
    assert result.code == 64, result.err
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert message in result.err
    assert str(path) in result.err
    assert "Traceback" not in result.err


def test_read_node_turns_a_bad_pool_into_a_usage_error(h200x1: Path) -> None:
    """A pool handed over in code (not through --pool) is still refused as bad input, not a crash."""
    with pytest.raises(UsageError, match=r"pool: pool\.name: 'Bad Name' must be a DNS label"):
        facts.read_node(
            facts.Origin("capture", h200x1), {"name": "Bad Name", "workload": "batch", "sharing": "mig"}
        )
