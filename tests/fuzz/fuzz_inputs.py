"""Inputs for the parser property tests: mutations of real captures, random text, and the tally.

Every strategy starts from real output (`../shared/fixtures`, `tests/fixtures/captures`) and
breaks it the way a truncated paste, a bit flip or a hostile capture would: bytes flipped,
the text cut, lines or elements deleted, duplicated or moved, a number replaced by a huge,
negative, NaN or non-numeric one, random lines inserted, deep nesting. `attempt` runs one
parser on one input and counts the outcome, so `make fuzz` can print how many were tried.
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

# parser -> Counter({"parsed": n, "refused": m}); the conftest prints it (and sums the workers').
COUNTS: dict[str, Counter[str]] = {}


def attempt(parser: str, call: Callable[[], object], refusals: tuple[type[BaseException], ...]) -> None:
    """Run `call`; its module's own errors count as a refusal, anything else fails the test."""
    outcome = "parsed"
    try:
        call()
    except refusals:
        outcome = "refused"
    COUNTS.setdefault(parser, Counter())[outcome] += 1


# Strings that break naive number handling: int() limits, Unicode digits that isdigit() accepts
# but int() refuses, float spellings, hex, empty, NUL.
HOSTILE_NUMBERS = (
    "-1",
    "-0",
    "0",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "1e999",
    "99999999999999999999999",
    "9" * 5000,
    "-" + "9" * 4301,
    "0x1f",
    "0x",
    "1.2.3",
    "..",
    ".",
    "\u00b2",
    "\u0663",
    "\u00bd",
    "\u0663\u0663",
    "",
    " ",
    "abc",
    "N/A",
    "None",
    "-",
    "1_000",
    "+5",
    "1e-5",
    "\x00",
    "\ufffd",
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


# Strategies are built once: building one per draw costs more than the parsers themselves.
_NUMBERS = st.one_of(
    st.sampled_from(HOSTILE_NUMBERS),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.text(max_size=8),
)
_RANDOM_TEXT = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", errors="replace")),
)
_INDEX = st.integers(0, 2**32 - 1)
_COUNT = st.integers(1, 8)
_SHORT_TEXT = st.text(max_size=20)
_LINE_TEXT = st.text(max_size=80)
_BOOL = st.booleans()
_BYTE = st.integers(0, 255)
_ENDINGS = ("\n", "", "\r\n")
_INDENTS = ("", " ", "    ", "\t", "        ")
_DEPTHS = (10, 500, 1100, 5000, 50000)


def numbers() -> st.SearchStrategy[str]:
    """A replacement for one number of a capture."""
    return _NUMBERS


def random_text() -> st.SearchStrategy[str]:
    """Fully random text, and random bytes decoded as the capture reader does (errors replaced)."""
    return _RANDOM_TEXT


# (anchor, opening, closing, tail) for `_nest`; () for none.
Nest = tuple[str, ...]
Draw = Callable[[st.SearchStrategy[Any]], Any]
Op = Callable[[Draw, str, Sequence[str]], str]


def index(draw: Draw, size: int) -> int:
    """A position in 0..size-1 (0 when size is 0), drawn from one shared strategy."""
    return draw(_INDEX) % size if size > 0 else 0


def pick(draw: Draw, items: Sequence[Any]) -> Any:
    """One of `items` (not empty)."""
    return items[index(draw, len(items))]


def _flip(draw: Draw, text: str, _tokens: Sequence[str]) -> str:
    data = bytearray(text.encode("utf-8", errors="surrogateescape"))
    if not data:
        return text
    for _ in range(draw(_COUNT)):
        data[index(draw, len(data))] = draw(_BYTE)
    return bytes(data).decode("utf-8", errors="replace")


def _truncate(draw: Draw, text: str, _tokens: Sequence[str]) -> str:
    return text[: index(draw, len(text) + 1)]


def _lines_op(kind: str) -> Op:
    def op(draw: Draw, text: str, tokens: Sequence[str]) -> str:
        lines = text.splitlines()
        at = index(draw, len(lines) + 1)
        if kind == "insert":
            lines.insert(at, pick(draw, tokens) if tokens and draw(_BOOL) else draw(_LINE_TEXT))
        elif lines:
            at = min(at, len(lines) - 1)
            span = draw(_COUNT)
            if kind == "delete":
                del lines[at : at + span]
            elif kind == "duplicate":
                lines[at:at] = lines[at : at + span]
            elif kind == "move":
                chunk = lines[at : at + span]
                del lines[at : at + span]
                lines[index(draw, len(lines) + 1) : 0] = chunk
            elif kind == "indent":
                lines[at] = pick(draw, _INDENTS) + lines[at].lstrip()
        return "\n".join(lines) + pick(draw, _ENDINGS)

    return op


def _number(draw: Draw, text: str, _tokens: Sequence[str]) -> str:
    found = list(_NUMBER.finditer(text))
    if not found:
        return text
    match = pick(draw, found)
    return text[: match.start()] + draw(_NUMBERS) + text[match.end() :]


def _insert_chars(draw: Draw, text: str, _tokens: Sequence[str]) -> str:
    at = index(draw, len(text) + 1)
    return text[:at] + draw(_SHORT_TEXT) + text[at:]


OPS: tuple[Op, ...] = (
    _flip,
    _truncate,
    _lines_op("insert"),
    _lines_op("delete"),
    _lines_op("duplicate"),
    _lines_op("move"),
    _lines_op("indent"),
    _number,
    _number,
    _insert_chars,
)


@st.composite
def mutated(draw: Draw, bases: Sequence[str], tokens: Sequence[str] = (), nest: Nest = ()) -> str:
    """One of `bases` with one to eight mutations applied; `nest` adds deep nesting (see `_nest`)."""
    return mutate(draw, pick(draw, bases), tokens, nest)


def mutate(draw: Draw, text: str, tokens: Sequence[str] = (), nest: Nest = ()) -> str:
    """`text` with one to eight of OPS applied (and `_nest` when `nest` is given)."""
    ops: list[Op] = [*OPS, _nest(*nest)] if nest else list(OPS)
    for _ in range(draw(_COUNT)):
        text = pick(draw, ops)(draw, text, tokens)
    return text


def _nest(anchor: str, opening: str, closing: str, tail: str) -> Op:
    """After `anchor`: `opening` n times, `closing` n times, then `tail` (deep XML or JSON)."""

    def op(draw: Draw, text: str, _tokens: Sequence[str]) -> str:
        depth = pick(draw, _DEPTHS)
        cut = text.find(anchor)
        at = cut + len(anchor) if cut >= 0 else index(draw, len(text) + 1)
        return text[:at] + opening * depth + closing * depth + tail + text[at:]

    return op


def texts(bases: Sequence[str], tokens: Sequence[str] = (), nest: Nest = ()) -> st.SearchStrategy[str]:
    """Mostly mutated real output, sometimes fully random text or bytes."""
    return st.one_of(mutated(bases, tokens, nest), mutated(bases, tokens, nest), random_text())


# --- nvidia-smi -q -x: element-level mutations ----------------------------------------


@st.composite
def mutated_xml(draw: Draw, bases: Sequence[str]) -> str:
    """A real `nvidia-smi -q -x` with elements deleted, duplicated, renamed or given odd text."""
    root = ET.fromstring(pick(draw, bases).strip())
    parents = {child: parent for parent in root.iter() for child in parent}
    elements = list(parents)
    for _ in range(draw(_COUNT)):
        target = pick(draw, elements)
        parent = parents[target]
        if target not in list(parent):
            continue  # moved or deleted by an earlier step
        op = pick(draw, _XML_OPS)
        if op == "delete":
            parent.remove(target)
        elif op == "duplicate":
            parent.insert(list(parent).index(target), copy.deepcopy(target))
        elif op == "text":
            target.text = draw(_NUMBERS) if draw(_BOOL) else pick(draw, _XML_WORDS)
        elif op == "rename":
            target.tag = pick(draw, elements).tag
        elif op == "empty":
            for child in list(target):
                target.remove(child)
        else:
            parent.remove(target)
            dest = pick(draw, elements)
            if dest is not target and target not in dest.iter():
                dest.append(target)
                parents[target] = dest
    text = ET.tostring(root, encoding="unicode")
    if draw(_BOOL):
        text = pick(draw, OPS)(draw, text, ())
    return text


_XML_OPS = ("delete", "duplicate", "text", "text", "rename", "empty", "move")
_XML_WORDS = ("Enabled", "Disabled", "Active", "Not Active", "N/A", "Yes", "Completed")
