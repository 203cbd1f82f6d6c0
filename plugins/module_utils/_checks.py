# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Quick-tier node checks: small pure functions over the facts of docs/facts.md.

Each check returns one result per component (the node, a GPU, an RDMA port) in the shape
of docs/checks.md. Missing facts make a check skip with a reason; checks that compare with
an expectation skip when `gpurack_expect` does not set it. Every check runs: one that
cannot read malformed facts skips with the reason instead of stopping the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._check_catalogue import (
    TIERS,
    checks_for_tier,
    spec,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._expect import get, validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import find_model, resolve_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils._xid_catalogue import xid_info

Result = dict[str, Any]
Facts = Mapping[str, Any]

VERDICTS = ("pass", "warn", "fail", "skip")

_GPU_SOURCES = {
    "nvidia-smi-xml": "nvidia-smi -q -x",
    "nvidia-smi-text": "nvidia-smi -q",
    "pci-scan": "sysfs /sys/bus/pci/devices",
}


class ExpectError(ValueError):
    """`gpurack_expect` is invalid; `errors` lists every problem with its full path."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("invalid expectations: " + "; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Context:
    """What every check reads: the facts by name and the validated expectations."""

    facts: Facts
    expect: Mapping[str, Any]

    def fact(self, name: str) -> Mapping[str, Any] | None:
        value = self.facts.get(name)
        return value if isinstance(value, Mapping) else None

    def want(self, dotted: str) -> Any:
        return get(self.expect, dotted)

    def gpus(self) -> tuple[list[Mapping[str, Any]], str | None]:
        """The GPU list, or ([], why there is none to check)."""
        gpu = self.fact("gpurack_gpu")
        if gpu is None:
            return [], "no GPU facts were gathered (gpurack_gpu missing)"
        if not gpu.get("available", True):
            return [], f"GPU facts unavailable: {gpu.get('reason') or 'no reason given'}"
        gpus = [g for g in gpu.get("gpus") or [] if isinstance(g, Mapping)]
        return gpus, (None if gpus else "no GPUs found")

    def gpu_source(self) -> str:
        gpu = self.fact("gpurack_gpu") or {}
        return _GPU_SOURCES.get(str(gpu.get("source")), str(gpu.get("source") or "gpu facts"))


CheckFn = Callable[[Context], list[Result]]
REGISTRY: dict[str, CheckFn] = {}


def check(check_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register a check function under a catalogue id."""
    spec(check_id)  # an id missing from the catalogue is a programming error: fail at import

    def register(fn: CheckFn) -> CheckFn:
        REGISTRY[check_id] = fn
        return fn

    return register


def result(
    check_id: str,
    verdict: str,
    *,
    component: str = "node",
    measured: Any = None,
    expected: Any = None,
    unit: str | None = None,
    reason: str | None = None,
    source: str = "facts",
    lines: Iterable[str] = (),
    remediation: str | None = None,
    limit_source: str | None = None,
) -> Result:
    """One result in the shared shape; remediation defaults to the catalogue's on warn/fail."""
    entry = spec(check_id)
    if remediation is None and verdict in ("warn", "fail"):
        remediation = entry.remediation
    return {
        "id": check_id,
        "title": entry.title,
        "tier": entry.tier,
        "component": component,
        "verdict": verdict,
        "measured": measured,
        "expected": expected,
        "unit": unit,
        "reason": reason,
        "remediation": remediation if verdict in ("warn", "fail") else None,
        "evidence": {"source": source, "lines": list(lines)[:20]},
        "limit_source": limit_source if limit_source is not None else entry.limit_source,
    }


def skip(check_id: str, reason: str, *, component: str = "node", measured: Any = None) -> Result:
    """A skipped result with its reason."""
    return result(check_id, "skip", component=component, reason=reason, measured=measured, limit_source="")


def gpu_component(gpu: Mapping[str, Any]) -> str:
    """`GPU 3 (0000:19:00.0)`."""
    return f"GPU {gpu.get('index')} ({gpu.get('bus_id')})"


def port_component(port: Mapping[str, Any]) -> str:
    """`mlx5_5 port 1`."""
    return f"{port.get('device')} port {port.get('port')}"


def _not_expected(check_id: str, dotted: str, measured: Any = None) -> Result:
    return skip(check_id, f"not checked: gpurack_expect.{dotted} is not set", measured=measured)


def _per_gpu(
    ctx: Context,
    check_id: str,
    value_of: Callable[[Mapping[str, Any]], Any],
    judge: Callable[[Mapping[str, Any], Any], Result],
    missing: str,
) -> list[Result]:
    """Judge each GPU's value; skip GPUs (or the node, when all) whose value is unknown."""
    gpus, why = ctx.gpus()
    if why:
        return [skip(check_id, why)]
    values = [(g, value_of(g)) for g in gpus]
    if all(v is None for _, v in values):
        return [skip(check_id, missing)]
    return [
        judge(g, v) if v is not None else skip(check_id, missing, component=gpu_component(g))
        for g, v in values
    ]


def _field(*path: str) -> Callable[[Mapping[str, Any]], Any]:
    def read(item: Mapping[str, Any]) -> Any:
        node: Any = item
        for part in path:
            if not isinstance(node, Mapping):
                return None
            node = node.get(part)
        return node

    return read


# --- GPU inventory -------------------------------------------------------------------


def _nvidia_pci_devices(ctx: Context) -> list[str] | None:
    pci = ctx.fact("gpurack_pci")
    if pci is None or not pci.get("available", True):
        return None
    return [
        str(d.get("bus_id"))
        for d in pci.get("devices") or []
        if isinstance(d, Mapping)
        and str(d.get("vendor_id")).lower() == "0x10de"
        and str(d.get("class_id") or "").lower().startswith("0x03")
    ]


def _no_gpu_reason(ctx: Context, expected: int) -> str:
    gpu = ctx.fact("gpurack_gpu") or {}
    source = str(gpu.get("source") or "none")
    smi = "nvidia-smi lists no GPUs" if source.startswith("nvidia-smi") else "nvidia-smi not found"
    on_bus = _nvidia_pci_devices(ctx)
    if on_bus:
        pci = f"{len(on_bus)} NVIDIA devices on the PCI bus: {', '.join(on_bus)}"
    else:
        pci = "no NVIDIA PCI devices"
    return f"no GPUs found ({smi} and {pci}), expected {expected}"


@check("gpu.count")
def check_gpu_count(ctx: Context) -> list[Result]:
    gpu = ctx.fact("gpurack_gpu")
    if gpu is None:
        return [skip("gpu.count", "no GPU facts were gathered (gpurack_gpu missing)")]
    gpus, _ = ctx.gpus()
    measured = len(gpus)
    expected = ctx.want("gpu.count")
    if expected is None:
        return [_not_expected("gpu.count", "gpu.count", measured)]
    lines = [f"{gpu_component(g)} {g.get('name')}" for g in gpus]
    if measured == expected:
        return [
            result(
                "gpu.count",
                "pass",
                measured=measured,
                expected=expected,
                source=ctx.gpu_source(),
                lines=lines,
            )
        ]
    if measured == 0:
        reason = _no_gpu_reason(ctx, expected)
    else:
        reason = f"{measured} GPUs found, expected {expected}"
        seen = {str(g.get("bus_id")) for g in gpus}
        unseen = [b for b in _nvidia_pci_devices(ctx) or [] if b not in seen]
        if unseen:
            reason += f"; on the PCI bus but not listed: {', '.join(unseen)}"
    return [
        result(
            "gpu.count",
            "fail",
            measured=measured,
            expected=expected,
            reason=reason,
            source=ctx.gpu_source(),
            lines=lines,
        )
    ]


def _same_model(name: str, device_id: Any, expected: str) -> bool:
    if name.casefold() == expected.strip().casefold():
        return True
    actual = resolve_model(name, device_id if isinstance(device_id, str) else None)
    if expected.strip().lower() == actual.slug:
        return True
    wanted = find_model(expected)
    return wanted is not None and wanted is actual


@check("gpu.model")
def check_gpu_model(ctx: Context) -> list[Result]:
    expected = ctx.want("gpu.model")
    if expected is None:
        return [_not_expected("gpu.model", "gpu.model")]

    def judge(gpu: Mapping[str, Any], name: Any) -> Result:
        comp = gpu_component(gpu)
        ok = _same_model(str(name), gpu.get("pci_device_id"), expected)
        return result(
            "gpu.model",
            "pass" if ok else "fail",
            component=comp,
            measured=name,
            expected=expected,
            reason=None if ok else f"{comp} is a {name}, expected {expected}",
            source=ctx.gpu_source(),
            lines=[f"{comp} name: {name}"],
        )

    return _per_gpu(ctx, "gpu.model", _field("name"), judge, "GPU product name not reported")


@check("gpu.memory")
def check_gpu_memory(ctx: Context) -> list[Result]:
    expected = ctx.want("gpu.min_memory_mib")
    if expected is None:
        return [_not_expected("gpu.memory", "gpu.min_memory_mib")]

    def judge(gpu: Mapping[str, Any], mib: Any) -> Result:
        comp = gpu_component(gpu)
        ok = mib >= expected
        return result(
            "gpu.memory",
            "pass" if ok else "fail",
            component=comp,
            measured=mib,
            expected=expected,
            unit="MiB",
            reason=None if ok else f"{comp} has {mib} MiB, expected at least {expected} MiB",
            source=ctx.gpu_source(),
            lines=[f"{comp} memory total: {mib} MiB"],
        )

    return _per_gpu(ctx, "gpu.memory", _field("memory_total_mib"), judge, "GPU memory size not reported")


# --- GPU PCIe and NVLink -----------------------------------------------------------------


def _pcie(gpu: Mapping[str, Any]) -> Mapping[str, Any] | None:
    pcie = gpu.get("pcie")
    if not isinstance(pcie, Mapping) or any(
        pcie.get(k) is None for k in ("gen_current", "gen_max", "width_current", "width_max")
    ):
        return None
    return pcie


def _pcie_line(comp: str, p: Mapping[str, Any]) -> str:
    return f"{comp} PCIe gen {p['gen_current']}/{p['gen_max']}, width x{p['width_current']}/x{p['width_max']}"


@check("gpu.pcie.current_vs_max")
def check_pcie_current_vs_max(ctx: Context) -> list[Result]:
    def judge(gpu: Mapping[str, Any], p: Mapping[str, Any]) -> Result:
        comp = gpu_component(gpu)
        measured = {"gen": p["gen_current"], "width": p["width_current"]}
        expected = {"gen": p["gen_max"], "width": p["width_max"]}
        if p["width_current"] < p["width_max"]:
            verdict = "fail"
            reason = f"{comp} PCIe link runs at x{p['width_current']}, its maximum is x{p['width_max']}"
        elif p["gen_current"] < p["gen_max"]:
            verdict = "warn"
            reason = (
                f"{comp} PCIe link runs at Gen{p['gen_current']}, its maximum is Gen{p['gen_max']} "
                "(normal when the GPU is idle)"
            )
        else:
            verdict, reason = "pass", None
        return result(
            "gpu.pcie.current_vs_max",
            verdict,
            component=comp,
            measured=measured,
            expected=expected,
            reason=reason,
            source=ctx.gpu_source(),
            lines=[_pcie_line(comp, p)],
        )

    return _per_gpu(ctx, "gpu.pcie.current_vs_max", _pcie, judge, "PCIe link state not reported")


@check("gpu.pcie.expected")
def check_pcie_expected(ctx: Context) -> list[Result]:
    want = ctx.want("gpu.pcie")
    if not want:
        return [_not_expected("gpu.pcie.expected", "gpu.pcie")]

    def judge(gpu: Mapping[str, Any], p: Mapping[str, Any]) -> Result:
        comp = gpu_component(gpu)
        measured = {"gen": p["gen_max"], "width": p["width_current"]}
        short = []
        if "gen" in want and p["gen_max"] < want["gen"]:
            short.append(f"link capable of Gen{p['gen_max']} only, expected Gen{want['gen']}")
        if "width" in want and p["width_current"] < want["width"]:
            short.append(f"link at x{p['width_current']}, expected x{want['width']}")
        return result(
            "gpu.pcie.expected",
            "fail" if short else "pass",
            component=comp,
            measured=measured,
            expected=dict(want),
            reason=f"{comp}: {'; '.join(short)}" if short else None,
            source=ctx.gpu_source(),
            lines=[_pcie_line(comp, p)],
        )

    return _per_gpu(ctx, "gpu.pcie.expected", _pcie, judge, "PCIe link state not reported")


@check("gpu.nvlink.links")
def check_nvlink_links(ctx: Context) -> list[Result]:
    expected = ctx.want("gpu.nvlinks_per_gpu")

    def links_of(gpu: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
        if gpu.get("nvlink_source") is None:
            return None
        return [link for link in gpu.get("nvlinks") or [] if isinstance(link, Mapping)]

    def judge(gpu: Mapping[str, Any], links: list[Mapping[str, Any]]) -> Result:
        comp = gpu_component(gpu)
        down = [link.get("link") for link in links if not link.get("active")]
        active = len(links) - len(down)
        problems = []
        if down:
            problems.append(f"NVLink {', '.join(map(str, down))} inactive ({active} of {len(links)} active)")
        if expected is not None and active < expected:
            problems.append(f"{active} active NVLinks, expected {expected}")
        lines = [
            f"{comp} link {link.get('link')}: "
            + (f"{link.get('speed_gbps')} GB/s" if link.get("active") else "inactive")
            for link in links
        ]
        return result(
            "gpu.nvlink.links",
            "fail" if problems else "pass",
            component=comp,
            measured={"active": active, "inactive": down},
            expected=expected,
            unit="links",
            reason=f"{comp}: {'; '.join(problems)}" if problems else None,
            source=str(gpu.get("nvlink_source")),
            lines=lines,
        )

    return _per_gpu(
        ctx, "gpu.nvlink.links", links_of, judge, "no NVLink data (nvidia-smi nvlink -s gave none)"
    )


# --- GPU health ----------------------------------------------------------------------------


@check("gpu.ecc.mode")
def check_ecc_mode(ctx: Context) -> list[Result]:
    def judge(gpu: Mapping[str, Any], enabled: Any) -> Result:
        comp = gpu_component(gpu)
        model = resolve_model(gpu.get("name"), gpu.get("pci_device_id"))
        verdict = "pass" if enabled else ("fail" if model.ecc_expected else "warn")
        return result(
            "gpu.ecc.mode",
            verdict,
            component=comp,
            measured=enabled,
            expected=True,
            reason=None if enabled else f"{comp}: ECC is disabled",
            source=ctx.gpu_source(),
            lines=[f"{comp} ECC mode: {'enabled' if enabled else 'disabled'}"],
        )

    return _per_gpu(ctx, "gpu.ecc.mode", _field("ecc_mode"), judge, "ECC mode not reported (not supported)")


def _ecc_counts(gpu: Mapping[str, Any]) -> dict[str, Any] | None:
    ecc = gpu.get("ecc_errors")
    if not isinstance(ecc, Mapping):
        return None
    counts = {"volatile": ecc.get("volatile_uncorrected"), "aggregate": ecc.get("aggregate_uncorrected")}
    return None if all(v is None for v in counts.values()) else counts


@check("gpu.ecc.uncorrected")
def check_ecc_uncorrected(ctx: Context) -> list[Result]:
    def judge(gpu: Mapping[str, Any], counts: dict[str, Any]) -> Result:
        comp = gpu_component(gpu)
        volatile, aggregate = counts["volatile"] or 0, counts["aggregate"] or 0
        if volatile:
            verdict, reason = "fail", f"{comp}: {volatile} uncorrected ECC errors since the last reset"
        elif aggregate:
            verdict, reason = "warn", f"{comp}: {aggregate} uncorrected ECC errors over the GPU's lifetime"
        else:
            verdict, reason = "pass", None
        return result(
            "gpu.ecc.uncorrected",
            verdict,
            component=comp,
            measured=counts,
            expected=0,
            unit="errors",
            reason=reason,
            source=ctx.gpu_source(),
            lines=[f"{comp} uncorrected ECC: volatile {counts['volatile']}, aggregate {counts['aggregate']}"],
        )

    return _per_gpu(ctx, "gpu.ecc.uncorrected", _ecc_counts, judge, "ECC error counts not reported")


def _flag_check(
    ctx: Context, check_id: str, path: tuple[str, str], *, bad: str, missing: str, label: str
) -> list[Result]:
    def judge(gpu: Mapping[str, Any], flag: Any) -> Result:
        comp = gpu_component(gpu)
        return result(
            check_id,
            "fail" if flag else "pass",
            component=comp,
            measured=flag,
            expected=False,
            reason=f"{comp}: {bad}" if flag else None,
            source=ctx.gpu_source(),
            lines=[f"{comp} {label}: {'yes' if flag else 'no'}"],
        )

    return _per_gpu(ctx, check_id, _field(*path), judge, missing)


@check("gpu.remapped_rows.pending")
def check_remapped_rows_pending(ctx: Context) -> list[Result]:
    return _flag_check(
        ctx,
        "gpu.remapped_rows.pending",
        ("remapped_rows", "pending"),
        bad="a row remap is pending a GPU reset",
        missing="row remapping not reported (pre-Ampere GPU)",
        label="remapped rows pending",
    )


@check("gpu.remapped_rows.failure")
def check_remapped_rows_failure(ctx: Context) -> list[Result]:
    return _flag_check(
        ctx,
        "gpu.remapped_rows.failure",
        ("remapped_rows", "failure"),
        bad="row remapping failed: no spare rows left",
        missing="row remapping not reported (pre-Ampere GPU)",
        label="row remapping failure",
    )


@check("gpu.retired_pages.pending")
def check_retired_pages_pending(ctx: Context) -> list[Result]:
    return _flag_check(
        ctx,
        "gpu.retired_pages.pending",
        ("retired_pages", "pending"),
        bad="a page retirement is pending a GPU reset",
        missing="page retirement not reported (Ampere and later remap rows instead)",
        label="retired pages pending",
    )


_BUS = re.compile(
    r"(?:(?P<domain>[0-9a-f]{4,8}):)?(?P<bus>[0-9a-f]{2}:[0-9a-f]{2})(?:\.[0-7])?", re.IGNORECASE
)


def _bus_key(bus_id: Any) -> str | None:
    # dmesg prints "PCI:0000:9b:00" (no function), facts "0000:9b:00.0": compare bus:device.
    match = _BUS.search(str(bus_id or ""))
    return match.group("bus").lower() if match else None


def _gpu_for_bus(gpus: list[Mapping[str, Any]], bus_id: Any) -> str:
    key = _bus_key(bus_id)
    if key is None:
        return "node"
    for gpu in gpus:
        if _bus_key(gpu.get("bus_id")) == key:
            return gpu_component(gpu)
    return f"PCI {bus_id}"


_XID_VERDICT = {"critical": "fail", "warn": "warn", "info": "pass"}


@check("gpu.xid")
def check_xid(ctx: Context) -> list[Result]:
    os_facts = ctx.fact("gpurack_os")
    if os_facts is None or os_facts.get("xid_events") is None:
        return [skip("gpu.xid", "no kernel log facts were gathered (gpurack_os.xid_events missing)")]
    events = [e for e in os_facts["xid_events"] if isinstance(e, Mapping) and isinstance(e.get("xid"), int)]
    if not events:
        return [result("gpu.xid", "pass", measured=[], expected=[], source="dmesg")]
    gpus, _ = ctx.gpus()
    grouped: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for event in events:
        grouped.setdefault((_gpu_for_bus(gpus, event.get("bus_id")), event["xid"]), []).append(event)
    out = []
    for (comp, code), group in grouped.items():
        info = xid_info(code)
        last = group[-1]
        verdict = _XID_VERDICT[info.severity]
        out.append(
            result(
                "gpu.xid",
                verdict,
                component=comp,
                measured={"xid": code, "count": len(group)},
                expected=None,
                reason=f"{comp}: Xid {code} ({info.name}), {len(group)} event(s), last at {last.get('time')}",
                remediation=info.resolution if verdict != "pass" else None,
                source="dmesg",
                lines=[f"[{e.get('time')}] Xid {code}: {e.get('message')}" for e in group[-5:]],
                limit_source=f"NVIDIA Xid catalogue: Xid {code} is {info.severity}",
            )
        )
    return out


@check("gpu.persistence")
def check_persistence(ctx: Context) -> list[Result]:
    def judge(gpu: Mapping[str, Any], on: Any) -> Result:
        comp = gpu_component(gpu)
        return result(
            "gpu.persistence",
            "pass" if on else "warn",
            component=comp,
            measured=on,
            expected=True,
            reason=None if on else f"{comp}: persistence mode is off",
            source=ctx.gpu_source(),
            lines=[f"{comp} persistence mode: {'enabled' if on else 'disabled'}"],
        )

    return _per_gpu(
        ctx, "gpu.persistence", _field("persistence_mode"), judge, "persistence mode not reported"
    )


_RECOVERY = {
    "reset": "drain the node and reset the GPU (nvidia-smi -r -i <index>)",
    "reboot": "drain the node and reboot it",
    "drain": "drain the node, then reset the GPU; replace it if the action returns",
}


@check("gpu.recovery_action")
def check_recovery_action(ctx: Context) -> list[Result]:
    def judge(gpu: Mapping[str, Any], action: Any) -> Result:
        comp = gpu_component(gpu)
        ok = str(action).strip().lower() == "none"
        return result(
            "gpu.recovery_action",
            "pass" if ok else "fail",
            component=comp,
            measured=action,
            expected="None",
            reason=None if ok else f"{comp}: the driver asks for recovery action '{action}'",
            remediation=None if ok else _RECOVERY.get(str(action).strip().lower()),
            source=ctx.gpu_source(),
            lines=[f"{comp} GPU Recovery Action: {action}"],
        )

    return _per_gpu(
        ctx,
        "gpu.recovery_action",
        _field("recovery_action"),
        judge,
        "GPU recovery action not reported (driver older than R550?)",
    )


_SLOWDOWN = re.compile(r"hw_slowdown|hw_thermal|hw_power_brake|sw_thermal")


@check("gpu.clocks_event_reasons")
def check_clocks_event_reasons(ctx: Context) -> list[Result]:
    def judge(gpu: Mapping[str, Any], reasons: Any) -> Result:
        comp = gpu_component(gpu)
        bad = [str(r) for r in reasons if _SLOWDOWN.search(str(r).lower())]
        return result(
            "gpu.clocks_event_reasons",
            "warn" if bad else "pass",
            component=comp,
            measured=list(reasons),
            expected=[],
            reason=f"{comp}: clocks held down by {', '.join(bad)}" if bad else None,
            source=ctx.gpu_source(),
            lines=[f"{comp} active clock event reasons: {', '.join(map(str, reasons))}"],
        )

    return _per_gpu(
        ctx,
        "gpu.clocks_event_reasons",
        _field("clocks_event_reasons"),
        judge,
        "clock event reasons not reported",
    )


# --- software ------------------------------------------------------------------------------


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


@check("driver.version")
def check_driver_version(ctx: Context) -> list[Result]:
    version, branch = ctx.want("driver.version"), ctx.want("driver.branch")
    if version is None and branch is None:
        return [_not_expected("driver.version", "driver")]
    gpu = ctx.fact("gpurack_gpu")
    if gpu is None:
        return [skip("driver.version", "no GPU facts were gathered (gpurack_gpu missing)")]
    measured = gpu.get("driver_version")
    expected = version if version is not None else f"{branch}.*"
    if measured is None:
        ok, why = False, "no NVIDIA driver is loaded"
    elif version is not None:
        ok, why = measured == version, f"driver {measured} is installed, expected {version}"
    else:
        ok, why = str(measured).split(".")[0] == str(branch), f"driver {measured} is not on branch {branch}"
    return [
        result(
            "driver.version",
            "pass" if ok else "fail",
            measured=measured,
            expected=expected,
            reason=None if ok else why,
            source=ctx.gpu_source(),
            lines=[f"Driver Version: {measured}"],
        )
    ]


@check("cuda.version")
def check_cuda_version(ctx: Context) -> list[Result]:
    expected = ctx.want("cuda.version")
    if expected is None:
        return [_not_expected("cuda.version", "cuda.version")]
    gpu = ctx.fact("gpurack_gpu")
    if gpu is None:
        return [skip("cuda.version", "no GPU facts were gathered (gpurack_gpu missing)")]
    measured = gpu.get("cuda_version")
    ok = measured is not None and _version_tuple(str(measured)) >= _version_tuple(expected)
    why = (
        "no NVIDIA driver is loaded"
        if measured is None
        else (f"the driver supports CUDA up to {measured}, expected at least {expected}")
    )
    return [
        result(
            "cuda.version",
            "pass" if ok else "fail",
            measured=measured,
            expected=expected,
            reason=None if ok else why,
            source=ctx.gpu_source(),
            lines=[f"CUDA Version: {measured}"],
        )
    ]


@check("fabricmanager")
def check_fabricmanager(ctx: Context) -> list[Result]:
    gpu = ctx.fact("gpurack_gpu")
    if gpu is None or gpu.get("nvswitch") is None:
        return [skip("fabricmanager", "NVSwitch presence unknown (no gpurack_gpu.nvswitch fact)")]
    if not gpu["nvswitch"]:
        return [skip("fabricmanager", "no NVSwitch: fabric manager is not needed")]
    services = (ctx.fact("gpurack_os") or {}).get("services")
    state = services.get("nvidia-fabricmanager") if isinstance(services, Mapping) else None
    if state is None:
        return [
            skip(
                "fabricmanager",
                "no service facts: gpurack_os.services['nvidia-fabricmanager'] is not gathered",
            )
        ]
    ok = state == "active"
    return [
        result(
            "fabricmanager",
            "pass" if ok else "fail",
            measured=state,
            expected="active",
            reason=None if ok else f"nvidia-fabricmanager is {state} on an NVSwitch system",
            source="systemctl",
            lines=[f"nvidia-fabricmanager: {state}"],
        )
    ]


# --- NICs and topology ---------------------------------------------------------------------


def _ports(ctx: Context) -> tuple[list[Mapping[str, Any]], str | None]:
    nic = ctx.fact("gpurack_nic")
    if nic is None:
        return [], "no NIC facts were gathered (gpurack_nic missing)"
    if not nic.get("available", True):
        return [], f"NIC facts unavailable: {nic.get('reason') or 'no reason given'}"
    return [p for p in nic.get("rdma") or [] if isinstance(p, Mapping)], None


def _compute_ports(ctx: Context, ports: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    layer = ctx.want("rdma.link_layer")
    return [p for p in ports if layer is None or p.get("link_layer") == layer]


def _numa(value: Any) -> int | None:
    # sysfs numa_node is -1 on machines without NUMA information.
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@check("gpu.nic.numa_affinity")
def check_gpu_nic_numa(ctx: Context) -> list[Result]:
    ports, why = _ports(ctx)
    if why or not ports:
        return [skip("gpu.nic.numa_affinity", why or "no RDMA ports")]
    placed = [(port_component(p), _numa(p.get("numa_node"))) for p in _compute_ports(ctx, ports)]
    placed = [(c, n) for c, n in placed if n is not None]
    if not placed:
        return [skip("gpu.nic.numa_affinity", "NUMA node of the RDMA ports unknown")]

    def judge(gpu: Mapping[str, Any], node: Any) -> Result:
        comp = gpu_component(gpu)
        local = [c for c, n in placed if n == node]
        return result(
            "gpu.nic.numa_affinity",
            "pass" if local else "warn",
            component=comp,
            measured={"gpu_numa_node": node, "local_ports": local},
            expected="an RDMA port on the same node",
            reason=None if local else f"{comp} is on NUMA node {node}, no RDMA port is",
            source="nvidia-smi topo -m, sysfs",
            lines=[f"{comp} NUMA {node}"] + [f"{c} NUMA {n}" for c, n in placed],
        )

    return _per_gpu(
        ctx,
        "gpu.nic.numa_affinity",
        lambda g: _numa(g.get("numa_node")),
        judge,
        "NUMA node of the GPU unknown",
    )


def _port_line(p: Mapping[str, Any]) -> str:
    return (
        f"{port_component(p)}: {p.get('state')} {p.get('phys_state')} {p.get('rate_gbps')} Gb/s "
        f"{p.get('link_layer')}"
    )


@check("rdma.ports.count")
def check_rdma_count(ctx: Context) -> list[Result]:
    ports, why = _ports(ctx)
    if why:
        return [skip("rdma.ports.count", why)]
    expected = ctx.want("rdma.ports")
    if expected is None:
        return [_not_expected("rdma.ports.count", "rdma.ports", len(ports))]
    ok = len(ports) >= expected
    return [
        result(
            "rdma.ports.count",
            "pass" if ok else "fail",
            measured=len(ports),
            expected=expected,
            unit="ports",
            reason=None if ok else f"{len(ports)} RDMA ports found, expected {expected}",
            source="sysfs /sys/class/infiniband",
            lines=[_port_line(p) for p in ports],
        )
    ]


def _state(value: Any) -> str:
    return re.sub(r"^\d+:\s*", "", str(value)).strip()


@check("rdma.ports.state")
def check_rdma_state(ctx: Context) -> list[Result]:
    ports, why = _ports(ctx)
    ports = _compute_ports(ctx, ports)
    if why or not ports:
        return [skip("rdma.ports.state", why or "no RDMA ports")]
    out = []
    for p in ports:
        comp = port_component(p)
        state, phys = _state(p.get("state")), _state(p.get("phys_state"))
        ok = state.upper() == "ACTIVE" and (p.get("phys_state") is None or phys.lower() == "linkup")
        out.append(
            result(
                "rdma.ports.state",
                "pass" if ok else "fail",
                component=comp,
                measured={"state": state, "phys_state": phys},
                expected={"state": "ACTIVE", "phys_state": "LinkUp"},
                reason=None if ok else f"{comp} is {state}/{phys}, expected ACTIVE/LinkUp",
                source="sysfs /sys/class/infiniband",
                lines=[_port_line(p)],
            )
        )
    return out


@check("rdma.ports.rate")
def check_rdma_rate(ctx: Context) -> list[Result]:
    ports, why = _ports(ctx)
    if why:
        return [skip("rdma.ports.rate", why)]
    expected = ctx.want("rdma.rate_gbps")
    if expected is None:
        return [_not_expected("rdma.ports.rate", "rdma.rate_gbps")]
    ports = _compute_ports(ctx, ports)
    if not ports:
        return [skip("rdma.ports.rate", "no RDMA ports")]
    out = []
    for p in ports:
        comp, rate = port_component(p), p.get("rate_gbps")
        ok = isinstance(rate, (int, float)) and rate >= expected
        out.append(
            result(
                "rdma.ports.rate",
                "pass" if ok else "fail",
                component=comp,
                measured=rate,
                expected=expected,
                unit="Gb/s",
                reason=None if ok else f"{comp} runs at {rate} Gb/s, expected {expected} Gb/s",
                source="sysfs /sys/class/infiniband",
                lines=[_port_line(p)],
            )
        )
    return out


@check("rdma.ports.link_layer")
def check_rdma_link_layer(ctx: Context) -> list[Result]:
    ports, why = _ports(ctx)
    if why:
        return [skip("rdma.ports.link_layer", why)]
    layer = ctx.want("rdma.link_layer")
    if layer is None:
        return [_not_expected("rdma.ports.link_layer", "rdma.link_layer")]
    counts: dict[str, int] = {}
    for p in ports:
        counts[str(p.get("link_layer"))] = counts.get(str(p.get("link_layer")), 0) + 1
    need = ctx.want("rdma.ports") or 1
    have = counts.get(layer, 0)
    ok = have >= need
    return [
        result(
            "rdma.ports.link_layer",
            "pass" if ok else "fail",
            measured=counts,
            expected={layer: need},
            unit="ports",
            reason=None if ok else f"{have} RDMA ports use {layer}, expected {need}",
            source="sysfs /sys/class/infiniband",
            lines=[_port_line(p) for p in ports],
        )
    ]


# --- host ----------------------------------------------------------------------------------


def _count_check(
    ctx: Context, check_id: str, dotted: str, measured: int, *, unit: str, source: str, lines: list[str]
) -> list[Result]:
    expected = ctx.want(dotted)
    if expected is None:
        return [_not_expected(check_id, dotted, measured)]
    ok = measured == expected
    return [
        result(
            check_id,
            "pass" if ok else "fail",
            measured=measured,
            expected=expected,
            unit=unit,
            reason=None if ok else f"{measured} {unit} found, expected {expected}",
            source=source,
            lines=lines,
        )
    ]


@check("numa.nodes")
def check_numa_nodes(ctx: Context) -> list[Result]:
    numa = ctx.fact("gpurack_numa")
    if numa is None or not numa.get("available", True) or numa.get("count") is None:
        return [skip("numa.nodes", "no NUMA facts were gathered (gpurack_numa missing or unavailable)")]
    lines = [
        f"node{n.get('id')}: cpus {n.get('cpulist')}"
        for n in numa.get("nodes") or []
        if isinstance(n, Mapping)
    ]
    return _count_check(
        ctx,
        "numa.nodes",
        "numa_nodes",
        numa["count"],
        unit="NUMA nodes",
        source="sysfs /sys/devices/system/node",
        lines=lines,
    )


@check("nvme.count")
def check_nvme_count(ctx: Context) -> list[Result]:
    nvme = ctx.fact("gpurack_nvme")
    if nvme is None or not nvme.get("available", True):
        why = "missing" if nvme is None else (nvme.get("reason") or "unavailable")
        return [skip("nvme.count", f"no NVMe facts ({why})")]
    disks = [d for d in nvme.get("disks") or [] if isinstance(d, Mapping) and not d.get("is_os_disk")]
    lines = [f"{d.get('name')}: {d.get('model')} {d.get('serial')}" for d in disks]
    return _count_check(
        ctx,
        "nvme.count",
        "nvme.count",
        len(disks),
        unit="NVMe data disks",
        source=str(nvme.get("source") or "nvme facts"),
        lines=lines,
    )


@check("os.cgroup_v2")
def check_cgroup(ctx: Context) -> list[Result]:
    os_facts = ctx.fact("gpurack_os")
    version = os_facts.get("cgroup_version") if os_facts else None
    if version is None:
        return [skip("os.cgroup_v2", "cgroup version unknown (gpurack_os.cgroup_version missing)")]
    want = ctx.want("os.cgroup_version")
    expected = want if want is not None else 2
    ok = version == expected
    verdict = "pass" if ok else ("fail" if want is not None else "warn")
    return [
        result(
            "os.cgroup_v2",
            verdict,
            measured=version,
            expected=expected,
            reason=None if ok else f"the host runs cgroup v{version}, expected v{expected}",
            source="sysfs /sys/fs/cgroup",
            lines=[f"cgroup version: {version}"],
            limit_source="gpurack_expect.os.cgroup_version" if want is not None else None,
        )
    ]


@check("os.nouveau_absent")
def check_nouveau(ctx: Context) -> list[Result]:
    modules = (ctx.fact("gpurack_os") or {}).get("modules")
    loaded = modules.get("nouveau") if isinstance(modules, Mapping) else None
    if loaded is None:
        return [skip("os.nouveau_absent", "loaded kernel modules unknown (gpurack_os.modules missing)")]
    return [
        result(
            "os.nouveau_absent",
            "fail" if loaded else "pass",
            measured=loaded,
            expected=False,
            reason="the nouveau module is loaded" if loaded else None,
            source="lsmod, /sys/module",
            lines=[f"nouveau loaded: {loaded}"],
        )
    ]


@check("pci.downgraded")
def check_pci_downgraded(ctx: Context) -> list[Result]:
    pci = ctx.fact("gpurack_pci")
    if pci is None or not pci.get("available", True):
        return [skip("pci.downgraded", "no PCI facts were gathered (gpurack_pci missing or unavailable)")]
    downgraded = [str(b) for b in pci.get("downgraded") or []]
    if not downgraded:
        return [result("pci.downgraded", "pass", measured=[], expected=[], source=str(pci.get("source")))]
    devices = {str(d.get("bus_id")): d for d in pci.get("devices") or [] if isinstance(d, Mapping)}
    out = []
    for bus in downgraded:
        dev = devices.get(bus, {})
        raw_link = dev.get("link")
        link: Mapping[str, Any] = raw_link if isinstance(raw_link, Mapping) else {}
        measured = {"speed_gts": link.get("sta_speed_gts"), "width": link.get("sta_width")}
        expected = {"speed_gts": link.get("cap_speed_gts"), "width": link.get("cap_width")}
        out.append(
            result(
                "pci.downgraded",
                "warn",
                component=f"PCI {bus}",
                measured=measured,
                expected=expected,
                reason=f"PCI {bus} ({dev.get('description')}) links at {measured['speed_gts']} GT/s "
                f"x{measured['width']}, capable of {expected['speed_gts']} GT/s x{expected['width']}",
                source=str(pci.get("source")),
                lines=[f"{bus} {dev.get('description')}"],
            )
        )
    return out


# --- running -------------------------------------------------------------------------------


def _guarded(check_id: str, fn: CheckFn, ctx: Context) -> list[Result]:
    try:
        return fn(ctx)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # Malformed facts must not hide every other result: report this check as not assessed.
        return [skip(check_id, f"could not evaluate the facts: {type(exc).__name__}: {exc}")]


def run_checks(
    facts: Facts, expect: Mapping[str, Any] | None = None, tier: str = "quick"
) -> list[dict[str, Any]]:
    """Run every check of `tier` (and lower tiers) over the facts; one list of results.

    Raises:
        ExpectError: `expect` does not follow the expectations schema.
        ValueError: `tier` is not quick, standard or burn-in.
    """
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {', '.join(TIERS)}, got {tier!r}")
    expect = expect or {}
    if errors := validate_expect(expect):
        raise ExpectError(errors)
    ctx = Context(facts if isinstance(facts, Mapping) else {}, expect)
    results: list[Result] = []
    for entry in checks_for_tier(tier):
        fn = REGISTRY.get(entry.id)
        if fn is None:
            results.append(skip(entry.id, f"a {entry.tier}-tier measurement, not derived from facts"))
            continue
        results.extend(_guarded(entry.id, fn, ctx))
    return results


def summarise(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per verdict and the node verdict: fail when any result fails, else pass."""
    counts: dict[str, Any] = dict.fromkeys(VERDICTS, 0)
    for item in results:
        verdict = item.get("verdict")
        if verdict in counts:
            counts[verdict] += 1
    counts["verdict"] = "fail" if counts["fail"] else "pass"
    return counts
