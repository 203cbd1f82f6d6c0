"""One GPU listed twice is one GPU: the count check counts distinct GPUs and fails naming both entries."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
from gpurack import cli

from .check_builders import EXPECT, POOL, by_id, node, run_checks


def _with_second(field: str | None) -> dict[str, Any]:
    """A 2-GPU node whose second GPU repeats the first's `field` (all of it when None)."""
    facts = node(gpus=2)
    gpus = facts["gpurack_gpu"]["gpus"]
    if field is None:
        gpus[1] = copy.deepcopy(gpus[0])
    else:
        gpus[1][field] = gpus[0][field]
    return facts


@pytest.mark.parametrize("field", [None, "uuid", "serial", "bus_id"])
def test_a_gpu_listed_twice_counts_once_and_fails(field: str | None) -> None:
    results = run_checks(_with_second(field), {**EXPECT, "gpu": {**EXPECT["gpu"], "count": 2}}, pool=POOL)
    count = by_id(results, "gpu.count")[0]
    assert count["verdict"] == "fail"
    assert count["measured"] == 1
    assert "the same GPU is listed more than once, 1 distinct: entry 2" in count["reason"]
    assert f"(same {field or 'uuid'} " in count["reason"]


def test_distinct_gpus_and_unknown_serials_are_not_duplicates() -> None:
    facts = node(gpus=2)
    for gpu in facts["gpurack_gpu"]["gpus"]:
        gpu["serial"] = "[N/A]"
    results = run_checks(facts, {**EXPECT, "gpu": {**EXPECT["gpu"], "count": 2}}, pool=POOL)
    assert by_id(results, "gpu.count")[0]["verdict"] == "pass"


def test_a_capture_listing_its_gpu_twice_fails_a_two_gpu_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    bundle = tmp_path / "vm"
    shutil.copytree(h200x1, bundle, copy_function=shutil.copyfile)
    xml = bundle / "nvidia-smi-q.xml"
    text = xml.read_text()
    block = text[text.index("\t<gpu id=") : text.index("\t</gpu>") + len("\t</gpu>\n")]
    xml.write_text(text.replace(block, block + block).replace("<attached_gpus>1<", "<attached_gpus>2<"))
    (bundle / "nvidia-smi-topo-m.txt").unlink()  # else its one GPU row disagrees first (exit 2)
    expect = tmp_path / "expect.yml"
    expect.write_text("gpu: {count: 2}\n")
    code = cli.main(
        ["validate", "--from-capture", str(bundle), "--expect", str(expect), "--no-record", "--json"]
    )
    assert code == 1
    assert "the same GPU is listed more than once, 1 distinct" in capsys.readouterr().out
