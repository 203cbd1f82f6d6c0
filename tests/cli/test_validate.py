"""gpurack validate over the real 1x H200 capture."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke, truncated_copy
from gpurack import cli
from pg_helpers import BACKENDS, backend_url
from process_helpers import together

MATCHING = """\
gpu:
  count: 1
  model: NVIDIA H200
  min_memory_mib: 140000
  pcie: {gen: 5, width: 16}
numa_nodes: 1
"""


def _expect(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expect.yml"
    path.write_text(text)
    return path


def test_validate_matching_expect_exits_0(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", _expect(tmp_path, MATCHING))
    assert result.code == 0, result.out + result.err
    assert "verdict: pass" in result.out


def test_validate_group_vars_file_is_accepted(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    wrapped = "gpurack_expect:\n" + "".join(f"  {line}\n" for line in MATCHING.splitlines())
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", _expect(tmp_path, wrapped))
    assert result.code == 0, result.out + result.err


def test_validate_gpu_count_8_exits_1_naming_observed_and_expected(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(
        capsys, "validate", "--from-capture", h200x1, "--expect", _expect(tmp_path, "gpu: {count: 8}\n")
    )
    assert result.code == 1
    failing = result.out.split("validation of", 1)[1]
    first_row = next(line for line in failing.splitlines() if "fail" in line)
    assert "GPU count" in first_row
    assert " 1 " in first_row
    assert " 8 " in first_row
    assert "verdict: fail" in result.out


def test_validate_gpu_count_8_json_result_has_measured_and_expected(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    expect = _expect(tmp_path, "gpu: {count: 8}\n")
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", expect, "--json")
    assert result.code == 1
    failed = [r for r in json.loads(result.out)["results"] if r["verdict"] == "fail"]
    assert [(r["measured"], r["expected"]) for r in failed] == [(1, 8)]
    assert failed[0]["remediation"]


def test_validate_json_has_the_machine_form(capsys: pytest.CaptureFixture[str], h200x1: Path) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--json")
    data = json.loads(result.out)
    assert set(data) >= {"schema_version", "host", "source", "facts", "labels", "results", "summary"}
    assert data["schema_version"] == 1
    assert data["host"] == "vm"
    assert data["source"] == {"kind": "capture", "path": str(h200x1)}
    assert data["labels"]["gpurack.io/accelerator"] == "h200-141gb"
    assert set(data["summary"]) >= {"pass", "warn", "fail", "skip", "verdict"}
    assert all(set(r) >= {"id", "verdict", "component", "measured", "expected"} for r in data["results"])


def test_validate_output_writes_json_and_markdown_reports(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--output", reports)
    assert result.code == 0
    assert json.loads((reports / "validation.json").read_text())["host"] == "vm"
    assert (reports / "validation.md").read_text().startswith("# Validation of vm")


def test_validate_output_keeps_earlier_reports_unless_force(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "validation.md").write_text("earlier\n")
    again = invoke(capsys, "validate", "--from-capture", h200x1, "--output", reports, "--no-record")
    assert again.code == 64
    assert again.err.strip().endswith("validation.md already exists (--force replaces it)")
    assert (reports / "validation.md").read_text() == "earlier\n"
    assert not (reports / "validation.json").exists()
    forced = invoke(
        capsys, "validate", "--from-capture", h200x1, "--output", reports, "--no-record", "--force"
    )
    assert forced.code == 0
    assert (reports / "validation.md").read_text().startswith("# Validation of vm")


def test_validate_truncated_capture_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    h200x1_copy = truncated_copy(h200x1, tmp_path)
    result = invoke(capsys, "validate", "--from-capture", h200x1_copy)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1
    assert "truncated" in result.err
    assert "Traceback" not in result.err


def test_validate_bad_yaml_expect_exits_64(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(
        capsys, "validate", "--from-capture", h200x1, "--expect", _expect(tmp_path, "gpu: {count: 8\n")
    )
    assert result.code == 64
    assert "not valid YAML" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("gpu: {cnt: 8}\n", "gpurack_expect.gpu.cnt"),
        ("gpus: {count: 8}\n", "gpurack_expect.gpus"),
        ("gpu: {count: eight}\n", "gpurack_expect.gpu.count"),
    ],
)
def test_validate_invalid_expect_exits_64_naming_the_path(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, text: str, path: str
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", _expect(tmp_path, text))
    assert result.code == 64
    assert path in result.err
    assert result.out == ""
    assert "Traceback" not in result.err


def test_validate_invalid_expect_lists_every_problem(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    expect = _expect(tmp_path, "gpu: {cnt: 8}\nfoo: 1\n")
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", expect)
    assert "gpurack_expect.gpu.cnt" in result.err
    assert "gpurack_expect.foo" in result.err


def test_validate_missing_expect_file_exits_64(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", tmp_path / "missing.yml")
    assert result.code == 64
    assert "cannot read" in result.err


def test_validate_unknown_tier_exits_64(capsys: pytest.CaptureFixture[str], h200x1: Path) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--tier", "ludicrous")
    assert result.code == 64
    assert "Traceback" not in result.err


def test_validate_records_capture_runs_and_diff_explains_a_swapped_gpu(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    expect = _expect(tmp_path, MATCHING)
    first = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", expect)
    assert first.code == 0, first.err
    # The same server a week later, with its GPU replaced: a copy of the capture whose
    # serial (XML and text) is changed, everything else as captured.
    swapped = tmp_path / "h200x1-swapped"
    shutil.copytree(h200x1, swapped)
    for name in ("nvidia-smi-q.xml", "nvidia-smi-q.txt"):
        path = swapped / name
        path.chmod(0o644)
        path.write_text(path.read_text().replace("1654924064277", "1654924069999"))
    second = invoke(capsys, "validate", "--from-capture", swapped, "--expect", expect)
    assert second.code == 0, second.err

    history = invoke(capsys, "inventory", "history", "vm", "--json")
    runs = json.loads(history.out)["runs"]
    assert [r["source"] for r in runs] == [f"capture:{h200x1}", f"capture:{swapped}"]
    diff = invoke(capsys, "inventory", "diff", "vm")
    assert diff.code == 0, diff.err
    assert "was swapped: serial 1654924064277 -> 1654924069999" in diff.out


def test_validate_no_record_leaves_inventory_empty(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--no-record")
    assert result.code == 0, result.err
    listing = invoke(capsys, "inventory", "list", "--json")
    assert (listing.code, listing.out) == (64, "")  # no inventory was even created
    assert "no inventory database at" in listing.err


def test_validate_measured_tier_on_a_capture_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--tier", "standard")
    assert result.code == 64
    assert "use --local" in result.err
    assert "Traceback" not in result.err


def test_validate_local_standard_without_torch_skips_each_measurement_with_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The CI machine and .venv have no PyTorch: the measured checks must say so, not pass.
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("PyTorch is installed here; the GPU path is covered by tests/cli/test_gpubench.py -m gpu")
    result = invoke(capsys, "validate", "--local", "--tier", "standard", "--no-record", "--json")
    document = json.loads(result.out)
    measured = {r["id"]: r for r in document["results"] if r["tier"] == "standard"}
    assert set(measured) >= {
        "gpu.h2d_bandwidth",
        "gpu.d2d_bandwidth",
        "gpu.bf16_matmul",
        "gpu.allreduce_busbw",
    }
    assert {r["verdict"] for r in measured.values()} == {"skip"}
    assert all("PyTorch not installed" in r["reason"] for r in measured.values())


def test_validate_standard_gather_rereads_facts_after_the_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The measured tier re-reads the node's facts to compare counters; a stand-in for the
    # GPU measurements (there is no GPU here) calls that re-read exactly as run_standard does.
    from gpurack.gpubench import tier

    seen: list[set[str]] = []

    def fake_run_standard(before: Any, gather: Any, progress: Any = None) -> list[dict[str, Any]]:
        seen.append(set(gather()))
        return []

    monkeypatch.setattr(tier, "run_standard", fake_run_standard)
    result = invoke(capsys, "validate", "--local", "--tier", "standard", "--no-record")
    assert result.code == 0, result.err
    assert seen == [
        {"gpurack_gpu", "gpurack_pci", "gpurack_numa", "gpurack_nic", "gpurack_nvme", "gpurack_os"}
    ]


# -- the verdict is never lost to the inventory ------------------------------------------------


def _warned(err: str) -> str:
    """The one warning line of `err` (asserting it is the only line)."""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("gpurack: warning: not recorded in the inventory: "), err
    return err


def test_validate_corrupt_db_keeps_verdict_reports_and_exit_1(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    reports = tmp_path / "reports"
    expect = _expect(tmp_path, "gpu: {count: 8}\n")
    args = ("validate", "--from-capture", h200x1, "--expect", expect, "--output", reports, "--db", junk)
    result = invoke(capsys, *args)
    assert result.code == 1
    assert "verdict: fail" in result.out
    assert "file is not a database" in _warned(result.err)
    assert json.loads((reports / "validation.json").read_text())["host"] == "vm"
    as_json = invoke(capsys, *args, "--json", "--force")
    assert as_json.code == 1 and json.loads(as_json.out)["summary"]["verdict"] == "fail"
    _warned(as_json.err)


def test_validate_locked_db_waits_then_warns_and_keeps_exit_0(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "inventory.db"
    assert invoke(capsys, "validate", "--from-capture", h200x1, "--db", path).code == 0
    monkeypatch.setenv("GPURACK_DB_TIMEOUT", "0.2")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = invoke(
            capsys,
            "validate",
            "--from-capture",
            h200x1,
            "--expect",
            _expect(tmp_path, MATCHING),
            "--db",
            path,
        )
    finally:
        holder.close()
    assert result.code == 0
    assert "verdict: pass" in result.out
    assert "is busy: another process held its lock for more than 0.2 s" in _warned(result.err)


def test_validate_value_too_large_for_the_db_keeps_the_verdict(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 10^23 MiB of GPU memory: SQLite's INTEGER cannot hold it (OverflowError on the old code).
    from gpurack import facts

    real = facts.read_node

    def huge(origin: Any, pool: Any) -> Any:
        node = real(origin, pool)
        node.facts["gpurack_gpu"]["gpus"][0]["memory_total_mib"] = 10**23
        return node

    monkeypatch.setattr(facts, "read_node", huge)
    unrecorded = invoke(capsys, "validate", "--from-capture", h200x1, "--no-record")
    result = invoke(capsys, "validate", "--from-capture", h200x1)
    assert (result.code, result.out) == (unrecorded.code, unrecorded.out)
    assert "a value is too large to store" in _warned(result.err)


@pytest.mark.parametrize(
    "url", ["sqlite://admin:hunter2@/var/inventory.db", "mysql://admin:hunter2@db/inv", "postgresql://h:x/db"]
)
def test_validate_bad_db_url_exits_64_before_any_check(
    capsys: pytest.CaptureFixture[str], h200x1: Path, url: str
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--db", url)
    assert (result.code, result.out) == (64, "")
    assert result.err.count("\n") == 1 and "hunter2" not in result.err


def _validate_into(_index: int, capture: Path, url: str) -> None:
    code = cli.main(["validate", "--from-capture", str(capture), "--db", url, "--json"])
    if code != 0:
        raise AssertionError(f"validate exited {code}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_three_validate_at_once_on_a_fresh_db_record_all_three(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, backend: str
) -> None:
    url = backend_url(backend, tmp_path)
    assert together(_validate_into, 3, h200x1, url) == []
    history = invoke(capsys, "inventory", "history", "vm", "--json", "--db", url)
    assert [r["verdict"] for r in json.loads(history.out)["runs"]] == ["pass"] * 3


def test_validate_with_every_check_skipped_could_not_assess_and_exits_2(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every quick check skipped (as on a node whose tools are missing) and an expectations file
    # that expects nothing, whose warning is about the input, not the node: not a pass.
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult, Verdict
    from gpurack import validate as validate_module

    skipped = [
        CheckResult(
            id="gpu.count", verdict=Verdict.SKIP, reason="GPU facts unavailable: nvidia-smi not found"
        ),
        CheckResult(id="os.kernel", verdict=Verdict.SKIP, reason="OS facts unavailable"),
    ]
    monkeypatch.setattr(validate_module, "run_checks", lambda *_args, **_kwargs: list(skipped))
    empty = _expect(tmp_path, "{}\n")
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--expect", empty, "--no-record")
    assert result.code == 2, result
    (line,) = [ln for ln in result.err.splitlines() if "could not assess" in ln]
    assert line == (
        "gpurack: warning: could not assess vm: nothing was assessed, all 2 checks skipped: "
        "GPU facts unavailable: nvidia-smi not found; OS facts unavailable"
    )
