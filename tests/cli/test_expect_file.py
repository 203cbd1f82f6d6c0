"""gpurack validate --expect FILE with files that are not UTF-8 YAML, too large, or expect nothing."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from cli_helpers import invoke
from gpurack import config


def _validate(capsys: pytest.CaptureFixture[str], h200x1: Path, expect: Path, *extra: str):  # type: ignore[no-untyped-def]
    return invoke(capsys, "validate", "--from-capture", h200x1, "--no-record", "--expect", expect, *extra)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("gpu: {count: 1}\n".encode("utf-16"), "is UTF-16 or UTF-32 text; save it as UTF-8"),
        ("gpu: {count: 1}\n".encode("utf-16-le"), "holds NUL bytes"),
        (bytes(range(256)) * 4, "holds NUL bytes"),
        (
            "gpu: {model: 'NVIDIA H200 \xe9'}\n".encode("latin-1"),
            "is not UTF-8 text (byte 0xe9 at offset 26)",
        ),
    ],
    ids=["utf-16", "utf-16-no-bom", "binary", "latin-1"],
)
def test_validate_expect_not_utf8_exits_64_without_a_traceback(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, data: bytes, problem: str
) -> None:
    expect = tmp_path / "expect.yml"
    expect.write_bytes(data)
    result = _validate(capsys, h200x1, expect)
    assert result.code == 64
    assert f"gpurack: {expect}: {problem}" in result.err
    assert "internal error" not in result.err and "Traceback" not in result.err


def test_validate_expect_over_the_size_cap_exits_64_without_reading_it_whole(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    expect = tmp_path / "expect.yml"
    with expect.open("wb") as handle:
        handle.write(b"gpu: {count: 1}\n# ")
        handle.truncate(200_000_000)  # a wrong path: a log, an image
    result = _validate(capsys, h200x1, expect)
    assert result.code == 64
    assert "over 1024 KiB, too large for a YAML settings file" in result.err


def test_validate_expect_endless_stream_exits_64(capsys: pytest.CaptureFixture[str], h200x1: Path) -> None:
    result = _validate(capsys, h200x1, Path("/dev/zero"))
    assert result.code == 64
    assert "too large" in result.err


def test_validate_expect_from_a_pipe_still_works(capsys: pytest.CaptureFixture[str], h200x1: Path) -> None:
    read_end, write_end = os.pipe()  # what `--expect <(generate-expect)` hands over

    def feed() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(b"gpu: {count: 1}\n")

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        result = _validate(capsys, h200x1, Path(f"/dev/fd/{read_end}"))
    finally:
        writer.join()
        os.close(read_end)
    assert result.code == 0, result.err


@pytest.mark.parametrize(
    "text",
    ["", "# nothing yet\n", "gpurack_expect: {}\n", "{}\n"],
    ids=["empty", "comments", "wrapped", "braces"],
)
def test_validate_empty_expect_file_warns_that_nothing_was_expected(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path, text: str
) -> None:
    expect = tmp_path / "expect.yml"
    expect.write_text(text)
    result = _validate(capsys, h200x1, expect, "--json")
    assert result.code == 0
    data = json.loads(result.out)
    empty = [r for r in data["results"] if r["id"] == "expect.empty"]
    assert [r["verdict"] for r in empty] == ["warn"]
    assert empty[0]["reason"] == f"{expect} holds no expectations: nothing the pool expects was checked"
    assert data["summary"]["verdict"] == "warn"


def test_validate_empty_expect_file_is_shown_as_a_warning_in_the_table(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    expect = tmp_path / "expect.yml"
    expect.write_text("")
    result = _validate(capsys, h200x1, expect)
    # The terminal may wrap the line anywhere, even inside the path: compare without whitespace.
    squeezed = "".join(result.out.split())
    assert "".join(f"warn Expectations given: {expect} holds no expectations".split()) in squeezed
    assert "verdict: warn" in result.out


def test_validate_without_expect_adds_no_expect_warning(
    capsys: pytest.CaptureFixture[str], h200x1: Path
) -> None:
    result = invoke(capsys, "validate", "--from-capture", h200x1, "--no-record", "--json")
    assert "expect.empty" not in {r["id"] for r in json.loads(result.out)["results"]}


def test_load_expect_utf8_with_bom_still_reads(tmp_path: Path) -> None:
    expect = tmp_path / "expect.yml"
    expect.write_bytes("\ufeffgpu: {count: 1}\n".encode())
    assert config.load_expect(expect) == {"gpu": {"count": 1}}


def test_facts_pool_file_in_utf16_exits_64_by_the_same_reader(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    pool = tmp_path / "pool.yml"
    pool.write_bytes("name: h200\n".encode("utf-16"))
    result = invoke(capsys, "facts", "--from-capture", h200x1, "--pool", pool)
    assert result.code == 64
    assert f"gpurack: {pool}: is UTF-16 or UTF-32 text; save it as UTF-8" in result.err
