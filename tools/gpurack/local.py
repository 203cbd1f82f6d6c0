"""This machine as a fact source: commands run through subprocess, files read below a root."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CommandOutput,
    LiveSource,
    not_found,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import is_dns_subdomain

from gpurack.errors import UsageError

COMMAND_TIMEOUT_S = 60.0
RC_TIMEOUT = 124  # what timeout(1) returns, so a hung tool reads the same in every capture
RC_NOT_EXECUTABLE = 126


def run_command(argv: Sequence[str], timeout: float = COMMAND_TIMEOUT_S) -> CommandOutput:
    """Run argv without a shell; a missing tool gives rc 127 and the shell's message, like captures."""
    # LC_ALL=C keeps tool output in the English the parsers were written against.
    env = {**os.environ, "LC_ALL": "C"}
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        return not_found(argv[0])
    except PermissionError:
        return CommandOutput(rc=RC_NOT_EXECUTABLE, stdout="", stderr=f"sh: {argv[0]}: Permission denied\n")
    except subprocess.TimeoutExpired:
        return CommandOutput(rc=RC_TIMEOUT, stdout="", stderr=f"gpurack: timed out after {timeout:g} s\n")
    return CommandOutput(rc=done.returncode, stdout=done.stdout, stderr=done.stderr)


def live_source(root: str | os.PathLike[str] = "/") -> LiveSource:
    """Return this machine as a Source: commands run here, sysfs and /etc read below `root`."""
    return LiveSource(run_command, root)


def hostname() -> str:
    """This machine's short host name in lower case, as kubelet names its Node.

    Raises:
        UsageError: the name is still no Kubernetes node name (a DNS subdomain: an `_`, a
            blank, a control character), so gpurack would record a node Kubernetes refuses.
    """
    given = socket.gethostname()
    name = given.split(".")[0].strip().lower()
    if not is_dns_subdomain(name):
        raise UsageError(
            f"this machine's host name {excerpt(given)} is not a Kubernetes node name (a DNS subdomain:"
            " lower-case letters, digits, '-' and '.'); set one with hostnamectl set-hostname"
        )
    return name


def is_readable_dir(path: Path) -> bool:
    """True when `path` is a folder this process can list."""
    return path.is_dir() and os.access(path, os.R_OK | os.X_OK)
