# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Host and software checks: NVIDIA driver and CUDA versions, NUMA nodes, cgroup, nouveau."""

from __future__ import annotations

import re

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import Context, not_expected
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import ExpectKey
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    EXPECT,
    CheckSpec,
    check,
    result,
    skip,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


DRIVER_VERSION = CheckSpec(
    "driver.version",
    "Driver version",
    "quick",
    "NVIDIA driver version",
    "equal to gpurack_expect.driver.version, or on the branch gpurack_expect.driver.branch",
    f"{EXPECT}.driver",
    "install the expected driver (nvidia_driver role, nvidia_driver_branch) and reboot",
    expects=(
        ExpectKey("driver.version", "version", "Exact driver version, e.g. C(580.159.04)."),
        ExpectKey("driver.branch", "branch", 'Driver branch, e.g. C("580"); any version on it passes.'),
    ),
)


@check(DRIVER_VERSION)
def check_driver_version(ctx: Context) -> list[CheckResult]:
    version, branch = ctx.want("driver.version"), ctx.want("driver.branch")
    if version is None and branch is None:
        return [not_expected(DRIVER_VERSION, "driver")]
    gpu = ctx.gpu()
    if gpu is None:
        return [skip(DRIVER_VERSION, "no GPU facts were gathered (gpurack_gpu missing)")]
    measured = gpu.field("driver_version")
    expected = version if version is not None else f"{branch}.*"
    if measured is None:
        ok, why = False, "no NVIDIA driver is loaded"
    elif version is not None:
        ok, why = measured == version, f"driver {measured} is installed, expected {version}"
    else:
        on_branch = str(measured).split(".", maxsplit=1)[0] == str(branch)
        ok, why = on_branch, f"driver {measured} is not on branch {branch}"
    return [
        result(
            DRIVER_VERSION,
            "pass" if ok else "fail",
            measured=measured,
            expected=expected,
            reason=None if ok else why,
            source=ctx.gpu_source(),
            lines=[f"Driver Version: {measured}"],
        )
    ]


CUDA_VERSION = CheckSpec(
    "cuda.version",
    "CUDA version supported by the driver",
    "quick",
    "highest CUDA version the driver supports (nvidia-smi 'CUDA Version')",
    "at least gpurack_expect.cuda.version",
    f"{EXPECT}.cuda.version",
    "install a driver branch that supports the expected CUDA version",
    expects=(
        ExpectKey(
            "cuda.version",
            "version",
            'Lowest CUDA version the driver must support, e.g. C("13.0") (quote it).',
        ),
    ),
)


@check(CUDA_VERSION)
def check_cuda_version(ctx: Context) -> list[CheckResult]:
    expected = ctx.want("cuda.version")
    if expected is None:
        return [not_expected(CUDA_VERSION, "cuda.version")]
    gpu = ctx.gpu()
    if gpu is None:
        return [skip(CUDA_VERSION, "no GPU facts were gathered (gpurack_gpu missing)")]
    measured = gpu.field("cuda_version")
    ok = measured is not None and _version_tuple(str(measured)) >= _version_tuple(expected)
    why = (
        "no NVIDIA driver is loaded"
        if measured is None
        else f"the driver supports CUDA up to {measured}, expected at least {expected}"
    )
    return [
        result(
            CUDA_VERSION,
            "pass" if ok else "fail",
            measured=measured,
            expected=expected,
            reason=None if ok else why,
            source=ctx.gpu_source(),
            lines=[f"CUDA Version: {measured}"],
        )
    ]


NUMA_NODES = CheckSpec(
    "numa.nodes",
    "NUMA node count",
    "quick",
    "number of NUMA nodes",
    "equal to gpurack_expect.numa_nodes",
    f"{EXPECT}.numa_nodes",
    "check BIOS NUMA settings (NPS / sub-NUMA clustering) against the pool's expectation",
    expects=(ExpectKey("numa_nodes", "positive_int", "Number of NUMA nodes."),),
)


def count_result(
    ctx: Context, entry: CheckSpec, dotted: str, measured: int, *, unit: str, source: str, lines: list[str]
) -> CheckResult:
    """Pass when `measured` equals the expectation at `dotted`; skip when none is set."""
    expected = ctx.want(dotted)
    if expected is None:
        return not_expected(entry, dotted, measured)
    ok = measured == expected
    return result(
        entry,
        "pass" if ok else "fail",
        measured=measured,
        expected=expected,
        unit=unit,
        reason=None if ok else f"{measured} {unit} found, expected {expected}",
        source=source,
        lines=lines,
    )


@check(NUMA_NODES)
def check_numa_nodes(ctx: Context) -> list[CheckResult]:
    numa = ctx.numa()
    if numa is None or numa.field("available") is False or numa.field("count") is None:
        return [skip(NUMA_NODES, "no NUMA facts were gathered (gpurack_numa missing or unavailable)")]
    lines = [f"node{n.field('id')}: cpus {n.field('cpulist')}" for n in numa.nodes()]
    return [
        count_result(
            ctx,
            NUMA_NODES,
            "numa_nodes",
            numa.field("count"),
            unit="NUMA nodes",
            source="sysfs /sys/devices/system/node",
            lines=lines,
        )
    ]


CGROUP = CheckSpec(
    "os.cgroup_v2",
    "cgroup v2",
    "quick",
    "cgroup version of the host",
    "gpurack_expect.os.cgroup_version, else 2 (warn)",
    "vendor doc: Kubernetes cgroup v2 (v1 deprecated)",
    "boot with systemd.unified_cgroup_hierarchy=1 (the os_tuning role does this)",
    expects=(
        ExpectKey(
            "os.cgroup_version", "choice", "cgroup version of the host (2 when absent, as a warning).", (1, 2)
        ),
    ),
)


@check(CGROUP)
def check_cgroup(ctx: Context) -> list[CheckResult]:
    os_facts = ctx.os()
    version = os_facts.field("cgroup_version") if os_facts is not None else None
    if version is None:
        return [skip(CGROUP, "cgroup version unknown (gpurack_os.cgroup_version missing)")]
    want = ctx.want("os.cgroup_version")
    expected = want if want is not None else 2
    ok = version == expected
    return [
        result(
            CGROUP,
            "pass" if ok else ("fail" if want is not None else "warn"),
            measured=version,
            expected=expected,
            reason=None if ok else f"the host runs cgroup v{version}, expected v{expected}",
            source="sysfs /sys/fs/cgroup",
            lines=[f"cgroup version: {version}"],
            limit_source=f"{EXPECT}.os.cgroup_version" if want is not None else None,
        )
    ]


NOUVEAU = CheckSpec(
    "os.nouveau_absent",
    "nouveau not loaded",
    "quick",
    "whether the nouveau module is loaded",
    "not loaded",
    "vendor doc: NVIDIA driver installation guide",
    "blacklist nouveau (modprobe.d), rebuild the initramfs and reboot (the nvidia_driver role does this)",
)


@check(NOUVEAU)
def check_nouveau(ctx: Context) -> list[CheckResult]:
    os_facts = ctx.os()
    loaded = os_facts.module_loaded("nouveau") if os_facts is not None else None
    if loaded is None:
        return [skip(NOUVEAU, "loaded kernel modules unknown (gpurack_os.modules missing)")]
    return [
        result(
            NOUVEAU,
            "fail" if loaded else "pass",
            measured=loaded,
            expected=False,
            reason="the nouveau module is loaded" if loaded else None,
            source="lsmod, /sys/module",
            lines=[f"nouveau loaded: {loaded}"],
        )
    ]
