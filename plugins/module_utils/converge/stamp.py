# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The converge stamp: the digest of a role's inputs, what it probes and the live state it left,
recorded when the role ends. It holds while all are unchanged; otherwise `differences` says what
changed. The probe is kept so that one survey of a host can re-read every stamp's live state at
once (plugins/action/converge_stamp.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A stamp written by another format never holds: the role runs and writes a new one.
# 2: the probe is kept with the stamp.
STAMP_FORMAT = 2


def digest(data: Any) -> str:
    """A stable digest of JSON-like data (keys sorted; anything else as its string)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Stamp:
    """A role's inputs digest, the live state it left (item -> state), the facts it set and what it
    probes (Probe.to_mapping)."""

    inputs: str
    state: Mapping[str, str]
    facts: Mapping[str, Any] = field(default_factory=dict)
    probe: Mapping[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> str:
        document = {
            "format": STAMP_FORMAT,
            "inputs": self.inputs,
            "state": dict(self.state),
            "facts": dict(self.facts),
            "probe": dict(self.probe),
        }
        return json.dumps(document, sort_keys=True, indent=1)


def load(path: Path) -> Stamp | None:
    """The stamp at `path`; None when there is none or it cannot be read as one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("format") != STAMP_FORMAT:
        return None
    state, facts, probe = document.get("state"), document.get("facts"), document.get("probe")
    if not isinstance(state, dict) or not isinstance(facts, dict) or not isinstance(probe, dict):
        return None
    return Stamp(inputs=str(document.get("inputs")), state=state, facts=facts, probe=probe)


def save(path: Path, stamp: Stamp) -> None:
    """Write the stamp whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(stamp.to_json())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def differences(recorded: Stamp | None, inputs: str, state: Mapping[str, str]) -> list[str]:
    """Why the recorded stamp no longer holds, one line per reason; [] when it holds."""
    if recorded is None:
        return ["no stamp recorded yet"]
    reasons = ["the role or its inputs changed"] if recorded.inputs != inputs else []
    for item in sorted(set(state) | set(recorded.state)):
        before, now = recorded.state.get(item), state.get(item)
        if before != now:
            reasons.append(f"{item}: {before or 'not probed'} -> {now or 'not probed'}")
    return reasons
