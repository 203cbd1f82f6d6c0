# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The one result model: a check result, its verdict vocabulary and the verdict rule.

Every producer (the quick tier on a node, the measured tiers, acceptance) and every consumer
(the preflight role, the inventory DB, the terminal, reports, metrics) uses these. The rule,
also in docs/checks.md:

- a node's verdict is `fail` when any of its results fails, else `warn` when any warns, else
  `pass` when any passed; `skip` only when nothing could be assessed (every result skipped,
  or there were none);
- a run's verdict is the same rule over its nodes' verdicts.

A `warn` never counts as a pass: it is shown as a warning everywhere, and it fails a run only
where the caller asks for that (`preflight_fail_on_warn`, `--fail-on-warn`). One skip policy
(`not_assessed`) says when a node was not assessed: no result about the node itself (results
about the inputs, such as an empty expectations file, aside) has a verdict other than skip.
Such a node never passes: `gpurack validate` exits 2 (`could not assess HOST: nothing was
assessed, ...`), the preflight role fails it with the message `preflight SKIP on <host>:
nothing was assessed, ...` and each distinct skip reason (e.g. `GPU facts unavailable: ...`),
and the validation role does not admit it.

Stdlib only: this file ships to every node with the modules that import it.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.metrics import (
    CHECK_VERDICT,
    NODE_VALIDATED,
    TEXTFILE_NAME,
    render_textfile,
    same_values,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    FINDINGS,
    INPUT_COMPONENT,
    VERDICT_ORDER,
    VERDICTS,
    CheckResult,
    Evidence,
    Verdict,
    is_finding,
    node_verdict,
    not_assessed,
    overall,
    rank,
    run_verdict,
    summarise,
)

__all__ = [
    "CHECK_VERDICT",
    "FINDINGS",
    "INPUT_COMPONENT",
    "NODE_VALIDATED",
    "TEXTFILE_NAME",
    "VERDICTS",
    "VERDICT_ORDER",
    "CheckResult",
    "Evidence",
    "Verdict",
    "is_finding",
    "node_verdict",
    "not_assessed",
    "overall",
    "rank",
    "render_textfile",
    "run_verdict",
    "same_values",
    "summarise",
]
