"""Run a playbook on localhost with the checkout's ansible.cfg and collection, and read its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_local_playbook(
    folder: Path, callbacks: str, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> dict[str, Any]:
    """ansible-playbook of `folder`/play.yml on localhost (local connection, this Python), with only
    `callbacks` enabled besides the JSON stdout callback; its report, once it passed."""
    environment = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_CALLBACKS_ENABLED": callbacks,
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_COLLECTIONS_PATH": str(ROOT / ".collections"),
        **(env or {}),
    }
    proc = subprocess.run(
        [Path(sys.executable).parent / "ansible-playbook", "-i", "localhost,", "-c", "local",
         "-e", f"ansible_python_interpreter={sys.executable}", *args, "play.yml"],
        cwd=folder, env=environment, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    report, _ = json.JSONDecoder().raw_decode(proc.stdout)  # other callbacks may print after it
    result: dict[str, Any] = report
    return result
