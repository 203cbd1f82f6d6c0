"""Running commands on this machine the way captures record them."""

from __future__ import annotations

from gpurack import local


def test_run_command_missing_tool_returns_127_and_shell_message() -> None:
    output = local.run_command(["gpurack-no-such-tool", "-x"])
    assert output.rc == 127
    assert output.stderr == "sh: gpurack-no-such-tool: command not found\n"


def test_run_command_timeout_returns_124() -> None:
    output = local.run_command(["sleep", "5"], timeout=0.2)
    assert output.rc == 124
    assert "timed out" in output.stderr


def test_run_command_keeps_rc_and_stdout() -> None:
    output = local.run_command(["sh", "-c", "echo hi; exit 3"])
    assert (output.rc, output.stdout) == (3, "hi\n")
