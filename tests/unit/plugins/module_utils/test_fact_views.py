"""Fact views: every path a consumer reads is one a parser writes, shown on real captures.

Three guards (issue 12, point 2):
- each view's FIELDS is produced by some capture: every parser over every capture in
  ../shared/fixtures and tests/fixtures/captures (and over an empty capture, for the
  "unavailable" shapes);
- each `.field("...")` literal in the checks and gpubench is in a view's FIELDS, and a view
  refuses a path outside FIELDS;
- the checks and gpubench never index a fact dict with a string literal outside the views.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import (
    GpuFactsView,
    GpuView,
    NvLinkView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import (
    NicFactsView,
    RdmaPortView,
    parse_ibstat,
    read_infiniband,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import NumaFactsView, NumaNodeView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import (
    NvmeDiskView,
    NvmeFactsView,
    parse_nvme_list,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import (
    OsFactsView,
    XidEventView,
    parse_xid_events,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    parse_lspci_vvv,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci_views import (
    PciDeviceView,
    PciFactsView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView, UnknownFieldError
from conftest import FIXTURES, PUBLIC, REPO

CAPTURES = sorted(
    {p.parent for p in [*FIXTURES.rglob("nvidia-smi-q.txt"), *(REPO / "tests/fixtures/captures").rglob("*")]}
    & {p for p in [*FIXTURES.glob("*/*"), *(REPO / "tests/fixtures/captures").glob("*")] if p.is_dir()}
)
CONSUMERS = [
    *(REPO / "plugins/module_utils/checks").glob("*.py"),
    *(REPO / "tools/gpurack/gpubench").glob("*.py"),
]
# The consumers that read facts (import a parser's view); the others read worker output.
FACT_READERS = [p for p in CONSUMERS if "_facts import" in p.read_text() or p.parent.name == "checks"]
# No capture here has an NVMe drive (the H200 VM's disks are virtio): nvme-cli 2.8's
# `nvme list -o json` layout, as tests/unit/plugins/module_utils/test_nvme_facts.py has it.
NVME_LIST = (
    '{"Devices": [{"HostNQN": "h", "Subsystems": [{"Subsystem": "nvme-subsys0", "Controllers": [{'
    '"Controller": "nvme0", "SerialNumber": "S1", "ModelNumber": "M", "Firmware": "F", "Namespaces": [{'
    '"NameSpace": "nvme0n1", "NSID": 1, "PhysicalSize": 3840755982336}]}]}]}]}'
)

# Each view and where its dicts sit in a node's facts: (fact, list path inside it or "").
WHERE: dict[type[FactView], tuple[str, str]] = {
    GpuFactsView: ("gpurack_gpu", ""),
    GpuView: ("gpurack_gpu", "gpus"),
    NvLinkView: ("gpurack_gpu", "gpus.nvlinks"),
    PciFactsView: ("gpurack_pci", ""),
    PciDeviceView: ("gpurack_pci", "devices"),
    NicFactsView: ("gpurack_nic", ""),
    RdmaPortView: ("gpurack_nic", "rdma"),
    NumaFactsView: ("gpurack_numa", ""),
    NumaNodeView: ("gpurack_numa", "nodes"),
    NvmeFactsView: ("gpurack_nvme", ""),
    NvmeDiskView: ("gpurack_nvme", "disks"),
    OsFactsView: ("gpurack_os", ""),
    XidEventView: ("gpurack_os", "xid_events"),
}


def _paths(value: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, item in value.items():
        yield prefix + key
        if isinstance(item, Mapping):
            yield from _paths(item, f"{prefix}{key}.")


def _elements(value: Any, path: str) -> Iterator[Mapping[str, Any]]:
    """The dicts at a dotted list path (`gpus.nvlinks`: every link of every GPU)."""
    if not path:
        if isinstance(value, Mapping):
            yield value
        return
    head, _, rest = path.partition(".")
    items = value.get(head) if isinstance(value, Mapping) else None
    for item in items if isinstance(items, list) else []:
        yield from _elements(item, rest) if rest else ([item] if isinstance(item, Mapping) else [])


def _public_facts(tmp: Path) -> list[dict[str, Any]]:
    """The public captures are single files or trees: each through its parser, in the facts' shape."""
    devices = parse_lspci_vvv((PUBLIC / "lspci-vvv.hgx-h100").read_text())
    # A copy, not a link: a capture never follows a link out of its folder.
    shutil.copytree(PUBLIC / "sys-class-infiniband-h100", tmp / "sys/class/infiniband")
    return [
        {"gpurack_gpu": parse_nvidia_smi_text((PUBLIC / name).read_text())}
        for name in ("nvidia-smi-q.535.161.08.h100x8", "nvidia-smi-q.535.154.05.rtx4090x8")
    ] + [
        {"gpurack_pci": {"devices": devices}},
        {"gpurack_nic": {"rdma": [dict(p, device="x") for ca in parse_ibstat(
            (PUBLIC / "ibstat.47.0.h100.all.active.2").read_text()) for p in ca["ports"]]}},
        {"gpurack_os": {"xid_events": parse_xid_events((PUBLIC / "dmesg-with-xid-119.log").read_text())}},
        {"gpurack_nic": {"rdma": read_infiniband(CaptureSource(tmp))}},
        {"gpurack_nvme": {"disks": parse_nvme_list(NVME_LIST)}},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[type[FactView], set[str]]:
    """Per view, every path some parser wrote over some capture."""
    empty = tmp_path_factory.mktemp("empty-capture")
    public = tmp_path_factory.mktemp("public")
    node_facts = [gather_all(CaptureSource(root)) for root in [*CAPTURES, empty]] + _public_facts(public)
    found: dict[type[FactView], set[str]] = {view: set() for view in WHERE}
    for facts in node_facts:
        for view, (fact, path) in WHERE.items():
            for element in _elements(facts.get(fact), path):
                found[view] |= set(_paths(element))
    return found


def test_captures_cover_the_shared_and_local_fixtures() -> None:
    names = {p.name for p in CAPTURES}
    assert {"h200x1", "h200x4"} <= names


@pytest.mark.parametrize("view", list(WHERE), ids=lambda v: v.__name__)
def test_every_field_a_view_declares_is_produced_by_a_capture(
    view: type[FactView], produced: dict[type[FactView], set[str]]
) -> None:
    assert view.FIELDS - produced[view] == set()


def _field_literals() -> Iterator[tuple[Path, int, str]]:
    for path in CONSUMERS:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("field", "mapping", "items")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield path, node.lineno, node.args[0].value


def test_every_field_the_checks_and_gpubench_read_is_declared() -> None:
    declared = set().union(*(view.FIELDS for view in WHERE))
    unknown = [f"{p.name}:{line}: {lit}" for p, line, lit in _field_literals() if lit not in declared]
    assert unknown == []
    assert len(list(_field_literals())) > 50  # the scan finds the reads


def test_a_view_refuses_a_path_its_parser_never_writes() -> None:
    gpu = GpuView({"pcie": {"replays": 3}})
    with pytest.raises(UnknownFieldError, match=r"pcie\.replays"):
        gpu.field("pcie.replays")
    assert GpuView({"pcie_replays": {"since_reset": 3}}).field("pcie_replays.since_reset") == 3


def test_checks_and_gpubench_index_no_fact_dict_outside_the_views() -> None:
    """No `x["bus_id"]` or `x.get("pcie")` with a fact key: those reads go through a view."""
    fact_keys = {part for view in WHERE for path in view.FIELDS for part in path.split(".")}
    fact_keys |= {fact for fact, _ in WHERE.values()}
    found = []
    for path in FACT_READERS:
        for node in ast.walk(ast.parse(path.read_text())):
            literal = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                literal = node.slice.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                literal = node.args[0].value
            if isinstance(literal, str) and literal in fact_keys:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {literal!r}")
    assert found == []


def _facts_doc_sections() -> dict[str, str]:
    """docs/facts.md per fact (`## \\`gpurack_gpu\\``...), the conventions heading the file."""
    text = (REPO / "docs/facts.md").read_text()
    head, *parts = text.split("\n## `")
    sections = {part.split("`", 1)[0]: part for part in parts}
    return {name: head + body for name, body in sections.items()}


@pytest.fixture(scope="module")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> dict[type[FactView], set[str]]:
    """Per view, every path `gather_all` wrote over the captures (the facts' own shape)."""
    empty = tmp_path_factory.mktemp("empty-capture")
    found: dict[type[FactView], set[str]] = {view: set(view.FIELDS) for view in WHERE}
    for facts in [gather_all(CaptureSource(root)) for root in [*CAPTURES, empty]]:
        for view, (fact, path) in WHERE.items():
            for element in _elements(facts.get(fact), path):
                found[view] |= set(_paths(element))
    return found


@pytest.mark.parametrize("view", list(WHERE), ids=lambda v: v.__name__)
def test_every_key_a_parser_produces_is_documented(
    view: type[FactView], gathered: dict[type[FactView], set[str]]
) -> None:
    fact, _ = WHERE[view]
    section = _facts_doc_sections()[fact]
    # Keys of open maps (the topology matrix, services, modules, counters) are data, not schema.
    data_maps = ("links.", "services.", "modules.", "counters.", "nic_names.")
    keys = {p for p in gathered[view] if not any(m in f".{p}" for m in data_maps)}
    undocumented = sorted(
        p for p in keys if not re.search(rf"\b{re.escape(p.rsplit('.', 1)[-1])}\b", section)
    )
    assert undocumented == []
