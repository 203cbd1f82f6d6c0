"""What the report needs from the check catalogue: the one place it reads the check specs."""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import SPECS


@dataclass(frozen=True, slots=True)
class CheckInfo:
    """A check's title and remedy, and for measured checks their pass/warn shares of the limit.

    `model_limit` says that a result's `expected` is the model-table limit itself (so measured /
    expected is its share), not a pass ratio.
    """

    title: str
    remediation: str
    model_limit: bool = False
    pass_ratio: float | None = None
    warn_ratio: float | None = None


def check_info(check_id: str) -> CheckInfo | None:
    """The catalogue's entry for `check_id`; None for an id it does not know."""
    spec = SPECS.get(check_id)
    if spec is None:
        return None
    return CheckInfo(
        title=spec.title,
        remediation=spec.remediation,
        model_limit=spec.model_field is not None,
        pass_ratio=spec.pass_ratio,
        warn_ratio=spec.warn_ratio,
    )
