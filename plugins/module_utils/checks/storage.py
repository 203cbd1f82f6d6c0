# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Storage checks: the NVMe data disks."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import Context
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import ExpectKey
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.os import count_result
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    EXPECT,
    CheckSpec,
    check,
    skip,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

NVME_COUNT = CheckSpec(
    "nvme.count",
    "NVMe data disks",
    "quick",
    "number of NVMe namespaces that do not hold the OS",
    "equal to gpurack_expect.nvme.count",
    f"{EXPECT}.nvme.count",
    "reseat or replace the missing drive; check the backplane and BIOS NVMe settings",
    expects=(ExpectKey("nvme.count", "count", "Number of NVMe namespaces."),),
)


@check(NVME_COUNT)
def check_nvme_count(ctx: Context) -> list[CheckResult]:
    nvme = ctx.nvme()
    if nvme is None or nvme.field("available") is False:
        why = "missing" if nvme is None else (nvme.field("reason") or "unavailable")
        return [skip(NVME_COUNT, f"no NVMe facts ({why})")]
    disks = [d for d in nvme.disks() if not d.field("is_os_disk")]
    lines = [f"{d.field('name')}: {d.field('model')} {d.field('serial')}" for d in disks]
    return [
        count_result(
            ctx,
            NVME_COUNT,
            "nvme.count",
            len(disks),
            unit="NVMe data disks",
            source=str(nvme.field("source") or "nvme facts"),
            lines=lines,
        )
    ]
