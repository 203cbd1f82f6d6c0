"""`gpurack cost`: a window's cost by the seed's formula from the recorded acceptance runs
and Kueue's Workloads, checked against a case worked out by hand, and its files (JSON, Markdown,
HTML with the two charts)."""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.inputs import (
    pools_from_hosts,
    site_costs,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import (
    CostError,
    Outcome,
    Window,
    amount,
)
from cli_helpers import invoke
from gpurack import cost
from gpurack.commands import cost as cost_command
from gpurack.inventory import AcceptanceRecord, RunRecord, open_store
from gpurack.report import charts
from gpurack.report.cost_page import CHARTS, chart_svgs, documents, markdown, money
from kueue_objects import admitted
from markdown_it import MarkdownIt

T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
SINCE, UNTIL = "2026-12-01T10:00:00Z", "2026-12-01T20:00:00Z"
NOW = T0 + timedelta(hours=12)


def _inventory(tmp_path: Path) -> Path:
    """Pools h100 (2 hosts x 8 GPUs at 2.0 per GPU-hour) and h200 (2 x 1 at 3.0); the site's
    monthly costs are 1, 2, 0 and 0.5 an hour (730 h a month); a rental baseline of 2.5."""
    groups = {"h100": (8, 2.0), "h200": (1, 3.0)}
    children = {g: {"hosts": {f"{g}-{i}": {} for i in (1, 2)}} for g in groups}
    (tmp_path / "hosts.yml").write_text(
        yaml.safe_dump({"all": {"children": {"gpu_nodes": {"children": children}}}})
    )
    for group, (gpus, price) in groups.items():
        folder = tmp_path / "group_vars" / group
        folder.mkdir(parents=True)
        pool = {"name": group, "workload": "batch", "sharing": "full-gpu", "cost": {"gpu_hour": price}}
        (folder / "pool.yml").write_text(
            yaml.safe_dump({"gpurack_pool": pool, "gpurack_expect": {"gpu": {"count": gpus}}})
        )
    site = tmp_path / "group_vars" / "all"
    site.mkdir(parents=True)
    (site / "cost.yml").write_text(
        yaml.safe_dump(
            {
                "gpurack_site_costs": {
                    "currency": "EUR",
                    "network": 730,
                    "storage": 1460,
                    "support": 0,
                    "operations": 365,
                },
                "gpurack_acceptance": {"baseline": {"kind": "gpu_hour", "price": 2.5}},
            }
        )
    )
    return tmp_path / "hosts.yml"


def _run(
    name: str, pool: str, gpus: int, hours: tuple[float, float], done: tuple[Outcome, float]
) -> AcceptanceRecord:
    return AcceptanceRecord(
        name=name, team="alpha", queue="alpha", pool=pool, pods=2, gpus=gpus,
        started=T0 + timedelta(hours=hours[0]), finished=T0 + timedelta(hours=hours[1]),
        outcome=done[0], units=done[1], verdict="pass", results=(), queue_wait_s=abs(hours[0]) * 10 + 3,
    )  # fmt: skip


RUNS = (
    _run("accept-a", "h100", 4, (1, 3), ("accepted", 1000.0)),  # 8 useful GPU-hours
    _run("accept-b", "h100", 2, (9, 11), ("failed", 0.0)),  # 1 h inside: 2 failed GPU-hours
    _run("accept-c", "h200", 1, (-1, 0.5), ("accepted", 500.0)),  # 0.5 h inside
    _run("accept-d", "h100", 8, (12, 13), ("accepted", 9000.0)),  # after the window
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    with open_store(url) as store:
        for record in RUNS:
            store.record_acceptance(
                RunRecord(kind="accept", source="inventory:x", started=record.started), record
            )
    return url


def _running_workload() -> dict[str, Any]:
    """alpha's job `train-d` on h200: 2 GPUs reserved at 19:30 and still running (0.5 h inside)."""
    workload = admitted("alpha", "train-d")
    workload["metadata"]["creationTimestamp"] = "2026-12-01T19:29:00Z"
    workload["status"]["conditions"][0]["lastTransitionTime"] = "2026-12-01T19:30:00Z"
    workload["status"]["admission"]["podSetAssignments"][0].update(
        flavors={"nvidia.com/gpu": "h200"}, resourceUsage={"nvidia.com/gpu": "2", "cpu": "4"}
    )
    return workload


def test_the_window_costs_what_was_worked_out_by_hand(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        cost.window.queue,
        "fetch",
        lambda _kubeconfig: type("Objects", (), {"workloads": (_running_workload(),)})(),
    )
    monkeypatch.setattr(cost_command, "now", lambda: NOW)
    out = tmp_path / "out"
    argv = ["cost", "-i", _inventory(tmp_path), "--db", db, "--since", SINCE, "--until", UNTIL]
    result = invoke(capsys, *argv, "--kueue", "--kubeconfig", tmp_path / "kubeconfig", "--output", out)
    assert result.code == 0, result.err
    doc = json.loads((out / "cost.json").read_text())
    # h100: 160 GPU-hours; 8 useful + 2 failed allocated, 150 idle. h200: 20; 0.5 + 1 allocated.
    assert doc["gpu_hours"] == {
        "capacity": 180.0,
        "allocated": 11.5,
        "useful": 8.5,
        "failed": 2.0,
        "idle": 168.5,
    }
    # compute (8 x 2.0 + 1.5 x 3.0), network 10 h x 1, storage 10 x 2, idle 150 x 2.0 + 18.5 x 3.0,
    # failed runs 2 x 2.0, operations 10 x 0.5.
    assert doc["terms"] == {
        "compute": 20.5, "network": 10.0, "storage": 20.0, "support": 0.0, "idle": 355.5,
        "failed_runs": 4.0, "operations": 5.0, "total": 415.0,
    }  # fmt: skip
    assert doc["accepted_units"] == 1500.0
    assert doc["effective_cost"] == pytest.approx(415 / 1500)
    assert doc["baseline"] == {
        "kind": "gpu_hour",
        "price": 2.5,
        "cost": 21.25,
        "ratio": round(415 / 21.25, 4),
    }
    jobs = {j["name"]: j for j in doc["jobs"]}
    assert sorted(jobs) == ["accept-a", "accept-b", "accept-c", "train-d"]
    assert jobs["train-d"] | {"start": None} == {
        "name": "train-d", "namespace": "alpha", "source": "kueue", "pool": "h200", "gpus": 2,
        "start": None, "end": "2026-12-01T22:00:00Z", "gpu_hours_in_window": 1.0, "outcome": "other",
        "units": 0.0, "queue_wait_s": 60.0,
    }  # fmt: skip
    assert doc["allocation"]["h100"] == [
        ["2026-12-01T10:00:00Z", 0], ["2026-12-01T11:00:00Z", 4], ["2026-12-01T13:00:00Z", 0],
        ["2026-12-01T19:00:00Z", 2], ["2026-12-01T20:00:00Z", 0],
    ]  # fmt: skip
    assert result.out.splitlines()[-1] == (
        "11.5 GPU-hours allocated of 180 (6.4%); 1500 accepted units; effective cost 0.2767 EUR per unit"
    )
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["cost.json", "cost.md", "cost.html", *CHARTS.values()]
    )


def test_a_recorded_run_is_not_counted_again_from_its_workload() -> None:
    recorded = admitted("alpha", "accept-a")
    pending = admitted("alpha", "waiting")
    del pending["status"]["admission"]
    pending["status"]["conditions"] = []
    jobs = cost.from_workloads([recorded, pending, _running_workload()], {"accept-a"}, NOW)
    assert [job.name for job in jobs] == ["train-d"]


def test_a_workload_without_resource_usage_counts_its_pods_requests_and_a_failed_one_fails() -> None:
    workload = admitted("beta", "train-e")  # one pod asking for 1 GPU, on lab-h200x1
    workload["spec"]["podSets"][0]["count"] = 3
    workload["status"]["admission"]["podSetAssignments"][0]["count"] = 3
    workload["status"]["conditions"].append(
        {
            "type": "Finished",
            "status": "True",
            "reason": "Failed",
            "lastTransitionTime": "2026-12-01T18:30:00Z",
        }
    )
    (job,) = cost.from_workloads([workload], set(), NOW)
    assert (job.allocation.gpus, job.allocation.pool, job.allocation.outcome) == (3, "lab-h200x1", "failed")
    assert job.allocation.end - job.allocation.start == timedelta(minutes=30)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cost"], "the following arguments are required: -i/--inventory"),
        (["cost", "-i", "{inv}", "--since", "yesterday"], "not a time: 'yesterday'"),
        (["cost", "-i", "{inv}", "--since", SINCE, "--until", SINCE], "must be before --until"),
        (["report", "3", "--since", "1d"], "unrecognized arguments: --since 1d"),
        (
            ["report", "cost"],
            "RUN must be a run id or 'latest', got 'cost' (a window's cost is 'gpurack cost')",
        ),
        (["cost", "-i", "{inv}", "--kubeconfig", "k"], "--kubeconfig: only with --kueue"),
    ],
)
def test_bad_input_is_one_line_and_exit_64(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    inventory = str(_inventory(tmp_path))
    result = invoke(capsys, *[a.replace("{inv}", inventory) for a in argv], "--db", db)
    assert result.code == 64 and message in result.err, result
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("amount", "shown"),
    [(1234.5, "1,234.50 EUR"), (0, "0.00 EUR"), (0.276666, "0.2767 EUR"), (0.000299, "0.000299 EUR")],
)
def test_money_keeps_four_significant_digits_below_one(amount: float, shown: str) -> None:
    assert money(amount, "EUR") == shown


def test_relative_times_count_back_from_now() -> None:
    assert cost_command.moment("12h", NOW) == NOW - timedelta(hours=12)
    assert cost_command.moment("2026-12-01", NOW) == datetime(2026, 12, 1, tzinfo=UTC)


def _doc(tmp_path: Path) -> dict[str, Any]:
    window = Window(T0, T0 + timedelta(hours=10))
    jobs = cost.from_runs([type("View", (), {"record": r})() for r in RUNS])  # type: ignore[misc]
    return cost.build(window, cost.read_inputs(_inventory(tmp_path)), jobs, None, ["acceptance"])


def test_the_charts_are_svg_images_with_one_bar_per_queued_job_and_a_line_per_pool(tmp_path: Path) -> None:
    svgs = chart_svgs(_doc(tmp_path))
    queue = ET.fromstring(svgs["queue"])
    ns = {"s": "http://www.w3.org/2000/svg"}
    bars = [r for r in queue.findall("s:rect", ns) if r.get("height") == "14"]
    assert len(bars) == 3  # accept-a, -b, -c (accept-d ends after the window)
    allocation = ET.fromstring(svgs["allocation"])
    assert len(allocation.findall("s:path", ns)) == 2  # h100, h200
    assert "h100 (dashed: capacity)" in {t.text for t in allocation.findall("s:text", ns)}
    capacities = [ln for ln in allocation.findall("s:line", ns) if ln.get("stroke-dasharray")]
    assert len(capacities) == 2


def test_labels_are_escaped_in_the_svg() -> None:
    svg = charts.bars("<wait>", "s", [charts.Bar('a<b>&"c', 2.0, "accepted")])
    root = ET.fromstring(svg)  # well-formed despite the label
    assert 'a<b>&"c' in {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}


def test_the_page_carries_both_charts_and_markdown_links_them(tmp_path: Path) -> None:
    doc = _doc(tmp_path)
    texts = documents(doc, ("md", "html"))
    images = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', texts["cost.html"])
    assert len(images) == 2
    assert all(base64.b64decode(i).startswith(b"<svg") for i in images)
    assert "| **total** |" in markdown(doc)
    assert all(f"]({name})" in texts["cost.md"] for name in CHARTS.values())
    assert texts[CHARTS["queue"]] == chart_svgs(doc)["queue"]


# Money and time that cannot be (issue #32, class 5).


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), float("-inf"), -1, -0.01, 10**400, True, "5", None, [2.0]]
)
def test_a_price_that_is_no_money_is_refused(value: object) -> None:
    assert amount(value) is None
    hosts = {"h-1": {"gpurack_pool": {"name": "h", "cost": {"gpu_hour": value}}}}
    with pytest.raises(CostError, match="must be a finite number of at least 0"):
        pools_from_hosts(hosts)
    with pytest.raises(CostError, match="must be a finite number"):
        site_costs({"network": value})


def test_money_is_finite_and_not_negative_and_zero_only_where_allowed() -> None:
    assert [amount(v) for v in (0, 2.5, 10**6)] == [0.0, 2.5, 1e6]
    assert amount(0, positive=True) is None


@pytest.mark.parametrize(
    ("since", "message"),
    [
        ("999999999999999999d", "ago is before the year 1"),
        ("99999999999999h", "ago is before the year 1"),
        ("0001-01-01T00:00:00+01:00", "outside the years 1 to 9999"),
        ("9" * 5000 + "d", "not a time"),
    ],
)
def test_a_time_no_calendar_holds_is_one_line_and_exit_64(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], since: str, message: str
) -> None:
    result = invoke(capsys, "cost", "-i", _inventory(tmp_path), "--db", db, "--since", since)
    assert result.code == 64 and message in result.err, result
    assert len(result.err.splitlines()) == 1


def _cost(tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    out = tmp_path / "out"
    result = invoke(capsys, "cost", "-i", _inventory(tmp_path), "--db", db, "--output", out, *argv)
    assert result.code == 0, result.err
    return dict(json.loads((out / "cost.json").read_text()))


def test_a_window_into_the_future_is_costed_up_to_now_and_says_so(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cost_command, "now", lambda: NOW)
    doc = _cost(tmp_path, db, capsys, "--since", SINCE, "--until", "2026-12-08T22:00:00Z")
    assert doc["window"]["until"] == "2026-12-01T22:00:00Z" and doc["window"]["hours"] == 12
    assert doc["window"]["clipped"] == [
        "the window ends in the future (2026-12-08T22:00:00Z): costed up to now (2026-12-01T22:00:00Z)"
    ]
    assert doc["gpu_hours"]["capacity"] == 18 * 12  # not a week of idle GPUs
    assert "Window clipped: the window ends in the future" in (tmp_path / "out/cost.md").read_text()


def test_a_window_before_anything_was_recorded_starts_at_the_first_record(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cost_command, "now", lambda: NOW)
    doc = _cost(tmp_path, db, capsys, "--since", "2020-01-01", "--until", UNTIL)
    assert doc["window"]["since"] == "2026-12-01T09:00:00Z"  # accept-c, the first record
    assert doc["window"]["clipped"][0].startswith("nothing was recorded before 2026-12-01T09:00:00Z")


def test_a_window_with_nothing_recorded_at_all_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    with open_store(url):
        pass
    result = invoke(capsys, "cost", "-i", _inventory(tmp_path), "--db", url)
    assert result.code == 64 and "nothing to cost" in result.err, result


def test_impossible_records_are_listed_not_priced_and_not_dropped(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cost_command, "now", lambda: NOW)
    with open_store(db) as store:
        huge = _run("accept-huge", "h200", 900, (2, 4), ("accepted", 10.0))  # the pool has 2 GPUs
        store.record_acceptance(RunRecord(kind="accept", source="inventory:x", started=huge.started), huge)
        backwards = _run("accept-back", "h100", 2, (5, 6), ("failed", 0.0))
        store.record_acceptance(
            RunRecord(kind="accept", source="inventory:x", started=backwards.started), backwards
        )
    # A damaged or clock-skewed record: it ends an hour before it starts.
    with sqlite3.connect(db.removeprefix("sqlite:///")) as raw:
        raw.execute(
            "UPDATE acceptance_runs SET finished = '2026-12-01 14:00:00.000000' WHERE name = 'accept-back'"
        )
    doc = _cost(tmp_path, db, capsys, "--since", SINCE, "--until", UNTIL)
    why = {row["name"]: row["why"] for row in doc["impossible"]}
    assert why == {
        "accept-huge": "it holds 900 GPUs, more than pool h200 has (2)",
        "accept-back": "it ends (2026-12-01T14:00:00Z) before it starts (2026-12-01T15:00:00Z)",
    }
    assert {j["name"] for j in doc["jobs"]} == {"accept-a", "accept-b", "accept-c"}
    assert doc["gpu_hours"]["allocated"] <= doc["gpu_hours"]["capacity"]
    page = (tmp_path / "out/cost.md").read_text()
    assert "## Impossible records (listed, not priced)" in page and "more than pool h200 has" in page


def test_the_currency_is_text_in_markdown_and_html(tmp_path: Path) -> None:
    doc = {**_doc(tmp_path), "currency": "<b>EUR</b> | =1+1 [x](javascript:alert(1))"}
    texts = documents(doc, ("md", "html"))
    tokens = MarkdownIt("commonmark").enable(["table"]).parse(texts["cost.md"])
    kinds = {t.type for token in tokens for t in [token, *(token.children or [])]}
    assert not kinds & {"link_open", "html_inline", "html_block"}, kinds
    assert "<b>" not in texts["cost.md"]
    assert "<b>EUR</b>" not in texts["cost.html"]


def test_cost_json_never_holds_nan_or_infinity(tmp_path: Path) -> None:
    doc = {**_doc(tmp_path), "effective_cost": float("inf")}
    with pytest.raises(ValueError, match="not JSON compliant"):
        documents(doc, ("json",))
