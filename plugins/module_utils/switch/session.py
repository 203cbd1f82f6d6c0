# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The thin runner over netmiko: connect to one switch, run its platform's commands, and turn
each way of failing into one line that says which (SwitchReadError.kind).

The TCP port is probed first, because netmiko reports a refused connection, an unroutable
address and a connect timeout alike ("TCP connection to device failed").
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt


def _netmiko() -> Any:
    """netmiko, imported on first use: it costs every `gpurack` start a third of a second.

    Raises:
        SwitchReadError: (platform) netmiko is not installed on the controller.
    """
    try:
        import netmiko  # noqa: PLC0415
    except ImportError as exc:
        raise SwitchReadError("platform", f"netmiko is not installed on the controller: {exc}") from None
    return netmiko


def _timeouts() -> tuple[type[BaseException], ...]:
    """netmiko's timeout exceptions (none when netmiko is missing: nothing can raise them)."""
    try:
        from netmiko.exceptions import NetmikoTimeoutException, ReadTimeout  # noqa: PLC0415
    except ImportError:
        return ()
    return (NetmikoTimeoutException, ReadTimeout)


class SwitchReadError(RuntimeError):
    """Reading or configuring a switch failed; `kind` is credentials, unreachable, timeout,
    platform or output."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Target:
    """Where a switch answers SSH, and as whom. The password never appears in a message."""

    name: str
    host: str
    port: int
    username: str
    password: str
    timeout: float

    def where(self) -> str:
        return f"{self.name} ({self.host}:{self.port})"


# The argument spec of the options in doc_fragments/switch.py.
CONNECTION_ARGS: dict[str, dict[str, Any]] = {
    "name": {"type": "str", "required": True},
    "host": {"type": "str", "required": True},
    "port": {"type": "int", "default": 22},
    "username": {"type": "str", "required": True},
    "password": {"type": "str", "required": True, "no_log": True},
    "network_os": {"type": "str", "required": True},
    "timeout": {"type": "int", "default": 30},
}
MAX_TIMEOUT_S = 600


def target_from_params(params: Mapping[str, Any]) -> Target:
    """The target of a module's CONNECTION_ARGS.

    Raises:
        SwitchReadError: (platform) a timeout outside 1 to 600 seconds.
    """
    if not 1 <= params["timeout"] <= MAX_TIMEOUT_S:
        raise SwitchReadError(
            "platform",
            f"{params['name']}: timeout must be 1 to {MAX_TIMEOUT_S} seconds, got {params['timeout']}",
        )
    return Target(
        params["name"],
        params["host"],
        params["port"],
        params["username"],
        params["password"],
        float(params["timeout"]),
    )


class Connection(Protocol):
    """The part of a netmiko connection that gpurack uses."""

    def send_command(self, command_string: str, **kwargs: Any) -> Any: ...

    def send_config_set(self, config_commands: Sequence[str], **kwargs: Any) -> Any: ...

    def save_config(self, *args: Any, **kwargs: Any) -> Any: ...

    def disconnect(self) -> None: ...


Connect = Callable[[Target, str], Connection]


def probe(target: Target) -> None:
    """Open and close a TCP connection to the switch's SSH port.

    Raises:
        SwitchReadError: refused, unroutable, or no answer within the timeout.
    """
    try:
        with socket.create_connection((target.host, target.port), timeout=target.timeout):
            return
    except TimeoutError:
        raise SwitchReadError("timeout", f"{target.where()}: no answer within {target.timeout:g} s") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SwitchReadError("unreachable", f"{target.where()}: unreachable: {reason.lower()}") from None


def netmiko_connect(target: Target, device_type: str) -> Connection:
    """A netmiko SSH session, every timeout bounded by the target's.

    Raises:
        SwitchReadError: netmiko is missing, the credentials are refused, or the session timed out.
    """
    netmiko = _netmiko()
    _quiet_paramiko()
    try:
        connection = netmiko.ConnectHandler(
            device_type=device_type,
            host=target.host,
            port=target.port,
            username=target.username,
            password=target.password,
            conn_timeout=target.timeout,
            auth_timeout=target.timeout,
            banner_timeout=target.timeout,
            read_timeout_override=target.timeout,
            fast_cli=False,
        )
    except netmiko.exceptions.NetmikoAuthenticationException:
        raise SwitchReadError(
            "credentials", f"{target.where()}: credentials refused for user {target.username}"
        ) from None
    except _timeouts() as exc:
        raise SwitchReadError("timeout", f"{target.where()}: session failed: {excerpt(_why(exc))}") from None
    return cast(Connection, connection)


def _why(exc: BaseException) -> str:
    """The line of a netmiko error that says what happened: its last, after netmiko's preamble
    ("A paramiko SSHException occurred during connection creation:"), e.g. "Error reading SSH
    protocol banner" when something other than an SSH server answered."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _quiet_paramiko() -> None:
    """paramiko logs a failed handshake with its traceback from its own thread, which reaches
    the terminal through logging's last-resort handler; the failure is reported as one line
    (SwitchReadError) instead."""
    logger = logging.getLogger("paramiko")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def run_commands(
    target: Target, device_type: str, commands: Sequence[str], connect: Connect
) -> dict[str, str]:
    """Each command's output, read in one session.

    Raises:
        SwitchReadError: as probe and connect do, or a command timed out.
    """
    probe(target)
    connection = connect(target, device_type)
    try:
        return {command: str(connection.send_command(command)) for command in commands}
    except _timeouts():
        raise SwitchReadError("timeout", f"{target.where()}: no output within {target.timeout:g} s") from None
    finally:
        connection.disconnect()


def send_config(target: Target, device_type: str, commands: Sequence[str], connect: Connect) -> None:
    """Send `commands` in config mode, then save the running configuration, in one session.

    Raises:
        SwitchReadError: as probe and connect do, or the switch did not answer in time.
    """
    probe(target)
    connection = connect(target, device_type)
    try:
        connection.send_config_set(list(commands))
        connection.save_config()
    except _timeouts():
        raise SwitchReadError("timeout", f"{target.where()}: no answer within {target.timeout:g} s") from None
    finally:
        connection.disconnect()
