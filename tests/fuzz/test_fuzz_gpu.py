"""Property: the nvidia-smi parsers (-q -x, -q, topo -m, nvlink -s) parse or raise FactsError only."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import resolve_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    CMD_TEXT,
    CMD_XML,
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_topology import (
    CMD_NVLINK,
    CMD_TOPO,
    parse_nvlink_status,
    parse_topo_matrix,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureError
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzz_inputs import attempt, mutated_xml, numbers, random_text, texts
from .fuzz_node import H200X1, H200X4, NODES, PUBLIC, DictSource, mutated_node

XML = tuple(
    n.commands[CMD_XML].stdout for n in NODES if CMD_XML in n.commands and n.commands[CMD_XML].rc == 0
)
TEXT = (
    *(
        n.commands[CMD_TEXT].stdout
        for n in NODES
        if n.commands.get(CMD_TEXT) and n.commands[CMD_TEXT].rc == 0
    ),
    (PUBLIC / "nvidia-smi-q.535.154.05.rtx4090x8").read_text(),
)
TOPO = tuple(
    n.commands[CMD_TOPO].stdout for n in NODES if CMD_TOPO in n.commands and n.commands[CMD_TOPO].rc == 0
)
NVLINK = tuple(
    n.commands[CMD_NVLINK].stdout
    for n in NODES
    if CMD_NVLINK in n.commands and n.commands[CMD_NVLINK].rc == 0
)
TEXT_LINES = (
    "GPU 00000000:00:06.0",
    "Attached GPUs                             : 9",
    "    FB Memory Usage",
    "        Total                             : -5 MiB",
    "    MIG Mode",
    "        Current                           : Maybe",
    "            Current                       : 99999999999999999999999x",
)
TOPO_LINES = (
    "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity",
    "GPU0\t X \tNV18",
    "NIC0: mlx5_0",
    "GPU9\tSYS",
)
NVLINK_LINES = (
    "GPU 0: NVIDIA H200 (UUID: GPU-x)",
    "\t Link 0: 1.2.3 GB/s",
    "\t Link 99: <inactive>",
    "GPU 99: x",
)


def test_every_capture_base_is_real() -> None:
    # The strategies below start from real output: make sure it was found.
    assert XML and TEXT and TOPO and NVLINK
    assert H200X1.is_dir() and H200X4.is_dir()


@settings(database=None, deadline=None)
@given(st.one_of(mutated_xml(XML), texts(XML, nest=("<volatile>", "<a>", "</a>", ""))))
def test_nvidia_smi_xml_parses_or_refuses(text: str) -> None:
    attempt("nvidia-smi -q -x", lambda: parse_nvidia_smi_xml(text), (FactsError,))


@settings(database=None, deadline=None)
@given(texts(TEXT, TEXT_LINES))
def test_nvidia_smi_text_parses_or_refuses(text: str) -> None:
    attempt("nvidia-smi -q", lambda: parse_nvidia_smi_text(text), (FactsError,))


@settings(database=None, deadline=None)
@given(texts(TOPO, TOPO_LINES))
def test_topo_matrix_parses_or_refuses(text: str) -> None:
    attempt("nvidia-smi topo -m", lambda: parse_topo_matrix(text), (FactsError,))


@settings(database=None, deadline=None)
@given(texts(NVLINK, NVLINK_LINES))
def test_nvlink_status_parses_or_refuses(text: str) -> None:
    attempt("nvidia-smi nvlink -s", lambda: parse_nvlink_status(text), (FactsError,))


@settings(database=None, deadline=None)
@given(mutated_node(("sys/bus/pci/devices",), (CMD_XML, CMD_TEXT, CMD_TOPO, CMD_NVLINK)))
def test_gather_gpu_reads_or_refuses(source: DictSource) -> None:
    attempt("gather_gpu (nvidia-smi + sysfs PCI)", lambda: gather_gpu(source), (FactsError, CaptureError))


@settings(database=None, deadline=None)
@given(st.one_of(random_text(), numbers(), st.none()), st.one_of(random_text(), numbers(), st.none()))
def test_gpu_model_lookup_never_fails(name: str | None, device_id: str | None) -> None:
    # Names come from nvidia-smi and sysfs unchecked: any of them resolves to a model.
    attempt("GPU model table (resolve_model)", lambda: resolve_model(name, device_id).slug, ())
