"""pci/numa/nic/nvme/os facts modules: main() end to end against the real H200 capture."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import RC_NOT_FOUND
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.runner import make_runner
from conftest import H200X1
from module_helpers import run_module

MODULES = ["pci", "numa", "nic", "nvme", "os"]


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], thing: str, **args: Any
) -> dict[str, Any]:
    """Run <thing>_facts main() as Ansible would and return its JSON result."""
    return run_module(monkeypatch, capsys, f"{thing}_facts", **args)


def _writable_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "h200x1"
    shutil.copytree(H200X1, copy, copy_function=shutil.copyfile)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


@pytest.mark.parametrize("thing", MODULES)
def test_facts_module_h200x1_capture_returns_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], thing: str
) -> None:
    result = _run(monkeypatch, capsys, thing, root=str(H200X1))
    assert result["changed"] is False
    assert "failed" not in result
    assert result["ansible_facts"][f"gpurack_{thing}"]["available"] is True


@pytest.mark.parametrize("thing", MODULES)
def test_facts_module_check_mode_returns_same_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], thing: str
) -> None:
    normal = _run(monkeypatch, capsys, thing, root=str(H200X1))
    checked = _run(monkeypatch, capsys, thing, root=str(H200X1), _ansible_check_mode=True)
    assert checked["ansible_facts"] == normal["ansible_facts"]
    assert checked["changed"] is False


def test_facts_module_values_match_h200x1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(H200X1)
    pci = _run(monkeypatch, capsys, "pci", root=root)["ansible_facts"]["gpurack_pci"]
    assert [d["bus_id"] for d in pci["devices"] if d["vendor_id"] == "0x10de"] == ["0000:00:06.0"]
    numa = _run(monkeypatch, capsys, "numa", root=root)["ansible_facts"]["gpurack_numa"]
    assert numa["nodes"][0]["cpulist"] == "0-15"
    nic = _run(monkeypatch, capsys, "nic", root=root)["ansible_facts"]["gpurack_nic"]
    assert (nic["ibstat_available"], nic["rdma"]) == (False, [])
    nvme = _run(monkeypatch, capsys, "nvme", root=root)["ansible_facts"]["gpurack_nvme"]
    assert (nvme["source"], nvme["disks"]) == ("sysfs", [])
    os_facts = _run(monkeypatch, capsys, "os", root=root)["ansible_facts"]["gpurack_os"]
    assert os_facts["kernel"] == "6.18.44-fc-v657-gpu"


@pytest.mark.parametrize(
    "case",
    [
        # Edit: an LnkSta line without its Speed.
        (
            "pci",
            "lspci-vvv.txt",
            "# $ lspci -vvv\n00:06.0 3D controller: NVIDIA Corporation Device 2335 (rev a1)\n"
            "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\t\tLnkSta:\tWidth x16 (ok)\n# rc=0\n",
            "Could not read PCI facts from capture .*: lspci -vvv: 0000:00:06.0 LnkSta line has no Speed",
        ),
        # Edit: lscpu JSON cut off.
        (
            "numa",
            "lscpu.json",
            '# $ lscpu -J\n{"lscpu": [\n# rc=0\n',
            "Could not read NUMA facts .*lscpu -J: invalid JSON",
        ),
        # Edit: ibstat with a CA header and no ports.
        (
            "nic",
            "ibstat.txt",
            "# $ ibstat\nCA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n# rc=0\n",
            "Could not read NIC facts .*ibstat: CA 'mlx5_0' lists no ports",
        ),
        # Edit: invalid nvme JSON.
        (
            "nvme",
            "nvme-list.json",
            "# $ nvme list -o json\n{Devices:\n# rc=0\n",
            "nvme list -o json: invalid JSON",
        ),
        # Edit: the uname file lost its rc footer (a truncated capture).
        (
            "os",
            "uname.txt",
            "# $ uname -a\nLinux vm 6.18.44\n",
            "uname.txt: last line must be '# rc=<exit code>'",
        ),
    ],
    ids=MODULES,
)
def test_facts_module_bad_capture_fails_with_clear_msg(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    case: tuple[str, str, str, str],
) -> None:
    thing, filename, content, message = case
    copy = _writable_copy(tmp_path)
    (copy / filename).write_text(content)
    result = _run(monkeypatch, capsys, thing, root=str(copy))
    assert result["failed"] is True
    assert "Traceback" not in result["msg"]
    assert re.search(message, result["msg"]), result["msg"]


class _FakeModule:
    """Records run_command calls; knows only the tools in `paths`."""

    def __init__(self, paths: dict[str, str]) -> None:
        self.paths = paths
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def get_bin_path(self, arg: str, required: bool = False, opt_dirs: Any = None) -> str | None:
        return self.paths.get(arg)

    def run_command(self, args: Any, **kwargs: Any) -> tuple[int, str, str]:
        self.calls.append((args, kwargs))
        return 0, "out\n", "err\n"


def test_make_runner_missing_tool_returns_rc_127_without_running() -> None:
    module = _FakeModule({})
    out = make_runner(module)(["lspci", "-vvv"])
    assert out.rc == RC_NOT_FOUND
    assert out.missing
    assert module.calls == []


def test_make_runner_found_tool_runs_list_with_full_path_in_c_locale() -> None:
    module = _FakeModule({"lspci": "/usr/bin/lspci"})
    out = make_runner(module)(("lspci", "-vvv"))
    assert (out.rc, out.stdout, out.stderr) == (0, "out\n", "err\n")
    ((args, kwargs),) = module.calls
    assert args == ["/usr/bin/lspci", "-vvv"]
    assert kwargs["environ_update"]["LC_ALL"] == "C"
