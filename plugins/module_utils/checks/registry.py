# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The one check spec type, the registry, the `check` decorator and the result constructor.

A check is declared once, beside its function, in the module of its component (gpu.py,
pcie.py, ...): id, title, tier, what it measures, its limit and where that comes from, the
remediation, and the expectation keys it reads. Measured checks (standard, burn-in) use the
same type; their specs sit with their component too, their measuring functions in gpubench.
The expectations schema, the preflight argument spec and docs/checks.md are derived from
the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import ExpectKey
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_type import GpuModel
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    CheckResult,
    Evidence,
    Verdict,
)

Tier = Literal["quick", "standard", "burn-in"]
TIERS: tuple[Tier, ...] = ("quick", "standard", "burn-in")

# The component modules of this package, in the order their checks run and are documented.
COMPONENTS: tuple[str, ...] = ("gpu", "pcie", "memory", "fabric", "os", "storage", "switch")
# Components whose checks judge what is read off the host (the switches over SSH): documented
# and listed with the others, run by switch_fabric, never by run_checks over a host's facts.
OFF_HOST: frozenset[str] = frozenset({"switch"})

EXPECT = "gpurack_expect"
# Below this share of its limit a measured check fails (each sets its own pass share).
WARN_FLOOR = 0.60
MODEL_TABLE = "GPU model table (docs/labels.md), from the model's datasheet; thresholds below"


@dataclass(frozen=True)
class CheckSpec:
    """One check: id, title, tier, what it measures, its limit and the limit's source.

    `expects` are the `gpurack_expect` keys the check reads (the schema is built from them).
    Measured checks also carry their threshold: a measurement of at least `pass_ratio` of its
    limit passes, at least `warn_ratio` warns, less fails; `threshold_source` says why. Where
    the limit is a GPU model-table field, `model_field` names it (e.g. "hbm_tbps").
    `component` is the module the spec is declared in (gpu, pcie, ...), set on registration.
    """

    id: str
    title: str
    tier: Tier
    measures: str
    limit: str
    limit_source: str
    remediation: str
    expects: tuple[ExpectKey, ...] = ()
    model_field: str | None = None
    pass_ratio: float | None = None
    warn_ratio: float | None = None
    threshold_source: str | None = None
    component: str = ""


CheckFn = Callable[[Any], list[CheckResult]]

SPECS: dict[str, CheckSpec] = {}
FUNCTIONS: dict[str, CheckFn] = {}


def _component_of(module: str) -> str:
    """The module or package directly below checks/ (checks.gpu.health -> gpu)."""
    return module.split(".checks.", 1)[-1].split(".", 1)[0]


def register(entry: CheckSpec, module: str) -> CheckSpec:
    """Add a spec to the registry under its component (the declaring module's name).

    Raises:
        ValueError: the id is registered already.
    """
    if entry.id in SPECS:
        raise ValueError(f"check {entry.id} is declared twice")
    if entry.tier not in TIERS:
        raise ValueError(f"check {entry.id}: tier must be one of {', '.join(TIERS)}")
    named = CheckSpec(**{**entry.__dict__, "component": _component_of(module)})
    SPECS[entry.id] = named
    return named


def check(entry: CheckSpec) -> Callable[[CheckFn], CheckFn]:
    """Register a quick-tier check function with its spec (declared right above it)."""

    def decorate(fn: CheckFn) -> CheckFn:
        register(entry, fn.__module__)
        FUNCTIONS[entry.id] = fn
        return fn

    return decorate


def measured(
    check_id: str,
    title: str,
    tier: Tier,
    measures: str,
    *,
    share_of: str,
    remediation: str,
    model_field: str | None,
    ratios: tuple[float, float],
    threshold_source: str,
    module: str,
    limit_source: str = MODEL_TABLE,
) -> CheckSpec:
    """Register a measured check whose limit text is written from its own pass/warn ratios."""
    pass_ratio, warn_ratio = ratios
    return register(
        CheckSpec(
            check_id,
            title,
            tier,
            measures,
            f"at least {pass_ratio:.0%} of {share_of}; warn from {warn_ratio:.0%}",
            limit_source,
            remediation,
            model_field=model_field,
            pass_ratio=pass_ratio,
            warn_ratio=warn_ratio,
            threshold_source=threshold_source,
        ),
        module,
    )


def spec(check_id: str) -> CheckSpec:
    """The spec of a check id.

    Raises:
        KeyError: no check has this id.
    """
    return SPECS[check_id]


def _order(entry: CheckSpec) -> int:
    known = entry.component in COMPONENTS
    return COMPONENTS.index(entry.component) if known else len(COMPONENTS)


def specs() -> tuple[CheckSpec, ...]:
    """Every registered spec: by component (COMPONENTS), then in declaration order."""
    return tuple(sorted(SPECS.values(), key=_order))


def checks_for_tier(tier: Tier | str, *, on_host: bool = False) -> tuple[CheckSpec, ...]:
    """Checks a run of `tier` includes: its own and every lower tier's (`on_host`: only those
    judged from a host's facts and measurements, not the OFF_HOST components')."""
    upto = TIERS[: TIERS.index(tier) + 1]
    return tuple(c for c in specs() if c.tier in upto and not (on_host and c.component in OFF_HOST))


def model_expected(entry: CheckSpec, model: GpuModel) -> float | None:
    """What a measurement must reach on `model` to pass (model field x pass ratio), or None."""
    if entry.model_field is None or entry.pass_ratio is None:
        return None
    value = getattr(model, entry.model_field, None)
    if not isinstance(value, (int, float)):
        return None
    return round(value * entry.pass_ratio, 3)


def result(
    entry: CheckSpec | str,
    verdict: Verdict | str,
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
    percent: float | None = None,
    duration_s: float | None = None,
    details: dict[str, Any] | None = None,
    tier: str | None = None,
) -> CheckResult:
    """The one result constructor of every tier.

    Title and tier come from the spec (`tier` overrides it for a check that runs in several
    tiers, as counters.delta does); remediation defaults to the spec's on warn and fail;
    limit_source to the spec's (empty on skip: nothing was compared); evidence keeps 20 lines.
    """
    entry = spec(entry) if isinstance(entry, str) else entry
    verdict = Verdict.parse(verdict)
    if limit_source is None:
        limit_source = "" if verdict is Verdict.SKIP else entry.limit_source
    return CheckResult(
        id=entry.id,
        verdict=verdict,
        title=entry.title,
        tier=tier or entry.tier,
        component=component,
        measured=measured,
        expected=expected,
        unit=unit,
        reason=reason or "",
        remediation=remediation if remediation is not None else entry.remediation,
        evidence=Evidence(source, tuple(lines)),
        limit_source=limit_source,
        percent=percent,
        duration_s=duration_s,
        details=details,
    )


def skip(
    entry: CheckSpec | str,
    reason: str,
    *,
    component: str = "node",
    measured: Any = None,
    unit: str | None = None,
    source: str = "facts",
    lines: Iterable[str] = (),
    duration_s: float | None = None,
    tier: str | None = None,
) -> CheckResult:
    """A result that could not be assessed, with the reason."""
    return result(
        entry,
        Verdict.SKIP,
        component=component,
        reason=reason,
        measured=measured,
        unit=unit,
        source=source,
        lines=lines,
        duration_s=duration_s,
        tier=tier,
    )


# The top-level expectation groups in the order the schema (and its error messages) lists
# them, and the description of each group in the role's argument spec.
EXPECT_ORDER: tuple[str, ...] = ("gpu", "rdma", "numa_nodes", "nvme", "driver", "cuda", "os")
EXPECT_GROUPS: dict[str, str] = {
    "gpu": "Expected GPUs.",
    "gpu.pcie": "Minimum PCIe link of every GPU.",
    "rdma": "Expected RDMA ports (InfiniBand HCAs or RoCE NICs).",
    "nvme": "Expected NVMe data disks.",
    "driver": "Expected NVIDIA driver.",
    "cuda": "Expected CUDA support.",
    "os": "Expected operating system properties.",
}
