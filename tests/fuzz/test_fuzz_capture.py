"""Property: capture frames and bundles read back or raise CaptureFormatError/CaptureError/FactsError;
a bundle written from any command output reads back the same; the sysfs mirror never leaves the tree."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.bundle import write_bundle
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    CaptureFormatError,
    CommandOutput,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureError,
    CaptureSource,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.sysfs import mirror
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzz_inputs import Draw, attempt, index, mutate, pick, random_text, texts
from .fuzz_node import H200X1, H200X4

FRAMES = tuple(
    (bundle / c.filename).read_text()
    for bundle in (H200X1, H200X4)
    for c in CAPTURE_COMMANDS
    if (bundle / c.filename).is_file()
)
FRAME_LINES = (
    "# $ nvidia-smi -q -x",
    "# rc=",
    "# rc=-1",
    "# rc=99999999999999999999999",
    "# rc=\u0663",
    "# $ ",
)


@settings(database=None, deadline=None)
@given(texts(FRAMES, FRAME_LINES))
def test_capture_frame_parses_or_refuses(text: str) -> None:
    attempt(
        "capture frame (# $ cmd ... # rc=N)", lambda: parse_capture_file(text, "f.txt"), (CaptureFormatError,)
    )


@pytest.fixture(scope="module")
def bundle() -> Iterator[Path]:
    """One writable copy of the 4x H200 bundle; each example edits files and puts them back."""
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp) / "capture"
        shutil.copytree(H200X4, dest)
        yield dest


_NAMES = tuple(sorted({c.filename for c in CAPTURE_COMMANDS} | {"os-release"}))


@st.composite
def bundle_edits(draw: Draw) -> dict[str, bytes | None]:
    """New bytes for one to four files of the bundle (None: removed, b"/": a folder in its place)."""
    edits: dict[str, bytes | None] = {}
    for _ in range(1 + index(draw, 4)):
        name = pick(draw, _NAMES)
        path = H200X4 / name
        old = path.read_text(errors="replace") if path.is_file() else "# $ x\n# rc=0\n"
        kind = index(draw, 6)
        if kind == 0:
            edits[name] = None
        elif kind == 1:
            edits[name] = b"/"
        elif kind == 2:
            edits[name] = draw(st.binary(max_size=300))
        elif kind == 3:
            edits[name] = mutate(draw, old).encode("utf-16")
        else:
            edits[name] = mutate(draw, old).encode("utf-8", errors="surrogateescape")
    return edits


def _apply(root: Path, edits: dict[str, bytes | None]) -> None:
    for name, data in edits.items():
        path = root / name
        if path.is_dir():
            path.rmdir()
        elif path.exists():
            path.unlink()
        if data == b"/":
            path.mkdir()
        elif data is not None:
            path.write_bytes(data)


@settings(database=None, deadline=None)
@given(bundle_edits())
def test_capture_bundle_reads_or_refuses(bundle: Path, edits: dict[str, bytes | None]) -> None:
    _apply(bundle, edits)
    try:
        attempt(
            "capture bundle folder (CaptureSource + gather_all)",
            lambda: gather_all(CaptureSource(bundle)),
            (FactsError, CaptureError),
        )
    finally:
        _apply(
            bundle,
            {name: (H200X4 / name).read_bytes() if (H200X4 / name).is_file() else None for name in edits},
        )


class _Sink:
    def __init__(self) -> None:
        self.files: dict[PurePosixPath, bytes] = {}

    def __call__(self, rel: PurePosixPath, data: bytes) -> None:
        self.files[rel] = data


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


_OUTPUT = st.builds(CommandOutput, st.integers(-(2**31), 2**31 - 1), random_text(), random_text())


@settings(database=None, deadline=None)
@given(st.lists(_OUTPUT, min_size=len(CAPTURE_COMMANDS), max_size=len(CAPTURE_COMMANDS)))
def test_bundle_written_from_any_output_reads_back(outputs: Sequence[CommandOutput]) -> None:
    by_argv = {c.argv: o for c, o in zip(CAPTURE_COMMANDS, outputs, strict=True)}
    sink = _Sink()

    def write_and_read() -> None:
        write_bundle(Path("/nonexistent-root"), lambda argv: by_argv[tuple(argv)], sink, sysfs=False)
        for cmd in CAPTURE_COMMANDS:
            written = by_argv[cmd.argv]
            header, read = parse_capture_file(
                sink.files[PurePosixPath(cmd.filename)].decode("utf-8", "replace")
            )
            assert header == " ".join(cmd.argv)
            assert read.rc == written.rc
            # Only blank lines may differ: a trailing '\r' and the frame's '\n' read as one break.
            assert _lines(read.stdout) == _lines(written.stdout + written.stderr)

    attempt("capture bundle writer (write_bundle round trip)", write_and_read, ())


@st.composite
def sysfs_trees(draw: Draw) -> list[tuple[str, str, bytes]]:
    """Entries (kind, path below root, data or link target) of a small hostile sys/ tree."""
    dirs = (
        "sys/class/net/eth0",
        "sys/class/infiniband/mlx5_0/ports/1/counters",
        "sys/bus/pci/devices",
        "sys/devices/x",
    )
    targets = (
        "../../../outside",
        "/",
        "/etc",
        "../../..",
        "loop",
        "../eth0",
        "../../devices/x",
        "/proc/self",
    )
    entries: list[tuple[str, str, bytes]] = []
    for _ in range(1 + index(draw, 10)):
        where = pick(draw, dirs)
        name = draw(
            st.text(min_size=1, max_size=8).filter(
                lambda s: "/" not in s and "\x00" not in s and s not in (".", "..")
            )
        )
        if draw(st.booleans()):
            entries.append(("link", f"{where}/{name}", pick(draw, targets).encode()))
        else:
            entries.append(("file", f"{where}/{name}", draw(st.binary(max_size=64))))
    return entries


def _build(root: Path, entries: list[tuple[str, str, bytes]]) -> None:
    (root / "outside").mkdir(parents=True)
    (root / "outside" / "secret").write_bytes(b"SECRET")
    for kind, rel, data in entries:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            continue
        if kind == "link":
            os.symlink(data.decode(), path)
        else:
            path.write_bytes(data)


@settings(database=None, deadline=None)
@given(sysfs_trees())
def test_sysfs_mirror_stays_in_the_tree(entries: list[tuple[str, str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        _build(root, entries)
        sink = _Sink()

        def copy() -> None:
            mirror(root, sink)
            for rel, data in sink.files.items():
                assert rel.parts[0] == "sys" and ".." not in rel.parts, rel
                assert data != b"SECRET", rel

        attempt("sysfs mirror (_sysfs.mirror)", copy, ())
