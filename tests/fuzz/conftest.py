"""Hypothesis profiles of the parser property tests, and the table of inputs tried per parser.

`ci` (the default, `make unit`): a few hundred inputs per parser, derandomised so a run is
repeatable. `long` (`make fuzz`, HYPOTHESIS_PROFILE=long): a few thousand, a fresh random
seed each run. GPURACK_FUZZ_EXAMPLES overrides the count of either. Nothing is written to
the tree (no example database).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

from .fuzz_inputs import COUNTS

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
_PROFILES = {"ci": (200, True), "long": (2000, False)}


def _register() -> str:
    for name, (examples, derandomize) in _PROFILES.items():
        count = int(os.environ.get("GPURACK_FUZZ_EXAMPLES") or examples)
        settings.register_profile(
            name,
            max_examples=count,
            derandomize=derandomize,
            database=None,
            deadline=None,
            suppress_health_check=_SLOW_OK,
            print_blob=True,
        )
    profile = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    settings.load_profile(profile)
    return profile


PROFILE = _register()


def pytest_sessionfinish(session: pytest.Session) -> None:
    # An xdist worker hands its tally to the controller, which prints the sum.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["fuzz_counts"] = {k: dict(v) for k, v in COUNTS.items()}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    for parser, outcomes in getattr(node, "workeroutput", {}).get("fuzz_counts", {}).items():
        COUNTS.setdefault(parser, Counter()).update(outcomes)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not COUNTS:
        return
    write = terminalreporter.write_line
    width = max(len(p) for p in COUNTS)
    write(f"\nparser inputs tried (hypothesis profile {PROFILE}; parsed = accepted, refused = own error)")
    write(f"{'parser'.ljust(width)}  {'inputs':>7}  {'parsed':>7}  {'refused':>7}")
    total = Counter[str]()
    for parser in sorted(COUNTS):
        c = COUNTS[parser]
        total.update(c)
        write(f"{parser.ljust(width)}  {c.total():>7}  {c['parsed']:>7}  {c['refused']:>7}")
    write(f"{'total'.ljust(width)}  {total.total():>7}  {total['parsed']:>7}  {total['refused']:>7}")
