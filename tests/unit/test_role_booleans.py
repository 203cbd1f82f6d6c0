"""Role booleans given as strings, as `-e name=false` and AWX surveys pass them.

`-e os_tuning_allow_reboot=false` reaches a role as the string "false", which Jinja
treats as true and ansible-core 2.19 refuses as a conditional. So every reference to a
bool option of a role's argument spec goes through `| bool`: the static test finds bare
ones, the playbook test runs os_tuning in check mode on this machine with string values.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("tasks/*.yml", "handlers/*.yml", "vars/*.yml", "templates/**/*.j2")


def _bool_options() -> set[str]:
    names: set[str] = set()
    for spec_file in REPO.glob("roles/*/meta/argument_specs.yml"):
        for entry in yaml.safe_load(spec_file.read_text())["argument_specs"].values():
            names |= {k for k, v in (entry.get("options") or {}).items() if v.get("type") == "bool"}
    return names


def _bare_references() -> list[str]:
    names = sorted(_bool_options(), key=len, reverse=True)
    # A reference not preceded by a word character, dot or quote (text in messages), not a
    # YAML key, and not followed by `| bool` (optionally after `| default(...)`).
    not_bool = r"(?!\s*:)(?!\s*\|\s*bool)(?!\s*\|\s*default\([^)]*\)\s*\|\s*bool)"
    bare = re.compile(r"(?<![\w.'\"])(" + "|".join(names) + r")\b" + not_bool)
    found = []
    for pattern in SOURCES:
        for path in sorted(REPO.glob(f"roles/*/{pattern}")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0] if path.suffix != ".j2" else line
                code = re.sub(r"'[^']*'", "''", code)  # text in string literals is not a reference
                for match in bare.finditer(code):
                    # Plain text in a message (e.g. "Set x to true") is not an expression.
                    if "{{" in code or "{%" in code or re.match(r"\s*(when:|-|that:)", code):
                        found.append(f"{path.relative_to(REPO)}:{number}: {match.group(1)}")
    return found


def test_the_scan_sees_the_bool_options() -> None:
    options = _bool_options()
    assert {"os_tuning_allow_reboot", "nvme_scratch_wipe", "nvidia_driver_allow_reboot"} <= options


def test_every_bool_option_is_read_through_the_bool_filter() -> None:
    assert _bare_references() == []


PLAYBOOK = """\
- name: os_tuning
  hosts: all
  gather_facts: true
  roles:
    - role: gpurack.bootstrap.os_tuning
"""


def test_os_tuning_takes_string_booleans_from_the_command_line(tmp_path: Path) -> None:
    playbook = tmp_path / "os_tuning.yml"
    playbook.write_text(PLAYBOOK)
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-c", "local", "-i", "localhost,"]
    cmd += ["--check", "-e", f"ansible_python_interpreter={sys.executable}"]
    for item in (
        "os_tuning_irqbalance_enabled=false",
        "os_tuning_allow_reboot=false",
        "os_tuning_swap_manage=no",
    ):
        cmd += ["-e", item]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.builtin.json"
    proc = subprocess.run(
        [*cmd, str(playbook)], cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    tasks = {
        task["task"]["name"].removeprefix("gpurack.bootstrap.os_tuning : "): task["hosts"]["localhost"]
        for play in json.loads(proc.stdout)["plays"]
        for task in play["tasks"]
        if "localhost" in task["hosts"]
    }
    # "false" and "no" switched the parts off: their include tasks were skipped.
    assert tasks["Run irqbalance"]["skipped"] is True
    assert tasks["Turn swap off"]["skipped"] is True
