"""How errors quote input: excerpts of about 80 characters, one printable, bounded line."""

from __future__ import annotations

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import (
    EXCERPT_CHARS,
    MESSAGE_MAX_CHARS,
    CaptureError,
    FactsError,
    clip_message,
    excerpt,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CaptureFormatError,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import parse_uname


def test_excerpt_short_text_is_its_repr() -> None:
    assert excerpt("GPU 0: H200") == "'GPU 0: H200'"


def test_excerpt_long_text_is_cut_to_80_characters_and_says_its_length() -> None:
    cut = excerpt("A" * 100_000_000)
    assert cut == repr("A" * EXCERPT_CHARS) + "... (100000000 characters)"


def test_excerpt_escapes_terminal_control_characters() -> None:
    assert "\x1b" not in excerpt("\x1b]0;pwned\x07 Linux")
    assert "\\x1b" in excerpt("\x1b]0;pwned\x07 Linux")


def test_clip_message_escapes_and_bounds() -> None:
    message = clip_message("bad \x1b[31m" + "x" * 10_000)
    assert len(message) == MESSAGE_MAX_CHARS
    assert message.endswith("...")
    assert "\x1b" not in message and "\\x1b" in message


@pytest.mark.parametrize("error", [FactsError, CaptureError, CaptureFormatError])
def test_input_errors_never_carry_more_than_the_clip(error: type[ValueError]) -> None:
    raised = error("lspci -vvv: line 1: " + repr("A" * 100_000_000))
    assert len(str(raised)) <= MESSAGE_MAX_CHARS


def test_capture_file_with_a_100mb_first_line_reports_an_excerpt() -> None:
    with pytest.raises(CaptureFormatError, match="first line must be") as caught:
        parse_capture_file("A" * 100_000_000 + "\n# rc=0\n", name="lspci-vvv.txt")
    assert "(100000000 characters)" in str(caught.value)
    assert len(str(caught.value)) < 200


def test_uname_garbage_is_quoted_as_an_excerpt() -> None:
    with pytest.raises(FactsError, match=r"\.\.\. \(5000000 characters\)"):
        parse_uname("Z" * 5_000_000)
