# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kernel, distribution, cgroup version, Secure Boot, GPU kernel modules and Xid events.

Pure functions only (stdlib); `gather_os` builds `gpurack_os` as documented in
docs/facts.md.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError, excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import CAPTURE_COMMANDS
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import normalize_bus_id
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView

UNAME_ARGV: tuple[str, ...] = ("uname", "-a")
MOKUTIL_ARGV: tuple[str, ...] = ("mokutil", "--sb-state")
LSMOD_ARGV: tuple[str, ...] = ("lsmod",)
# The kernel log command is the capture's, so live hosts and captures read the same lines.
KERNEL_LOG_ARGV: tuple[str, ...] = next(c.argv for c in CAPTURE_COMMANDS if c.filename == "dmesg-nvrm.txt")
# Live hosts have etc/os-release (or usr/lib/); capture bundles keep it at their root.
OS_RELEASE_PATHS: tuple[str, ...] = ("etc/os-release", "usr/lib/os-release", "os-release")
MODULES: tuple[str, ...] = ("nouveau", "nvidia", "nvidia_peermem")
# The services whose state the checks read; one systemctl call, also kept in captures.
SERVICES_ARGV: tuple[str, ...] = next(
    c.argv for c in CAPTURE_COMMANDS if c.filename == "systemctl-is-active.txt"
)
# What systemctl prints when it cannot ask systemd (not booted with systemd, no D-Bus).
_SYSTEMD_DOWN = ("System has not been booted with systemd", "Failed to connect to bus")
_SERVICE_STATES = frozenset(
    {"active", "inactive", "failed", "activating", "deactivating", "reloading", "unknown"}
)
# cgroup v1 mounts one directory per controller under sys/fs/cgroup.
_V1_CONTROLLERS = frozenset({"cpu", "cpuacct", "cpuset", "memory", "blkio", "devices", "pids", "freezer"})

_SB_STATE = re.compile(r"^SecureBoot (?P<state>enabled|disabled)\s*$", re.MULTILINE)
_XID = re.compile(
    r"NVRM: Xid \((?P<bus>[^)]*)\): (?P<xid>\d+), "
    r"(?:pid=(?P<pid>'<unknown>'|<unknown>|\d+), name=(?P<name>[^,]*), )?"
    r"(?P<message>.*)$"
)
_TIMESTAMP = re.compile(r"^\[\s*(?P<time>[^\]]+?)\s*\]")
_LSMOD_HEADER = re.compile(r"^Module\s+Size\s+Used by\s*$")


def parse_service_states(units: tuple[str, ...], text: str) -> dict[str, str]:
    """Map each unit to its `systemctl is-active` state (one line per unit, in order).

    `unknown` means systemd has no such unit; it is kept, so "not installed" is visible.

    Raises:
        FactsError: fewer lines than units, or a line that is not a unit state.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < len(units):
        raise FactsError(f"systemctl is-active: {len(units)} units asked, {len(lines)} states printed")
    states = dict(zip(units, lines, strict=False))
    for unit, state in states.items():
        if state not in _SERVICE_STATES:
            raise FactsError(f"systemctl is-active: {unit}: unexpected state {excerpt(state)}")
    return states


def _services(source: Source, sources: list[str]) -> dict[str, str] | None:
    """Unit states, or None where systemd is not PID 1 (containers, chroots) or absent."""
    states = source.run(SERVICES_ARGV)
    printed = states.stdout + states.stderr
    # is-active exits non-zero when any unit is not active; the states are still printed.
    if states.missing or not printed.strip() or any(m in printed for m in _SYSTEMD_DOWN):
        return None
    sources.append("systemctl is-active")
    return parse_service_states(SERVICES_ARGV[2:], states.stdout)


def parse_uname(text: str) -> str:
    """Kernel release: the third field of `uname -a`.

    Raises:
        FactsError: fewer than three fields.
    """
    fields = text.split()
    if len(fields) < 3:
        raise FactsError(f"uname -a: expected 'Linux <host> <release> ...', found {excerpt(text.strip())}")
    return fields[2]


def parse_os_release(text: str) -> dict[str, str]:
    """KEY=value pairs of os-release(5), shell quoting removed."""
    values: dict[str, str] = {}
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _equals, raw = line.partition("=")
        try:
            parts = shlex.split(raw)
        except ValueError:  # an unbalanced quote: keep the raw text rather than fail the run
            parts = [raw.strip("\"'")]
        values[key.strip()] = parts[0] if parts else ""
    return values


def parse_sb_state(text: str) -> bool:
    """`SecureBoot enabled` -> True, `SecureBoot disabled` -> False.

    Raises:
        FactsError: neither line is present.
    """
    match = _SB_STATE.search(text)
    if match is None:
        raise FactsError(
            f"mokutil --sb-state: no 'SecureBoot enabled|disabled' line in {excerpt(text.strip())}"
        )
    return match.group("state") == "enabled"


def parse_lsmod(text: str) -> set[str]:
    """Loaded module names from `lsmod`.

    Raises:
        FactsError: the 'Module Size Used by' header is missing.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not _LSMOD_HEADER.match(lines[0]):
        raise FactsError("lsmod: first line is not the 'Module  Size  Used by' header")
    return {ln.split()[0] for ln in lines[1:]}


def _pid(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdecimal() else None


def parse_xid_events(text: str) -> list[dict[str, Any]]:
    """Xid events of kernel log lines (dmesg, with `[ctime]` or `[uptime]` stamps or none).

    Raises:
        FactsError: an `NVRM: Xid` line without a PCI address and Xid number.
    """
    refuse_long_numbers(text, "kernel log")
    events = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "NVRM: Xid" not in line:
            continue
        match = _XID.search(line)
        bus_id = normalize_bus_id(match.group("bus")) if match else None
        if match is None or bus_id is None:
            raise FactsError(f"kernel log: line {lineno} is a malformed Xid line: {excerpt(line.strip())}")
        stamp = _TIMESTAMP.match(line)
        name = match.group("name")
        events.append(
            {
                "time": stamp.group("time") if stamp else None,
                "bus_id": bus_id,
                "xid": int(match.group("xid")),
                "pid": _pid(match.group("pid")),
                "process": name.strip() if name and name.strip() != "<unknown>" else None,
                "message": match.group("message").strip(),
            }
        )
    return events


def _cgroup_version(source: Source) -> int | None:
    if source.read("sys/fs/cgroup/cgroup.controllers") is not None:
        return 2
    if _V1_CONTROLLERS.intersection(source.listdir("sys/fs/cgroup")):
        return 1
    return None


def _modules(source: Source, sources: list[str]) -> dict[str, bool | None]:
    out = source.run(LSMOD_ARGV)
    if out.rc == 0:
        sources.append("lsmod")
        loaded = parse_lsmod(out.stdout)
        return {m: m in loaded for m in MODULES}
    # Without lsmod, sys/module/<name> exists exactly when the module is loaded (or built in);
    # when sys/module itself is not there (a capture without it) nothing can be said.
    if not source.listdir("sys/module"):
        return dict.fromkeys(MODULES)
    sources.append("sys/module")
    return {m: bool(source.listdir(f"sys/module/{m}")) for m in MODULES}


def _kernel(source: Source, sources: list[str]) -> str | None:
    """The running kernel's release, from uname or /proc; the source used is appended to `sources`."""
    uname = source.run(UNAME_ARGV)
    if uname.rc == 0:
        sources.append("uname -a")
        return parse_uname(uname.stdout)
    if (release := source.read("proc/sys/kernel/osrelease")) is not None and release.strip():
        sources.append("proc/sys/kernel/osrelease")
        return release.strip()
    return None


def _distribution(source: Source, sources: list[str]) -> dict[str, Any] | None:
    """ID, VERSION_ID and PRETTY_NAME of the first os-release file found."""
    for path in OS_RELEASE_PATHS:
        text = source.read(path)
        if text is not None:
            values = parse_os_release(text)
            sources.append(path)
            return {
                "id": values.get("ID") or None,
                "version_id": values.get("VERSION_ID") or None,
                "pretty_name": values.get("PRETTY_NAME") or None,
            }
    return None


def gather_os(source: Source) -> dict[str, Any]:
    """`gpurack_os` for one node.

    Raises:
        FactsError: uname, mokutil, lsmod or the kernel log is malformed.
    """
    sources: list[str] = []
    kernel = _kernel(source, sources)
    distribution = _distribution(source, sources)
    cgroup = _cgroup_version(source)
    if cgroup is not None:
        sources.append("sys/fs/cgroup")

    # mokutil exits non-zero on legacy BIOS ("EFI variables are not supported"): unknown.
    sb = source.run(MOKUTIL_ARGV)
    secure_boot = parse_sb_state(sb.stdout + sb.stderr) if sb.rc == 0 else None
    if secure_boot is not None:
        sources.append("mokutil --sb-state")

    modules = _modules(source, sources)

    log = source.run(KERNEL_LOG_ARGV)
    xid_events = parse_xid_events(log.stdout) if log.rc == 0 else None
    if xid_events is not None:
        sources.append("dmesg")

    services = _services(source, sources)

    return {
        "available": True,
        "sources": sources,
        "kernel": kernel,
        "services": services,
        "distribution": distribution,
        "cgroup_version": cgroup,
        "secure_boot": secure_boot,
        "modules": modules,
        "xid_events": xid_events,
    }


# ---------------------------------------------------------------------------------------
# views: what the functions above produce, for consumers (checks, measured tiers)


class XidEventView(FactView):
    """One `gpurack_os.xid_events[]` entry."""

    FIELDS = frozenset({"time", "bus_id", "xid", "pid", "process", "message"})


class OsFactsView(FactView):
    """`gpurack_os` as `gather_os` returns it."""

    FACT = "gpurack_os"
    FIELDS = frozenset(
        {
            "available",
            "sources",
            "kernel",
            "services",
            "distribution",
            "cgroup_version",
            "secure_boot",
            "modules",
            "xid_events",
        }
    )

    def module_loaded(self, name: str) -> bool | None:
        """Whether kernel module `name` is loaded; None when modules were not read."""
        value = self.mapping("modules").get(name)
        return value if isinstance(value, bool) else None

    def service_state(self, name: str) -> str | None:
        """systemd's state of service `name` (`active`, ...); None when services were not read."""
        value = self.mapping("services").get(name)
        return None if value is None else str(value)

    def xid_events(self) -> list[XidEventView] | None:
        """The Xid events of the kernel log; None when it was not read."""
        if self.field("xid_events") is None:
            return None
        return self.items("xid_events", XidEventView)
