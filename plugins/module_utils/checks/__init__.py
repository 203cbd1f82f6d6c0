# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Node checks, one module per component; `run_checks` runs a tier's quick checks over facts.
The switch checks (component `switch`) are registered here too, and run by switch_fabric.

Each check's spec sits beside its function (`spec.CheckSpec`, `spec.check`). Importing this
package registers every check, in the order of `COMPONENTS`; the expectations schema
(`SCHEMA`) is built from the keys the specs read. Every check runs: one that cannot read
malformed facts skips with the reason instead of stopping the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import (  # noqa: F401 - registers
    fabric,
    gpu,
    memory,
    os,
    pcie,
    storage,
    switch,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import Context
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import (
    ExpectKey,
    schema_from,
    validate,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    COMPONENTS,
    EXPECT,
    EXPECT_GROUPS,
    EXPECT_ORDER,
    FUNCTIONS,
    OFF_HOST,
    SPECS,
    TIERS,
    CheckFn,
    CheckSpec,
    checks_for_tier,
    result,
    skip,
    spec,
    specs,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.xid import PROVENANCE, XIDS, xid_info
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

__all__ = [
    "COMPONENTS",
    "EXPECT_GROUPS",
    "EXPECT_ORDER",
    "OFF_HOST",
    "PROVENANCE",
    "SCHEMA",
    "SPECS",
    "TIERS",
    "XIDS",
    "CheckSpec",
    "ExpectError",
    "ExpectKey",
    "result",
    "run_checks",
    "skip",
    "spec",
    "specs",
    "validate_expect",
    "xid_info",
]

SCHEMA: dict[str, Any] = schema_from((key for entry in specs() for key in entry.expects), EXPECT_ORDER)


class ExpectError(ValueError):
    """`gpurack_expect` is invalid; `errors` lists every problem with its full path."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("invalid expectations: " + "; ".join(errors))
        self.errors = errors


def validate_expect(expect: object, path: str = EXPECT) -> list[str]:
    """Every problem with an expectations mapping, each prefixed by its full path; [] when valid."""
    if expect is None:
        return []
    return validate(expect, SCHEMA, path)


def _guarded(check_id: str, fn: CheckFn, ctx: Context) -> list[CheckResult]:
    try:
        return fn(ctx)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # Malformed facts must not hide every other result: report this check as not assessed.
        return [skip(check_id, f"could not evaluate the facts: {type(exc).__name__}: {exc}")]


def run_checks(
    facts: Mapping[str, Any],
    expect: Mapping[str, Any] | None = None,
    tier: str = "quick",
    pool: Mapping[str, Any] | None = None,
) -> list[CheckResult]:
    """Run every check of `tier` (and lower tiers) over the facts; one list of results.

    `pool` is the node's `gpurack_pool` (its `sharing` is compared with the GPUs' MIG mode);
    without it the checks that need it skip. Measured checks, which need the machine under
    load (gpurack.gpubench), are skips here.

    Raises:
        ExpectError: `expect` does not follow the expectations schema.
        ValueError: `tier` is not quick, standard or burn-in.
    """
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {', '.join(TIERS)}, got {tier!r}")
    expect = expect or {}
    if errors := validate_expect(expect):
        raise ExpectError(errors)
    facts = facts if isinstance(facts, Mapping) else {}
    ctx = Context(facts, expect, pool if isinstance(pool, Mapping) else {})
    results: list[CheckResult] = []
    for entry in checks_for_tier(tier, on_host=True):
        fn = FUNCTIONS.get(entry.id)
        if fn is None:
            results.append(skip(entry, f"a {entry.tier}-tier measurement, not derived from facts"))
            continue
        results.extend(_guarded(entry.id, fn, ctx))
    return results
