#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: converge_stamp
short_description: Say whether a role's converged state still holds on a host, or record it
description:
  - A role records, when it has run to its end, the digest of its inputs and the live state of
    what it manages (O(probe)). On the next run it checks first; when the inputs and every probed
    item are unchanged the role's tasks are skipped, so a converged re-run is cheap and still says
    C(changed=0) truthfully. Any difference (a file edited by hand, a package upgraded, a mount
    gone, a service stopped, a new role version or variable) makes the stamp not hold, and the
    whole role runs.
  - Stamps live in O(stamp_dir), one JSON file per O(name), written atomically.
  - Recording a stamp is bookkeeping, not a change to the host, so it never reports C(changed).
version_added: "0.4.0"
author: gpurack maintainers (@gpurack)
options:
  name:
    description: The stamp's name, usually the role's (C([a-z0-9_]+)).
    type: str
    required: true
  role:
    description:
      - The role whose convergence the stamp says, for the fact C(gpurack_converged_<role>)
        (RETURN); default O(name). A role with several stamps (container_runtime's with and
        without the NVIDIA runtime) names itself here.
    type: str
  state:
    description: C(checked) reads the stamp and the live state; C(recorded) writes them.
    type: str
    choices: [checked, recorded]
    default: checked
  inputs:
    description:
      - What the role decides on (its variables, its own digest, the facts it reads).
      - Only the digest is kept.
    type: raw
    default: {}
  probe:
    description:
      - What the role manages. C(paths) are files, folders or links (owner, mode, content; C(/proc)
        and C(/sys) values too); C(mounts) are mount points; C(packages) are dpkg or rpm package
        names; C(services) are systemd units.
    type: dict
    default: {}
  facts:
    description:
      - Facts the role sets, kept with the stamp (O(state=recorded)).
      - They are returned as facts while the stamp holds.
    type: dict
    default: {}
  stamp_dir:
    description: Where the stamps are kept.
    type: path
    default: /var/lib/gpurack/converged
  survey:
    description:
      - With O(state=checked), also read the other stamps in O(stamp_dir) of these roles (a stamp named
        after the role, or starting with its name and C(_)) and say whether each still holds on its own
        recorded inputs and probe (RV(survey)), querying the package manager and systemd once for all.
      - The action plugin passes the play's roles, so that a later check in the play needs no module
        run while nothing has touched the host.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: C(checked) only reads; C(recorded) writes nothing in check mode.
  diff_mode:
    support: none
    details: The stamp is bookkeeping; its reasons are returned instead.
  platform:
    platforms: linux
"""

EXAMPLES = r"""
- name: Look whether the host still holds what this role made
  gpurack.bootstrap.converge_stamp:
    name: os_tuning
    inputs: "{{ __os_tuning_converge_inputs }}"
    probe:
      paths: [/etc/sysctl.d/90-gpurack.conf, /proc/sys/vm/swappiness]
      packages: [irqbalance]
      services: [irqbalance]
  register: __os_tuning_converged
"""

RETURN = r"""
holds:
  description: The inputs and every probed item are as recorded (always false for O(state=recorded)).
  returned: always
  type: bool
reasons:
  description: Why the stamp does not hold, one line each ([] when it holds or was just recorded).
  returned: always
  type: list
  elements: str
  sample: ["/etc/sysctl.d/90-gpurack.conf: file 0644 0:0 1f2e... -> absent"]
survey:
  description:
    - With O(survey), each other stamp of those roles by name, with its recorded inputs digest and probe,
      whether its live state is still as recorded, and the facts recorded with it.
    - A stamp whose probe cannot be read is left out.
  returned: when O(survey) names a role and O(state=checked)
  type: dict
  sample: {nvme_scratch: {inputs: 9f2c..., probe: {mounts: [/scratch]}, holds: true, facts: {}}}
ansible_facts:
  description:
    - The facts recorded with the stamp, while it holds.
    - Always C(gpurack_converged_<role>), whether the role may skip its tasks in this run (C(true) only
      when the stamp holds; C(false) once it is recorded, since the role has just run them). The
      validation role reads it to reuse preflight's reading of a host no role changed (docs/performance.md).
  returned: always
  type: dict
  sample: {gpurack_converged_os_tuning: true, os_tuning_reboot_pending: false}
"""

import glob
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.converge import (
    Probe,
    Stamp,
    differences,
    digest,
    fstab_states,
    load,
    mount_states,
    package_states,
    path_state,
    save,
    service_states,
)

_NAME = re.compile(r"^[a-z0-9_]+$")
_DPKG_FORMAT = "${Package}\t${Version}\t${db:Status-Abbrev}\n"
_RPM_FORMAT = "%{NAME}\t%{VERSION}-%{RELEASE}\tii\n"


def _command_output(module: AnsibleModule, argv: list[str]) -> str:
    """stdout of a read-only query; a missing item makes these exit non-zero, which is fine."""
    _rc, out, _err = module.run_command(argv, environ_update={"LC_ALL": "C"})
    return str(out)


def _packages(module: AnsibleModule, names: tuple[str, ...]) -> dict[str, str]:
    if not names:
        return {}
    if shutil.which("dpkg-query"):
        output = _command_output(module, ["dpkg-query", "-W", "-f", _DPKG_FORMAT, *names])
    elif shutil.which("rpm"):
        output = _command_output(module, ["rpm", "-q", "--qf", _RPM_FORMAT, *names])
    else:
        output = ""
    return package_states(output, names)


def _services(module: AnsibleModule, names: tuple[str, ...]) -> dict[str, str]:
    if not names or not shutil.which("systemctl"):
        return dict.fromkeys(names, "no systemd")
    argv = ["systemctl", "show", "--property=Id,UnitFileState,ActiveState", "--", *names]
    return service_states(_command_output(module, argv), names)


def _paths(patterns: tuple[str, ...]) -> dict[str, str]:
    state: dict[str, str] = {}
    for pattern in patterns:
        if not glob.has_magic(pattern):
            state[f"path {pattern}"] = path_state(pattern)
            continue
        matches = sorted(glob.glob(pattern))
        state |= {f"path {path}": path_state(path) for path in matches} or {f"path {pattern}": "no match"}
    return state


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _union(groups: list[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(sorted({item for group in groups for item in group}))


def live_states(module: AnsibleModule, probes: dict[str, Probe]) -> dict[str, dict[str, str]]:
    """Every probed item's state for each probe, keyed by kind and name; one package query and
    one systemd query serve all of them."""
    packages = _packages(module, _union([probe.packages for probe in probes.values()]))
    services = _services(module, _union([probe.services for probe in probes.values()]))
    fstab = _read("/etc/fstab") if any(probe.fstab for probe in probes.values()) else ""
    mountinfo = _read("/proc/self/mountinfo") if any(probe.mounts for probe in probes.values()) else ""
    states: dict[str, dict[str, str]] = {}
    for name, probe in probes.items():
        state = _paths(probe.paths)
        state |= {f"fstab {kind}": value for kind, value in fstab_states(fstab, probe.fstab).items()}
        state |= {f"mount {point}": value for point, value in mount_states(mountinfo, probe.mounts).items()}
        state |= {f"package {name}": packages[name] for name in probe.packages}
        state |= {f"service {name}": services[name] for name in probe.services}
        states[name] = state
    return states


def _recorded_stamps(stamp_dir: Path, roles: list[str], own: str) -> dict[str, tuple[Stamp, Probe]]:
    """The roles' other readable stamps of the current format in the folder, with their probes."""
    found: dict[str, tuple[Stamp, Probe]] = {}
    for path in sorted(stamp_dir.glob("*.json")):
        name = path.stem
        if (
            name == own
            or not _NAME.match(name)
            or not any(name == r or name.startswith(f"{r}_") for r in roles)
        ):
            continue
        stamp = load(path)
        try:
            found |= {name: (stamp, Probe.from_mapping(stamp.probe))} if stamp else {}
        except (AttributeError, TypeError, ValueError):
            continue  # not a probe this version reads: that role's own check runs the module
    return found


def _survey(module: AnsibleModule, recorded: dict[str, tuple[Stamp, Probe]]) -> dict[str, Any]:
    """Each stamp's recorded digest, probe and facts, and whether its live state still holds;
    one that cannot be read is left out, so its role's own check reads it."""
    try:
        states = live_states(module, {name: probe for name, (_stamp, probe) in recorded.items()})
    except (OSError, TypeError, ValueError):
        return {}
    return {
        name: {
            "inputs": stamp.inputs,
            "probe": dict(stamp.probe),
            "holds": not differences(stamp, stamp.inputs, states[name]),
            "facts": dict(stamp.facts),
        }
        for name, (stamp, _probe) in recorded.items()
    }


def _parsed(module: AnsibleModule) -> tuple[dict[str, Any], Probe]:
    params: dict[str, Any] = module.params
    for option in ("name", "role"):
        if params[option] is not None and not _NAME.match(params[option]):
            module.fail_json(msg=f"{option} must match [a-z0-9_]+, got {params[option]!r}")
    try:
        return params, Probe.from_mapping(params["probe"])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
        raise  # fail_json exits; this line is for the type checker


def _checked(recorded: Stamp | None, inputs: str, probe: Probe, state: dict[str, str]) -> list[str]:
    """Why the stamp does not hold; a changed probe is a reason of its own."""
    reasons = differences(recorded, inputs, state)
    if recorded is not None and recorded.probe != probe.to_mapping():
        reasons = reasons or ["the role's probe changed"]
    return reasons


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "role": {"type": "str"},
            "state": {"type": "str", "choices": ["checked", "recorded"], "default": "checked"},
            "inputs": {"type": "raw", "default": {}},
            "probe": {"type": "dict", "default": {}},
            "facts": {"type": "dict", "default": {}},
            "stamp_dir": {"type": "path", "default": "/var/lib/gpurack/converged"},
            "survey": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    params, probe = _parsed(module)
    stamp_dir, name, inputs = Path(params["stamp_dir"]), params["name"], digest(params["inputs"])
    try:
        state = live_states(module, {name: probe})[name]
    except OSError as exc:
        module.fail_json(msg=f"could not read the live state: {exc}")
    # Whether the role may skip its tasks in this run, for the validation role (RETURN).
    converged = f"gpurack_converged_{params['role'] or name}"
    path, stamp = stamp_dir / f"{name}.json", os.fspath(stamp_dir / f"{name}.json")
    if params["state"] == "recorded":
        if not module.check_mode:
            save(path, Stamp(inputs=inputs, state=state, facts=params["facts"], probe=probe.to_mapping()))
        just_ran = {converged: False}  # the role has just run its tasks
        module.exit_json(changed=False, holds=False, reasons=[], stamp=stamp, ansible_facts=just_ran)
    recorded = load(path)
    reasons = _checked(recorded, inputs, probe, state)
    holds = recorded is not None and not reasons
    facts = {**recorded.facts, converged: True} if recorded is not None and holds else {converged: False}
    roles = params["survey"]
    extra = {"survey": _survey(module, _recorded_stamps(stamp_dir, roles, name))} if roles else {}
    module.exit_json(changed=False, holds=holds, reasons=reasons, stamp=stamp, ansible_facts=facts, **extra)


if __name__ == "__main__":
    main()
