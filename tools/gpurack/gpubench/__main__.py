"""`python -m gpurack.gpubench [--json] [--tier standard|burn-in]`: measured checks of this node.

Needs only gpurack, its module_utils (PYTHONPATH=tools:.collections) and PyTorch: no Ansible,
so it runs on a GPU node straight from a checkout.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    CheckResult,
    Verdict,
    node_verdict,
)

from gpurack import local
from gpurack.gpubench import burnin, measure, tier


def _gather() -> dict[str, Any]:
    return dict(gather_all(local.live_source()))


def _progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _line(result: CheckResult) -> str:
    measured = result.measured
    value = f"{measured:g} {result.unit or ''}".strip() if isinstance(measured, float | int) else "-"
    return f"{result.verdict.value:<5} {result.id:<26} {result.component:<24} {value:<16} {result.reason}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run a tier here and print its results; exit 1 when a check fails."""
    parser = argparse.ArgumentParser(prog="python -m gpurack.gpubench", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the results as one JSON document")
    parser.add_argument("--tier", choices=("standard", "burn-in"), default="standard")
    parser.add_argument("--duration", type=float, default=600.0, help="burn-in length, seconds (default 600)")
    parser.add_argument("--sample-interval", type=float, default=10.0, help="burn-in nvidia-smi interval, s")
    args = parser.parse_args(argv)

    t0 = time.monotonic()
    facts_error = None
    try:
        facts: dict[str, Any] = _gather()
    except Exception as exc:  # a node whose tools misbehave is still measured, from CUDA's view alone
        facts, facts_error = {}, f"{type(exc).__name__}: {exc}"
        _progress(f"facts unreadable, measuring what CUDA shows: {facts_error}")
    _progress(f"facts read ({time.monotonic() - t0:.1f} s); running the {args.tier} tier")
    if args.tier == "standard":
        results = tier.run_standard(facts, _gather, _progress)
    else:
        results = burnin.run_burn_in(
            args.duration, facts, _gather, _progress, sample_interval_s=args.sample_interval
        )
    duration = round(time.monotonic() - t0, 1)
    summary = Counter(r.verdict.value for r in results)
    if args.json:
        env: dict[str, Any] | str
        try:
            env = measure.environment()
        except measure.TorchUnavailableError as exc:
            env = str(exc)
        document = {
            "host": socket.gethostname(),
            "tier": args.tier,
            "duration_s": duration,
            "environment": env,
            "facts_error": facts_error,
            "summary": dict(summary),
            "results": [r.to_dict() for r in results],
        }
        print(json.dumps(document, indent=2, default=str))
    else:
        for result in results:
            print(_line(result))
        print(f"{dict(summary)} in {duration:g} s")
    return 1 if node_verdict(results) is Verdict.FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
