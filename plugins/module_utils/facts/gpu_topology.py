# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""nvidia-smi topo -m and nvlink -s: the GPU/NIC matrix, CPU and NUMA affinity, NVLink links.

Stdlib only. The `parse_*` functions raise `FactsError` naming the command and the problem.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_values import ANSI, known

CMD_TOPO = ("nvidia-smi", "topo", "-m")
CMD_NVLINK = ("nvidia-smi", "nvlink", "-s")

SRC_TOPO = "nvidia-smi topo -m"
SRC_NVLINK = "nvidia-smi nvlink -s"

_NVLINK_GPU = re.compile(r"^GPU (?P<index>\d+): (?P<name>.*?)(?: \(UUID: (?P<uuid>[^)]*)\))?\s*$")
_NVLINK_LINK = re.compile(
    r"^\s+Link (?P<link>\d+): (?:(?P<inactive><inactive>)|(?P<speed>\d+(?:\.\d+)?) GB/s)\s*$"
)
_TOPO_NIC_LEGEND = re.compile(r"^\s*(?P<nic>NIC\d+)\s*:\s*(?P<name>\S+)\s*$")
_TOPO_AFFINITY = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_GPU_LABEL = re.compile(r"^GPU\d+$")
_NV_LINK_TYPE = re.compile(r"^NV\d+$")


# ---------------------------------------------------------------------------------------
# nvidia-smi topo -m


def parse_topo_matrix(text: str) -> dict[str, Any]:
    """`nvidia-smi topo -m` -> {gpus, links, nics, nic_names, affinity}.

    `links[a][b]` is the connection type (NV18, PIX, SYS...) for every listed pair except
    the diagonal X; `affinity[GPUn]` is {cpu_affinity, numa_node} (None when N/A).

    Raises:
        FactsError: no header row, a device row is missing, or a row has too few columns.
    """
    refuse_long_numbers(text, SRC_TOPO)
    lines = [ANSI.sub("", line).rstrip() for line in text.splitlines()]
    header_at = next(
        (i for i, line in enumerate(lines) if line[:1] in ("\t", " ") and re.search(r"\bGPU\d+\b", line)),
        None,
    )
    if header_at is None:
        raise FactsError(f"{SRC_TOPO}: no header row with GPU columns (not topo -m output?)")
    columns = [c.strip() for c in lines[header_at].split("\t") if c.strip()]
    devices = [c for c in columns if c not in _TOPO_AFFINITY]
    affinity_columns = [c for c in columns if c in _TOPO_AFFINITY]
    gpus = [d for d in devices if _GPU_LABEL.match(d)]
    nics = [d for d in devices if not _GPU_LABEL.match(d)]

    links: dict[str, dict[str, str]] = {}
    affinity: dict[str, dict[str, Any]] = {}
    nic_names: dict[str, str] = {}
    for line in lines[header_at + 1 :]:
        if legend := _TOPO_NIC_LEGEND.match(line):
            nic_names[legend.group("nic")] = legend.group("name")
            continue
        fields = [f.strip() for f in line.split("\t") if f.strip()]
        if not fields or fields[0] not in devices or fields[0] in links:
            continue
        row, values = fields[0], fields[1:]
        if len(values) < len(devices):
            raise FactsError(
                f"{SRC_TOPO}: row {row} has {len(values)} columns, expected {len(devices)} (truncated?)"
            )
        links[row] = {dev: kind for dev, kind in zip(devices, values, strict=False) if dev != row}
        if row in gpus:
            extra = dict(zip(affinity_columns, values[len(devices) :], strict=False))
            numa = known(extra.get("NUMA Affinity"))
            affinity[row] = {
                "cpu_affinity": known(extra.get("CPU Affinity")),
                "numa_node": int(numa) if numa is not None and numa.isdecimal() else None,
            }
    missing = [d for d in devices if d not in links]
    if missing:
        raise FactsError(f"{SRC_TOPO}: no row for {', '.join(missing)} (truncated output?)")
    return {"gpus": gpus, "links": links, "nics": nics, "nic_names": nic_names, "affinity": affinity}


# ---------------------------------------------------------------------------------------
# nvidia-smi nvlink -s


def parse_nvlink_status(text: str) -> dict[int, list[dict[str, Any]]]:
    """`nvidia-smi nvlink -s` -> {gpu index: [{link, speed_gbps, active}]}; empty text -> {}.

    `speed_gbps` is the per-link rate nvidia-smi prints in GB/s; inactive links have None.

    Raises:
        FactsError: a line is neither a `GPU n:` header nor a `Link n:` line under one.
    """
    refuse_long_numbers(text, SRC_NVLINK)
    result: dict[int, list[dict[str, Any]]] = {}
    current: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if gpu := _NVLINK_GPU.match(line):
            current = int(gpu.group("index"))
            result[current] = []
            continue
        link = _NVLINK_LINK.match(line)
        if link is None:
            raise FactsError(f"{SRC_NVLINK}: line {number} does not parse: {line.strip()!r}")
        if current is None:
            raise FactsError(f"{SRC_NVLINK}: line {number} lists a link before any 'GPU n:' line")
        active = link.group("inactive") is None
        result[current].append(
            {
                "link": int(link.group("link")),
                "speed_gbps": float(link.group("speed")) if active else None,
                "active": active,
            }
        )
    return result


def is_nvswitch_mesh(topology: Mapping[str, Any]) -> bool:
    # Two GPUs on an NVLink bridge also form a "full mesh"; only call it NVSwitch beyond that.
    gpus: list[str] = topology["gpus"]
    links: dict[str, dict[str, str]] = topology["links"]
    return len(gpus) > 2 and all(
        _NV_LINK_TYPE.match(links.get(a, {}).get(b, "")) for a in gpus for b in gpus if a != b
    )
