"""Inventory values of the wrong type (issue #32, class 3): every verb that reads `-i` says which
key of which host or group is wrong and what it should be, in one line with exit 64; never a
traceback (exit 70) and never a silent default.

Each case writes the value as YAML text, unquoted, the way an operator would type it.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
import yaml
from gpurack.cli import main
from gpurack.errors import ExitCode
from gpurack.inventory import open_store

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "inventory" / "example"

# What YAML makes of these (unquoted): a date, a list, a mapping, inf, nan, an int beyond a float.
ROOT_REFUSED = {
    "date": ("2026-01-01", "is the date or time 2026-01-01"),
    "datetime": ("2026-01-01 10:00:00", "is the date or time 2026-01-01T10:00:00"),
    "inf": (".inf", "is inf, not a finite number"),
    "nan": (".nan", "is nan, not a finite number"),
    "huge": ("1" + "0" * 400, "is a number of 401 digits, too large"),
}
WRONG_TYPE = {"list": "[a, b]", "mapping": "{a: 1}", "bool": "true", "null": "null"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _platform(tmp_path: Path) -> list[str]:
    shutil.copytree(EXAMPLE, tmp_path / "inv")
    return ["platform", "render", "-i", str(tmp_path / "inv"), "-o", str(tmp_path / "out")]


def _cost(tmp_path: Path) -> list[str]:
    inv = tmp_path / "inv"
    (inv / "group_vars" / "h100").mkdir(parents=True)
    (inv / "hosts.yml").write_text("all:\n  children:\n    h100:\n      hosts: {h100-1: {}, h100-2: {}}\n")
    pool = {"name": "h100", "workload": "batch", "sharing": "full-gpu", "cost": {"gpu_hour": 2.0}}
    (inv / "group_vars" / "h100" / "pool.yml").write_text(
        yaml.safe_dump({"gpurack_pool": pool, "gpurack_expect": {"gpu": {"count": 8}}})
    )
    db = tmp_path / "inventory.db"
    with open_store(f"sqlite:///{db}"):
        pass
    return [
        "cost", "-i", str(inv), "--db", f"sqlite:///{db}", "--output", str(tmp_path / "out"),
        "--since", "2026-12-01T10:00:00Z", "--until", "2026-12-01T20:00:00Z",
    ]  # fmt: skip


def _fabric(tmp_path: Path) -> list[str]:
    inv = tmp_path / "inv"
    inv.mkdir()
    switch = {"ansible_host": "127.0.0.1", "ansible_port": _closed_port(), "ansible_network_os": "arista_eos",
              "ansible_user": "admin", "ansible_password": "pw"}  # fmt: skip
    cabling = {"mlx5_0": {"switch": "leaf1", "port": "Et1"}}
    children = {
        "gpu_nodes": {"hosts": {"gpu01": {"gpurack_cabling": cabling}}},
        "tor_switches": {"hosts": {"leaf1": switch}},
    }
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": children}}))
    return ["fabric", "check", "-i", str(inv), "--no-record", "--timeout", "1"]


def _queue(tmp_path: Path) -> list[str]:
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yml").write_text("all:\n  hosts: {gpu01: {}}\n")
    return ["queue", "-i", str(inv)]


VERBS = {"platform": _platform, "cost": _cost, "fabric": _fabric, "queue": _queue}

# (verb, the file under the inventory, the YAML that sets the key, {} where VALUE goes, key, owner)
PLACES = [
    ("platform", "group_vars/all/zz.yml", "gpurack_cohort: VALUE", "gpurack_cohort", "group all"),
    ("platform", "group_vars/all/zz.yml", "gpu_operator_namespace: VALUE", "gpu_operator_namespace",
     "group all"),
    ("platform", "group_vars/all/zz.yml",
     "gpurack_teams: [{name: research, groups: [g], quota: {h100-train-a: {gpus: 8}}, priority: VALUE}]",
     "gpurack_teams[0].priority", "group all"),
    ("platform", "group_vars/all/zz.yml", "gpurack_object_store: {cidrs: [VALUE], port: 443}",
     "gpurack_object_store.cidrs[0]", "group all"),
    ("platform", "host_vars/h100-a-01.yml", "gpurack_expect: {gpu: {count: VALUE}}",
     "gpurack_expect.gpu.count", "host h100-a-01"),
    ("platform", "host_vars/h100-a-01.yml",
     "gpurack_pool: {name: h100-train-a, workload: distributed-training, sharing: full-gpu, min_available: 2,"
     " cost: {gpu_hour: VALUE}, taints: [{key: gpurack.io/pool, value: h100-train-a, effect: NoSchedule}]}",
     "gpurack_pool.cost.gpu_hour", "host h100-a-01"),
    ("cost", "host_vars/h100-1.yml", "gpurack_expect: {gpu: {count: VALUE}}",
     "gpurack_expect.gpu.count", "host h100-1"),
    ("cost", "group_vars/all/site.yml", "gpurack_site_costs: {currency: VALUE}",
     "gpurack_site_costs.currency", "group all"),
    ("cost", "group_vars/all/site.yml", "gpurack_site_costs: {network: VALUE}",
     "gpurack_site_costs.network", "group all"),
    ("cost", "group_vars/all/site.yml", "gpurack_acceptance: {baseline: {kind: gpu_hour, price: VALUE}}",
     "gpurack_acceptance.baseline.price", "host h100-1"),
    ("fabric", "host_vars/gpu01.yml", "gpurack_expect: {rdma: {ports: VALUE}}", "gpurack_expect.rdma.ports",
     "host gpu01"),
    ("fabric", "host_vars/leaf1.yml", "ansible_user: VALUE", "ansible_user", "host leaf1"),
    ("fabric", "host_vars/leaf1.yml", "ansible_port: VALUE", "ansible_port", "host leaf1"),
    ("queue", "host_vars/gpu01.yml", "gpurack_kubeconfig: VALUE", "gpurack_kubeconfig", "host gpu01"),
]  # fmt: skip
PLACE_IDS = [f"{verb}-{key}" for verb, _, _, key, _ in PLACES]

# A value of the wrong type that the key takes as meaning something (absent, a default): no error.
ACCEPTED = {("null", "gpurack_cohort"), ("null", "gpu_operator_namespace"),
            ("null", "gpurack_teams[0].priority"), ("null", "gpurack_site_costs.currency"),
            ("null", "gpurack_kubeconfig"), ("null", "ansible_port")}  # fmt: skip


def _run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, place: tuple[str, ...], value: str
) -> tuple[int, str]:
    verb, file, text, _, _ = place
    argv = VERBS[verb](tmp_path)
    target = tmp_path / "inv" / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text.replace("VALUE", value) + "\n")
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("kind", list(ROOT_REFUSED))
@pytest.mark.parametrize("place", PLACES, ids=PLACE_IDS)
def test_a_value_json_cannot_hold_is_one_line_naming_key_and_owner(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, place: tuple[str, ...], kind: str
) -> None:
    value, says = ROOT_REFUSED[kind]
    code, err = _run(capsys, tmp_path, place, value)
    _, _, _, key, owner = place
    assert code == ExitCode.USAGE
    assert err.splitlines() == [f"gpurack: {tmp_path / 'inv'}: {key} of {owner} {says}" + _hint(kind)]


def _hint(kind: str) -> str:
    return ", not text (YAML reads an unquoted date so: quote it)" if kind in ("date", "datetime") else ""


@pytest.mark.parametrize("kind", list(WRONG_TYPE))
@pytest.mark.parametrize("place", PLACES, ids=PLACE_IDS)
def test_a_value_of_the_wrong_type_is_one_line_naming_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, place: tuple[str, ...], kind: str
) -> None:
    code, err = _run(capsys, tmp_path, place, WRONG_TYPE[kind])
    key = place[3]
    if (kind, key) in ACCEPTED:
        # A default stands in (e.g. port 22): the verb runs; at most its one line of outcome.
        assert code != ExitCode.INTERNAL and len([ln for ln in err.splitlines() if ln.strip()]) <= 1, err
        return
    assert code == ExitCode.USAGE, err
    (line,) = err.splitlines()
    leaf = key.rsplit(".", 1)[-1].split("[", 1)[0]
    assert line.startswith("gpurack: ") and leaf in line


def test_a_quoted_date_is_text_and_renders(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The fix the message gives works: the same date, quoted, is a cohort name like any other."""
    argv = _platform(tmp_path)
    (tmp_path / "inv" / "group_vars" / "all" / "zz.yml").write_text('gpurack_cohort: "2026-01-01"\n')
    assert main(argv) == ExitCode.OK, capsys.readouterr().err
    assert "'2026-01-01'" in (tmp_path / "out" / "kueue.yaml").read_text()


@pytest.mark.parametrize("value", ["2026-02-30", "1" * 5000], ids=["no-such-date", "5000-digits"])
@pytest.mark.parametrize("verb", list(VERBS))
def test_a_value_yaml_cannot_load_is_one_line_that_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: str, value: str
) -> None:
    """YAML itself refuses these: Ansible warns why, gpurack ends with one line (not 'no hosts')."""
    argv = VERBS[verb](tmp_path)
    hosts = next((tmp_path / "inv").glob("hosts.yml"))
    hosts.write_text(hosts.read_text() + f"# broken below\nbroken: {value}\n")
    code = main(argv)
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE and "Traceback" not in err
    assert err.splitlines()[-1].startswith(
        f"gpurack: {tmp_path / 'inv'}: ansible could not parse it as an inventory"
    )
