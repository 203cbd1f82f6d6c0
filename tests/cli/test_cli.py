"""Global behaviour of the gpurack command line: usage errors, version, debug, the console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import invoke
from gpurack import __version__, cli
from gpurack.errors import ExitCode, NotAssessedError


def test_main_unknown_flag_exits_64_with_one_line(capsys: pytest.CaptureFixture[str], h200x1: Path) -> None:
    result = invoke(capsys, "facts", "--from-capture", h200x1, "--frobnicate")
    assert result.code == ExitCode.USAGE
    assert "unrecognized arguments: --frobnicate" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert "Traceback" not in result.err


def test_main_unknown_command_exits_64(capsys: pytest.CaptureFixture[str]) -> None:
    result = invoke(capsys, "frobnicate")
    assert result.code == 64
    assert "invalid choice" in result.err


def test_main_without_command_exits_64(capsys: pytest.CaptureFixture[str]) -> None:
    result = invoke(capsys)
    assert result.code == 64
    assert "a command is required" in result.err


def test_main_version_prints_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpurack {__version__}"


def test_main_debug_prints_traceback_for_expected_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("not a capture\n")
    result = invoke(capsys, "facts", "--from-capture", tmp_path, "--debug")
    assert result.code == 2
    assert "Traceback" in result.err


def test_main_as_program_maps_interrupt_to_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(_argv: list[str]) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "dispatch", interrupt)
    monkeypatch.setattr(sys, "argv", ["gpurack", "facts", "--local"])
    assert cli.main() == ExitCode.INTERRUPTED


def test_main_as_program_reports_bugs_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def crash(_argv: list[str]) -> int:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cli, "dispatch", crash)
    monkeypatch.setattr(sys, "argv", ["gpurack", "facts", "--local"])
    assert cli.main() == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert err == "gpurack: internal error (ZeroDivisionError), rerun with --debug\n"


def test_main_in_process_lets_bugs_propagate(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(_args: object) -> int:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr("gpurack.commands.facts.handle", crash)
    with pytest.raises(ZeroDivisionError):
        cli.main(["facts", "--local"])


def test_error_codes_are_the_documented_ones() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 64, 70, 130]
    assert NotAssessedError("x").code == ExitCode.NOT_ASSESSED


def test_console_script_version_runs_installed_entry_point() -> None:
    script = Path(sys.executable).parent / "gpurack"
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"gpurack {__version__}"


def test_console_script_usage_error_exits_64_without_traceback() -> None:
    script = Path(sys.executable).parent / "gpurack"
    done = subprocess.run([str(script), "validate", "--nope"], capture_output=True, text=True, check=False)
    assert done.returncode == 64
    assert "Traceback" not in done.stderr
