"""playbooks/platform.yml on the example inventory, without a cluster.

The first play reads the site and builds every object; an overcommitted quota fails there,
before any role applies anything. The roles' API calls are covered by the lab's end-to-end
test; here they run in check mode against no cluster.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "inventory" / "example"
BIN = Path(sys.executable).parent


def _playbook(*args: str, extra: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
    extra = {"gpurack_kubeconfig": "/nonexistent/kubeconfig", **(extra or {})}
    cmd = [str(BIN / "ansible-playbook"), "-i", str(EXAMPLE), "-e", json.dumps(extra), *args]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("playbook", ["playbooks/platform.yml", "playbooks/site.yml"])
def test_platform_playbook_passes_syntax_check(playbook: str) -> None:
    proc = _playbook("--syntax-check", playbook)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_site_imports_platform_between_join_and_validate() -> None:
    text = (REPO / "playbooks" / "site.yml").read_text()
    assert text.index("join.yml") < text.index("platform.yml") < text.index("validate.yml")


def test_an_overcommitted_quota_fails_before_any_role_applies() -> None:
    teams = [
        {"name": "research", "groups": ["r"], "quota": {"h100-train-a": {"gpus": 30}}},
        {"name": "inference", "groups": ["i"], "quota": {"h100-train-a": {"gpus": 8}}},
    ]
    proc = _playbook("playbooks/platform.yml", extra={"gpurack_teams": teams})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "teams inference (8), research (30) ask 38 GPUs" in out
    assert "of pool h100-train-a, which has 32 (expect)" in out
    assert "Apply the tenancy objects" not in out
    assert "Traceback" not in out


def test_check_mode_builds_the_objects_and_changes_nothing() -> None:
    # The example hosts do not exist: the controller's roles only (the hosts' plays run in the lab).
    proc = _playbook("--check", "--diff", "--tags", "tenancy,kueue", "playbooks/platform.yml")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Apply the tenancy objects" in out
    assert "Apply the Kueue objects" in out
    assert "changed=0" in out


@pytest.mark.parametrize("timeout", [0, 3601])
def test_kueue_refuses_a_webhook_timeout_outside_1_to_3600(timeout: int) -> None:
    proc = _playbook("--tags", "kueue", "playbooks/platform.yml", extra={"kueue_webhook_timeout": timeout})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"kueue_webhook_timeout must be 1 to 3600 seconds, got {timeout}" in out
    assert "Build the Kueue objects from the site" not in out


def test_the_playbook_and_render_derive_one_prometheus_url() -> None:
    """prometheus-adapter's Prometheus: platform.yml and `gpurack platform render` each derive the
    default (the first control plane's address, port 9090) and must agree."""
    from gpurack import platform

    proc = _playbook("--tags", "always", "-v", "playbooks/platform.yml")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    urls = set(re.findall(r'prometheus_url"?: "?(http[^"\s]+)', proc.stdout))
    assert urls == {platform.load_site(EXAMPLE).prometheus_url} == {"http://192.0.2.11:9090/"}
