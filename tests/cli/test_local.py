"""Running commands on this machine the way captures record them."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cli_helpers import invoke
from gpurack import local
from gpurack.errors import UsageError


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


@pytest.mark.parametrize(
    ("given", "name"),
    [("gpu-07", "gpu-07"), ("GPU-07", "gpu-07"), ("Gpu-07.Example.COM", "gpu-07"), ("h200x8a", "h200x8a")],
)
def test_hostname_is_the_node_name_kubelet_gives(
    monkeypatch: pytest.MonkeyPatch, given: str, name: str
) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: given)
    assert local.hostname() == name


@pytest.mark.parametrize("given", ["gpu_07", "gpu 07", "-gpu", "gpu\x1b]0;x\x07", "", ".example"])
def test_a_host_name_kubernetes_refuses_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: given)
    with pytest.raises(UsageError, match="is not a Kubernetes node name") as raised:
        local.hostname()
    assert "\n" not in str(raised.value) and "\x1b" not in str(raised.value)


@pytest.mark.parametrize("verb", ["capture", "facts"])
def test_capture_and_facts_here_refuse_a_host_name_kubernetes_refuses(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, verb: str
) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "GPU_07")
    argv = ("capture", "--output", tmp_path / "out") if verb == "capture" else ("facts", "--local")
    result = invoke(capsys, *argv)
    assert result.code == 64, result
    assert "host name 'GPU_07' is not a Kubernetes node name" in result.err
    assert len(result.err.strip().splitlines()) == 1  # the transient progress bar leaves a blank line
    assert not (tmp_path / "out").exists()
