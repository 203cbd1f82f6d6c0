"""Hardware profiles of lab workers: capture bundles, built in or given as a folder.

Pure file work, no Docker: a profile is resolved to a source, then assembled into a
folder that the lab copies into a container at /opt/gpurack-lab/profile.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CAPTURE_COMMANDS,
    RC_NOT_FOUND,
    CommandOutput,
    format_capture_file,
    is_capture_dir,
)
from gpurack.errors import UsageError
from gpurack.project import project_root

FIXTURES_ENV = "GPURACK_FIXTURES"
DEFAULT_PROFILE = "h200x1"
BUILTIN_PROFILES: tuple[str, ...] = ("h200x1", "hgx-h100x8-ib", "cpu-only")
# Where a profile lives inside a lab container; the lab inventory's gpurack_facts_root.
CONTAINER_PROFILE_DIR = "/opt/gpurack-lab/profile"
# Written into every assembled profile: how it was made, for whoever reads the folder.
PROVENANCE_FILE = "LAB-PROFILE.txt"

# The public HGX H100 captures (shared/fixtures/public/gpud) that make up hgx-h100x8-ib.
_HGX_FILES: tuple[tuple[str, str, str], ...] = (
    ("nvidia-smi-q.535.161.08.h100x8", "nvidia-smi-q.txt", "nvidia-smi -q"),
    ("lspci-vvv.hgx-h100", "lspci-vvv.txt", "lspci -vvv"),
    ("ibstat.47.0.h100.all.active.2", "ibstat.txt", "ibstat"),
)
_HGX_SYSFS = ("sys-class-infiniband-h100", "sys/class/infiniband")


@dataclass(frozen=True, slots=True)
class Profile:
    """A resolved profile: its name (built-in name or folder name), where it comes from, its pool."""

    name: str
    builtin: bool
    source: Path  # the capture folder, or for hgx-h100x8-ib the public captures folder

    @property
    def group(self) -> str:
        """The inventory group (and pool) of workers with this profile: lab_<name> or lab_custom."""
        if not self.builtin:
            return "lab_custom"
        return "lab_" + self.name.replace("-", "_")


def fixtures_root() -> Path:
    """Return the real captures folder: $GPURACK_FIXTURES, else ../shared/fixtures beside the checkout."""
    override = os.environ.get(FIXTURES_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return project_root().parent / "shared" / "fixtures"


def resolve(spec: str) -> Profile:
    """Turn a --profile value (built-in name or capture folder path) into a Profile.

    Raises:
        UsageError: neither a built-in name nor a folder holding capture files, or the
            shared fixtures a built-in needs are missing.
    """
    fixtures = fixtures_root()
    if spec == "h200x1":
        return _checked(Profile(spec, True, fixtures / "hw" / "h200x1"), "h200x1 capture")
    if spec == "hgx-h100x8-ib":
        source = fixtures / "public" / "gpud"
        for name, _, _ in _HGX_FILES:
            _checked(Profile(spec, True, source / name), "public capture")
        return _checked(Profile(spec, True, source), "public captures")
    if spec == "cpu-only":
        return Profile(spec, True, Path("/dev/null"))
    path = Path(spec).expanduser()
    if path.is_dir() and is_capture_dir(path):
        return Profile(path.resolve().name, False, path.resolve())
    raise UsageError(
        f"unknown profile {spec!r}: use one of {', '.join(BUILTIN_PROFILES)} "
        "or a capture folder made by 'gpurack capture'"
    )


def _checked(profile: Profile, what: str) -> Profile:
    if not profile.source.exists():
        raise UsageError(
            f"profile {profile.name}: {what} not found at {profile.source} (set ${FIXTURES_ENV})"
        )
    return profile


def assign(specs: list[str], workers: int) -> list[Profile]:
    """Profiles for workers 1..N in order; the last given repeats, none given means all h200x1.

    Raises:
        UsageError: more profiles than workers, or a profile that does not resolve.
    """
    if len(specs) > workers:
        raise UsageError(f"{len(specs)} profiles given for {workers} workers")
    chosen = specs or [DEFAULT_PROFILE]
    resolved = [resolve(s) for s in chosen]
    return [resolved[min(i, len(resolved) - 1)] for i in range(workers)]


def frame(command_line: str, body: str, rc: int = 0) -> str:
    """One capture file: `# $ cmd`, the body, `# rc=N`."""
    return format_capture_file(command_line, CommandOutput(rc=rc, stdout=body))


def not_found(command_line: str, why: str) -> str:
    """A capture file for a tool the profile's machine does not have (rc 127)."""
    tool = command_line.split(maxsplit=1)[0]
    return frame(command_line, f"sh: {tool}: command not found ({why})\n", rc=RC_NOT_FOUND)


def assemble(profile: Profile, dest: Path, os_release: str, uname: str) -> Path:
    """Write the profile as a capture folder at dest (replaced if present); return dest.

    os_release and uname come from the lab container; built-in synthetic profiles use them,
    real capture folders keep their own.
    """
    if dest.exists():
        shutil.rmtree(dest)
    if profile.name == "hgx-h100x8-ib" and profile.builtin:
        _assemble_hgx(profile.source, dest, os_release, uname)
    elif profile.name == "cpu-only" and profile.builtin:
        _assemble_cpu_only(dest, os_release, uname)
    else:
        shutil.copytree(profile.source, dest, symlinks=False)
        for path in dest.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        (dest / PROVENANCE_FILE).write_text(f"lab profile {profile.name}: copy of {profile.source}\n")
    return dest


def _missing_files(dest: Path, present: set[str], why: str) -> None:
    """rc 127 frames for every capture command the profile does not provide."""
    for command in CAPTURE_COMMANDS:
        if command.filename not in present:
            (dest / command.filename).write_text(not_found(" ".join(command.argv), why))


def _container_files(dest: Path, os_release: str, uname: str) -> None:
    (dest / "os-release").write_text(os_release)
    (dest / "uname.txt").write_text(frame("uname -a", uname))


def _assemble_hgx(public: Path, dest: Path, os_release: str, uname: str) -> None:
    dest.mkdir(parents=True)
    present = set()
    for name, filename, command_line in _HGX_FILES:
        body = (public / name).read_text(encoding="utf-8")
        (dest / filename).write_text(frame(command_line, body))
        present.add(filename)
    # The published HGX capture is nvidia-smi -q text only. The XML is recorded as absent
    # (rc 127) rather than invented, so the GPU gatherer takes its text fallback.
    (dest / "nvidia-smi-q.xml").write_text(
        not_found("nvidia-smi -q -x", "not in the public HGX H100 capture")
    )
    present.add("nvidia-smi-q.xml")
    _container_files(dest, os_release, uname)
    present.add("uname.txt")
    _missing_files(dest, present, "not in the public HGX H100 capture")
    src, rel = _HGX_SYSFS
    shutil.copytree(public / src, dest / rel, symlinks=False)
    (dest / PROVENANCE_FILE).write_text(
        "lab profile hgx-h100x8-ib, assembled by gpurack lab up from shared/fixtures/public/gpud\n"
        "(leptonai/gpud test data, Apache-2.0; see its README.md):\n"
        + "".join(f"  {filename} <- {name}\n" for name, filename, _ in _HGX_FILES)
        + f"  {rel}/ <- {src}/\n"
        "  nvidia-smi-q.xml: rc 127 on purpose (the capture has text only)\n"
        "  os-release, uname.txt: from the lab container; other commands: rc 127\n"
    )


def _assemble_cpu_only(dest: Path, os_release: str, uname: str) -> None:
    dest.mkdir(parents=True)
    _container_files(dest, os_release, uname)
    _missing_files(dest, {"uname.txt"}, "cpu-only lab profile")
    (dest / PROVENANCE_FILE).write_text("lab profile cpu-only: no GPU, HCA or NVMe tools (rc 127 frames)\n")
