"""NVIDIA's GPU feature discovery beside gpurack's own facts, on a real GPU node (issue 28).

GFD labels a node from NVML (`nvidia.com/gpu.product`, `.count`, `.memory`, the driver and
CUDA versions, the GPU family); gpurack derives its labels from `gpurack_gpu` facts. Both read
the same GPU, so every figure they share must agree. Stdlib and module_utils only: this runs
on the GPU machine's own Python, beside GFD's `--oneshot --output-file` result:

    PYTHONPATH=.collections:lab python3 -m gpurack_lab.gfd GFD_LABELS_FILE
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    RC_NOT_FOUND,
    CommandOutput,
    LiveSource,
    gather_gpu,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import (
    accelerator_label,
    topology_label,
)

GFD = "nvidia.com/"


@dataclass(frozen=True, slots=True)
class Agreement:
    """One figure both read: GFD's value, gpurack's, and whether they agree."""

    what: str
    gfd: str
    gpurack: str

    @property
    def agrees(self) -> bool:
        return self.gfd == self.gpurack


def parse_labels(text: str) -> dict[str, str]:
    """GFD's output file: one `key=value` per line."""
    labels = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key:
            labels[key] = value
    return labels


def compare(labels: Mapping[str, str], gpu_facts: Mapping[str, Any]) -> list[Agreement]:
    """Every figure GFD's labels and gpurack's GPU facts both give, side by side."""
    gpus = [g for g in gpu_facts.get("gpus") or [] if isinstance(g, Mapping)]
    first = gpus[0] if gpus else {}
    # GFD writes the product name with its blanks as dashes (its sanitise()).
    product = labels.get(f"{GFD}gpu.product", "").replace("-", " ")
    return [
        Agreement("GPU count", labels.get(f"{GFD}gpu.count", ""), str(len(gpus))),
        Agreement(
            "GPU model (gpurack.io/accelerator)",
            accelerator_label({"gpus": [{"name": product}]}) if product else "none",
            accelerator_label(gpu_facts),
        ),
        Agreement(
            "GPU memory (MiB)", labels.get(f"{GFD}gpu.memory", ""), str(first.get("memory_total_mib", ""))
        ),
        Agreement(
            "driver",
            labels.get(f"{GFD}cuda.driver-version.full", ""),
            str(gpu_facts.get("driver_version") or ""),
        ),
        Agreement(
            "CUDA (driver API)",
            labels.get(f"{GFD}cuda.runtime-version.full", ""),
            str(gpu_facts.get("cuda_version") or ""),
        ),
        Agreement(
            "GPU family", labels.get(f"{GFD}gpu.family", ""), str(first.get("architecture") or "").lower()
        ),
    ]


def _run(argv: Sequence[str]) -> CommandOutput:
    """A command on this machine, as the facts modules run it (rc 127 when it is not installed)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=120)
    except FileNotFoundError:
        return CommandOutput(RC_NOT_FOUND, "", f"{argv[0]}: not found")
    return CommandOutput(done.returncode, done.stdout, done.stderr)


def main(argv: list[str]) -> int:
    """Compare GFD's labels file with the GPU facts gathered here; exit 1 on any disagreement."""
    labels = parse_labels(Path(argv[0]).read_text(encoding="utf-8"))
    gpu_facts = gather_gpu(LiveSource(_run))
    rows = compare(labels, gpu_facts)
    report = {"topology": topology_label(gpu_facts), "rows": [asdict(r) | {"agrees": r.agrees} for r in rows]}
    print(json.dumps(report, indent=1))
    return 0 if all(r.agrees for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
