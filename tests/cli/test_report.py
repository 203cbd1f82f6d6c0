"""`gpurack report RUN`: Markdown, one self-contained HTML page and schema-valid JSON from the inventory."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import gpurack
import jsonschema
import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import find_model
from gpurack import report
from gpurack.cli import main
from gpurack.errors import ExitCode
from gpurack.gpubench.limits import Limit, hbm_limit, pcie_limit
from gpurack.gpubench.results import judged
from gpurack.inventory import NodeRecord, RunRecord, open_store
from gpurack.report.model import check_entry
from inventory_helpers import hgx_facts
from pg_helpers import BACKENDS, backend_url
from report_helpers import clock_warning, downgraded

SCHEMA = Path(gpurack.__file__).parent / "data" / "report.schema.json"  # shipped as package data
SCRIPT = "<script>alert('x')</script>"
# What the kernel prints for a GPU that fell off the bus (Xid 79), and lspci for a x8 link.
XID_LINE = "NVRM: Xid (PCI:0000:9b:00): 79, pid=1234, name=python, GPU has fallen off the bus."
LNKSTA_LINE = "LnkSta: Speed 32GT/s, Width x8 (downgraded) <-- LnkCap x16"
H200 = find_model("NVIDIA H200", "0x2335")


def _failing_results() -> list[dict[str, Any]]:
    evidence = {"source": "nvidia-smi -q -x (pci/link_widths)", "lines": [LNKSTA_LINE]}
    return [
        {
            "id": "gpu.count",
            "title": "GPU count",
            "tier": "quick",
            "component": "node",
            "verdict": "pass",
            "measured": 8,
            "expected": 8,
            "evidence": {"source": "nvidia-smi", "lines": ["8 GPUs"]},
        },
        {
            "id": "gpu.pcie.current_vs_max",
            "title": "GPU PCIe link at capability",
            "tier": "quick",
            "component": "GPU 5 (0000:9b:00.0)",
            "verdict": "fail",
            "measured": "Gen5 x8",
            "expected": "Gen5 x16",
            "reason": f"link width x8 below its maximum x16 {SCRIPT}",
            "remediation": "reseat the GPU or its riser and check the slot",
            "evidence": evidence,
            "limit_source": "vendor doc: NVIDIA nvidia-smi manual (PCIe link, current vs max)",
        },
        {
            "id": "gpu.xid",
            "title": "No critical Xid events",
            "tier": "quick",
            "component": "GPU 5 (0000:9b:00.0)",
            "verdict": "fail",
            "measured": [79],
            "expected": "no critical Xid",
            "reason": "Xid 79 (GPU has fallen off the bus)",
            "remediation": "drain the node, reseat or replace the GPU",
            "evidence": {"source": "journalctl -k", "lines": [XID_LINE]},
        },
    ]


def _passing_results() -> list[dict[str, Any]]:
    facts = hgx_facts()
    gpu = facts["gpurack_gpu"]["gpus"][0]
    pcie = pcie_limit(gpu, H200)
    hbm = hbm_limit(H200)
    assert pcie is not None and hbm is not None
    return [  # judged gives CheckResults; the store takes their JSON shape
        judged(
            "gpu.h2d_bandwidth", "GPU 0 (0000:18:00.0)", 55.386, "GB/s", pcie, lines=["median 55.39"]
        ).to_dict(),
        judged("gpu.d2h_bandwidth", "GPU 0 (0000:18:00.0)", 55.28, "GB/s", pcie).to_dict(),
        judged("gpu.d2d_bandwidth", "GPU 0 (0000:18:00.0)", 4.272, "TB/s", hbm).to_dict(),
        judged(
            "gpu.h2d_bandwidth", "GPU 1 (0000:2a:00.0)", 52.676, "GB/s", Limit(63.015, "GB/s", "test")
        ).to_dict(),
    ]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Run 1 with gpu01 passing (measured bandwidth) and gpu02 failing (PCIe x8, Xid 79)."""
    url = backend_url(request.param, tmp_path)
    bad = hgx_facts()
    bad["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
    with open_store(url) as store:
        store.record(
            RunRecord("validate", source="local", started=datetime(2026, 11, 30, 9, tzinfo=UTC)),
            [
                NodeRecord(
                    "gpu01", "h200", "local", hgx_facts(), {"gpurack.io/pool": "h200"}, _passing_results()
                ),
                NodeRecord("gpu02", "h200", "local", bad, {"gpurack.io/pool": "h200"}, _failing_results()),
            ],
        )
    return url


def _report(
    capsys: pytest.CaptureFixture[str], db_url: str, out: Path, *extra: str, run: str = "1"
) -> tuple[int, str, str]:
    code = main(["report", run, "--db", db_url, "--output", str(out), *extra])
    stdout, stderr = capsys.readouterr()
    return code, stdout, stderr


def test_report_run_writes_three_files_failing_node_first(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    code, out, err = _report(capsys, db_url, tmp_path / "r")
    assert (code, err) == (ExitCode.OK, "")
    assert out.splitlines() == [
        str(tmp_path / "r" / name) for name in ("report.md", "report.html", "report.json")
    ]
    md = (tmp_path / "r" / "report.md").read_text()
    page = (tmp_path / "r" / "report.html").read_text()
    assert md.index("## FAIL gpu02") < md.index("## PASS gpu01")
    assert page.index("gpu02</h2>") < page.index("gpu01</h2>")
    assert "**2 nodes: 1 fail, 1 pass**" in md


def test_report_html_bar_width_equals_stored_percent(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    _report(capsys, db_url, tmp_path / "r")
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    page = (tmp_path / "r" / "report.html").read_text()
    good = next(n for n in doc["nodes"] if n["host"] == "gpu01")
    percents = {(c["id"], c["component"]): c["percent"] for c in good["checks"]}
    assert percents[("gpu.h2d_bandwidth", "GPU 0 (0000:18:00.0)")] == 87.9  # 55.386 of 63.015 GB/s
    assert percents[("gpu.h2d_bandwidth", "GPU 1 (0000:2a:00.0)")] == 83.6
    widths = [float(w) for w in re.findall(r'class="fill \w+" style="width: ([0-9.]+)%"', page)]
    assert sorted(widths) == sorted(p for p in percents.values() if p is not None)
    assert '<span class="fill pass" style="width: 83.6%">' in page
    assert '<span class="mark" style="left: 80%" title="pass from 80%">' in page


def test_report_escapes_reasons_and_evidence(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    _report(capsys, db_url, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    page = (tmp_path / "r" / "report.html").read_text()
    assert "<script" not in page and "<script" not in md
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page  # markupsafe's entity for '
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in md
    assert "LnkSta: Speed 32GT/s, Width x8 (downgraded) &lt;-- LnkCap x16" in page
    assert XID_LINE in page and XID_LINE in md  # evidence of failing checks is in both
    assert "<details><summary>Xid 79 (GPU has fallen off the bus)</summary>" in page


def test_report_html_is_self_contained_and_well_formed(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    _report(capsys, db_url, tmp_path / "r", "--format", "html")
    assert [p.name for p in (tmp_path / "r").iterdir()] == ["report.html"]
    page = (tmp_path / "r" / "report.html").read_text()
    assert not re.search(r"(?:src|href)\s*=\s*\"(?!#)", page) and "@import" not in page and "url(" not in page
    assert "<style>" in page and "<script" not in page

    void = {"meta", "br", "link", "img", "input", "hr", "wbr"}

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag not in void:
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            assert self.stack.pop() == tag

    parser = Tags()
    parser.feed(page)
    assert parser.stack == []
    assert "GPU-" in page and "<code>1654924064282</code>" in page  # GPU 5's serial in the node header


def test_report_json_validates_against_schema(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    _report(capsys, db_url, tmp_path / "r", "--format", "json", run="latest")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    assert [e.message for e in validator.iter_errors(doc)] == []
    assert doc["schema_version"] == report.SCHEMA_VERSION == schema["properties"]["schema_version"]["const"]
    assert schema["$id"] == report.SCHEMA_ID
    assert [n["host"] for n in doc["nodes"]] == ["gpu02", "gpu01"]
    assert [c["verdict"] for c in doc["nodes"][0]["checks"]] == ["fail", "fail", "pass"]
    assert doc["summary"] | {"nodes": 2} == {
        "nodes": 2, "fail": 1, "warn": 0, "pass": 1, "skip": 0, "unchecked": 0, "verdict": "fail"
    }  # fmt: skip


def test_report_json_schema_rejects_a_wrong_document() -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid(
        {"schema_version": 2, "generator": "x", "run": {}, "summary": {}, "nodes": []}
    )


@pytest.mark.parametrize("run", ["99", "0", "last"])
def test_report_unknown_run_exits_64_one_line(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path, run: str
) -> None:
    code, out, err = _report(capsys, db_url, tmp_path / "r", run=run)
    assert code == ExitCode.USAGE and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("gpurack: ") and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_report_empty_inventory_exits_64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    open_store(
        str(tmp_path / "empty.db")
    ).close()  # an inventory with no runs (a missing one: test_inventory_cli)
    code = main(["report", "latest", "--db", str(tmp_path / "empty.db"), "--output", str(tmp_path / "r")])
    assert code == ExitCode.USAGE
    assert (
        capsys.readouterr().err
        == "gpurack: no runs recorded yet: `gpurack validate` and `gpurack run` record them\n"
    )


def test_report_unknown_format_exits_64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["report", "1", "--format", "md,pdf"])
    assert code == ExitCode.USAGE and "unknown format pdf" in capsys.readouterr().err


def test_build_derives_percent_for_runs_recorded_before_it_was_stored() -> None:
    # Inventories written before check_results.percent existed still get bars for model limits.
    old = {
        "id": "gpu.bf16_matmul",
        "verdict": "pass",
        "measured": 801.608,
        "expected": 989.4,
        "percent": None,
    }
    check = check_entry(old)
    assert check["percent"] == 81.0 and check["thresholds"] == {"pass": 75.0, "warn": 60.0}
    ratio = {"id": "gpu.burn_in_stability", "verdict": "pass", "measured": 0.996, "expected": 0.9}
    assert check_entry(ratio)["percent"] is None  # expected is a pass ratio, not a limit


# -- what the documents show -------------------------------------------------------------------


def _record(tmp_path: Path, nodes: dict[str, list[dict[str, Any]]]) -> str:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    with open_store(url) as store:
        store.record(
            RunRecord("validate", source="local", started=datetime(2026, 11, 30, 9, tzinfo=UTC)),
            [NodeRecord(host, "h100", "local", hgx_facts(), {}, results) for host, results in nodes.items()],
        )
    return url


def _documents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, nodes: dict[str, list[dict[str, Any]]]
) -> tuple[str, str, dict[str, Any]]:
    url = _record(tmp_path, nodes)
    code, _, err = _report(capsys, url, tmp_path / "r")
    assert (code, err) == (ExitCode.OK, "")
    folder = tmp_path / "r"
    md, page = (folder / "report.md").read_text(), (folder / "report.html").read_text()
    return md, page, json.loads((folder / "report.json").read_text())


def _h1_badge(page: str) -> str:
    match = re.search(r'<h1>[^<]*<span class="badge (\w+)">(\w+)</span></h1>', page)
    assert match, page[:2000]
    return f"{match.group(1)} {match.group(2)}"


def test_report_run_badge_agrees_with_its_warning_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A lab run: one node warns (clock slowdown), the other passes; the run is WARN, not PASS.
    gpu_count = _failing_results()[0]
    md, page, doc = _documents(
        capsys, tmp_path, {"lab-w1": [clock_warning(0), gpu_count], "lab-w2": [gpu_count]}
    )
    assert [(n["host"], n["verdict"]) for n in doc["nodes"]] == [("lab-w1", "warn"), ("lab-w2", "pass")]
    assert doc["summary"]["verdict"] == "warn"
    assert _h1_badge(page) == "warn WARN"
    assert "Run verdict: **WARN**" in md
    assert '<section class="node warn" id="node-0">' in page


@pytest.mark.parametrize(
    ("nodes", "run", "node_verdicts"),
    [
        ({"a": [{"id": "gpu.count", "verdict": "skip", "reason": "not set"}]}, "skip", ["skip"]),
        ({"a": [], "b": [{"id": "gpu.count", "verdict": "pass"}]}, "pass", ["pass", None]),
        ({"a": [{"id": "gpu.xid", "verdict": "fail"}], "b": [clock_warning(1)]}, "fail", ["fail", "warn"]),
    ],
)
def test_report_run_verdict_is_the_rule_over_its_nodes(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    nodes: dict[str, list[dict[str, Any]]],
    run: str,
    node_verdicts: list[str | None],
) -> None:
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
        node_verdict,
        run_verdict,
    )

    _, page, doc = _documents(capsys, tmp_path, nodes)
    assert [n["verdict"] for n in doc["nodes"]] == node_verdicts  # most significant first, unchecked last
    assert doc["summary"]["verdict"] == run == run_verdict(node_verdict(r) for r in nodes.values()).value
    assert _h1_badge(page) == f"{run} {run.upper()}"


def test_report_shows_values_as_people_read_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    results = [*(clock_warning(i) for i in range(8)), downgraded("0000:00:0c.0", 5.0, 8.0, width=1)]
    md, page, _ = _documents(capsys, tmp_path, {"lab-w1": results})
    for document in (md, page):
        assert "GPUs 0\N{EN DASH}7" in document and "clocks held down by hw" in document
        assert "5 GT/s x1" in document and "8 GT/s x1" in document
        assert "speed_gts" not in document and '["' not in document and "[&#34;" not in document
    assert (
        "| WARN | No hardware clock slowdown (`gpu.clocks_event_reasons`) "
        "| GPUs 0\N{EN DASH}7 | hw\\_slowdown | none |" in md
    )
    assert md.count("\n| WARN | No ") == 2  # 9 results, 2 findings
    assert "143,771 MiB (140.4 GiB)" in page  # the GPU table's memory


def test_report_escapes_host_text_in_markdown_and_html(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hostile = {
        **clock_warning(0),
        "remediation": "see [x](javascript:alert(1)) and ![i](http://x/i.png) <img src=x onerror=alert(1)>",
        "reason": "GPU 0 (0000:19:00.0): *bold* `tick` | pipe",
    }
    md, page, _ = _documents(capsys, tmp_path, {"evil|host": [hostile]})
    assert "\\[x\\](javascript:alert(1))" in md and "![i](" not in md and "[x](" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;" in md and "<img" not in md
    assert "\\*bold\\* \\`tick\\` \\| pipe" in md and "| evil\\|host |" in md
    assert "javascript:alert(1)" in page and 'href="javascript' not in page and "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "evil|host</h2>" in page


def test_markdown_escape_and_code_spans() -> None:
    from gpurack.report.markdown import code, escape

    assert escape("a|b_c*d[e](f)~g\\h") == "a\\|b\\_c\\*d\\[e\\](f)\\~g\\\\h"
    assert escape("<b>&\nnext") == "&lt;b&gt;&amp; next"
    assert escape(None) == "—"
    assert code("gpu.xid") == "`gpu.xid`"
    assert code("a`b") == "``a`b``"
    assert code("`x") == "`` `x ``"


def test_report_css_colours_every_verdict() -> None:
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict

    css = (Path(report.__file__).parent / "templates" / "report.css").read_text()
    for verdict in Verdict:
        assert f".badge.{verdict.value} " in css and f"section.node.{verdict.value} " in css


def test_report_template_ships_as_package_data() -> None:
    import fnmatch
    import tomllib

    root = Path(gpurack.__file__).parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "gpurack"
    ]
    templates = Path(report.__file__).parent / "templates"
    shipped = sorted(p.relative_to(templates.parents[1]).as_posix() for p in templates.iterdir())
    assert shipped == [
        "report/templates/cost.html.j2",
        "report/templates/report.css",
        "report/templates/report.html.j2",
    ]
    assert all(any(fnmatch.fnmatch(name, glob) for glob in data) for name in shipped)
    assert any(fnmatch.fnmatch("data/report.schema.json", glob) for glob in data)
