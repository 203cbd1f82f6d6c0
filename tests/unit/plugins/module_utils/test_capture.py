"""The capture frame over every real capture file, and the writer/reader round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    CaptureFormatError,
    CommandOutput,
    command_for,
    format_capture_file,
    parse_capture_file,
)
from conftest import H200X1

# Every framed file of the real H200 capture; os-release and the PyTorch bandwidth run's
# output (bandwidth.json, bandwidth.err) are plain files.
PLAIN = {"os-release", "bandwidth.json", "bandwidth.err"}
FRAMED = sorted(p for p in H200X1.iterdir() if p.is_file() and p.name not in PLAIN)


@pytest.mark.parametrize("path", FRAMED, ids=lambda p: p.name)
def test_parse_capture_file_real_h200_files_have_frame(path: Path) -> None:
    command, output = parse_capture_file(path.read_text(), name=path.name)
    assert command
    assert output.rc in (0, 127)
    # The capture README: rc 127 means the tool was not installed there.
    assert output.missing == (output.rc == 127)


def test_capture_commands_h200_files_match_their_command_lines() -> None:
    for entry in CAPTURE_COMMANDS:
        path = H200X1 / entry.filename
        if not path.exists():  # newer entries than the 2026-11-29 capture
            continue
        command, _ = parse_capture_file(path.read_text(), name=entry.filename)
        assert command == " ".join(entry.argv)


def test_parse_capture_file_missing_footer_raises() -> None:
    # A file cut in the middle: the `# rc=` footer is gone.
    with pytest.raises(CaptureFormatError, match="truncated"):
        parse_capture_file("# $ nvidia-smi -q\nGPU 00000000:19:00.0\n", name="nvidia-smi-q.txt")


def test_parse_capture_file_missing_header_raises() -> None:
    with pytest.raises(CaptureFormatError, match="first line"):
        parse_capture_file("GPU 0: NVIDIA H200\n# rc=0\n", name="nvidia-smi-L.txt")


def test_format_capture_file_round_trips() -> None:
    out = CommandOutput(rc=127, stdout="", stderr="sh: ibstat: command not found")
    text = format_capture_file("ibstat", out)
    command, parsed = parse_capture_file(text)
    assert (command, parsed.rc, parsed.stdout) == ("ibstat", 127, "sh: ibstat: command not found\n")


def test_command_for_unknown_argv_is_none() -> None:
    assert command_for(["nvidia-smi", "-r"]) is None
    assert command_for(("nvidia-smi", "-q", "-x")).filename == "nvidia-smi-q.xml"  # type: ignore[union-attr]
