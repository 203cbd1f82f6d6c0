"""A node held in memory (sysfs files and command outputs) built from real captures, and its mutations.

The gatherers read a `Source`; `DictSource` answers from dicts, so thousands of mutated nodes
cost no disk: attribute values replaced, files deleted, entries added or renamed, command
outputs mutated as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    CommandOutput,
    not_found,
    parse_capture_file,
)
from hypothesis import strategies as st

from .fuzz_inputs import Draw, index, mutate, numbers, pick, random_text

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO.parent / "shared" / "fixtures"
H200X1 = FIXTURES / "hw" / "h200x1"
PUBLIC = FIXTURES / "public" / "gpud"
H200X4 = REPO / "tests" / "fixtures" / "captures" / "h200x4"

Argv = tuple[str, ...]


@dataclass(frozen=True)
class Node:
    """What a Source shows: files below the root (`sys/...`) and each command's output."""

    files: dict[str, str]
    commands: dict[Argv, CommandOutput]


class DictSource:
    """A `Source` over a Node (commands it lacks are not installed, rc 127)."""

    description = "fuzzed node"

    def __init__(self, node: Node) -> None:
        self._node = node

    def run(self, argv: Sequence[str]) -> CommandOutput:
        return self._node.commands.get(tuple(argv), not_found(argv[0]))

    def read(self, path: str) -> str | None:
        return self._node.files.get(path.strip("/"))

    def listdir(self, path: str) -> list[str]:
        prefix = path.strip("/") + "/"
        return sorted({k[len(prefix) :].split("/", 1)[0] for k in self._node.files if k.startswith(prefix)})


def _tree(root: Path, mount: str) -> dict[str, str]:
    return {
        f"{mount}/{p.relative_to(root).as_posix()}": p.read_text(errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def capture_node(bundle: Path) -> Node:
    """A capture bundle as a Node: every command file, `sys/` and os-release."""
    commands: dict[Argv, CommandOutput] = {}
    for cmd in CAPTURE_COMMANDS:
        path = bundle / cmd.filename
        if path.is_file():
            commands[cmd.argv] = parse_capture_file(path.read_text(errors="replace"), cmd.filename)[1]
    files = _tree(bundle / "sys", "sys")
    if (bundle / "os-release").is_file():
        files["os-release"] = (bundle / "os-release").read_text()
    return Node(files, commands)


def lspci_excerpt(limit: int = 60_000) -> str:
    """The first devices of the public 8x H100 `lspci -vvv` (927 kB whole), cut at a device."""
    text = (PUBLIC / "lspci-vvv.hgx-h100").read_text(errors="replace")
    cut = text.find("\n\n", limit)
    return text[: cut + 1] if cut > 0 else text


def public_node() -> Node:
    """The h200x1 sysfs with the public H100 InfiniBand tree, ibstat, lspci and nvidia-smi -q text."""
    base = capture_node(H200X1)
    files = {**base.files, **_tree(PUBLIC / "sys-class-infiniband-h100", "sys/class/infiniband")}
    commands = {k: v for k, v in base.commands.items() if k[0] != "nvidia-smi"}
    commands[("nvidia-smi", "-q")] = CommandOutput(0, (PUBLIC / "nvidia-smi-q.535.161.08.h100x8").read_text())
    commands[("ibstat",)] = CommandOutput(0, (PUBLIC / "ibstat.47.0.h100.all.active.0").read_text())
    commands[("lspci", "-vvv")] = CommandOutput(0, lspci_excerpt())
    return Node(files, commands)


NODES: tuple[Node, ...] = (capture_node(H200X1), capture_node(H200X4), public_node())

# Entry names that break naive handling: Unicode digits, separators, the PCI address shapes.
ODD_NAMES = (
    "\u00b2",
    "\u0663",
    "node\u00b2",
    "node\u0663",
    "0000:zz:00.0",
    "ffff:ff:1f.7",
    "1",
    "lo",
    " ",
    "..",
)


_NAME = st.sampled_from(ODD_NAMES) | st.text(min_size=1, max_size=12).filter(lambda s: "/" not in s)
_NODE_OPS = ("value", "value", "delete", "add", "rename", "command", "command", "rc")
_RCS = (0, 1, 2, 127, -9, 255)
_STEPS = st.integers(1, 6)


def _value(draw: Draw, old: str) -> str:
    kind = index(draw, 4)
    if kind == 0:
        return str(draw(numbers()))
    if kind == 1:
        return str(draw(random_text()))
    if kind == 2:
        return mutate(draw, old or "\n")
    return str(pick(draw, ("", "\n", old.strip(), old * 3)))


@st.composite
def mutated_node(
    draw: Draw,
    files: Sequence[str] = (),
    commands: Sequence[Argv] = (),
    outputs: Mapping[Argv, Sequence[str]] | None = None,
) -> DictSource:
    """A real node with one to six changes to the files below `files` and the `commands` given.

    A changed command prints a mutation of its own output or of one of `outputs[argv]`.
    """
    node = pick(draw, NODES)
    tree, printed = dict(node.files), dict(node.commands)
    for _ in range(draw(_STEPS)):
        op = pick(draw, _NODE_OPS)
        keys = (
            sorted(k for k in tree if k.startswith(tuple(files)))
            if files and op not in ("command", "rc")
            else []
        )
        if op in ("command", "rc") or not keys:
            if not commands:
                continue
            argv = pick(draw, commands)
            old = printed.get(argv, CommandOutput(0, ""))
            if op == "rc":
                printed[argv] = CommandOutput(pick(draw, _RCS), old.stdout)
            else:
                bases = [
                    *(outputs or {}).get(argv, ()),
                    *([old.stdout] if old.rc == 0 and old.stdout else []),
                ]
                printed[argv] = CommandOutput(0, mutate(draw, pick(draw, bases or ["\n"])))
            continue
        key = pick(draw, keys)
        parent = key.rpartition("/")[0]
        if op == "rename" and key.count("/") < 2:
            op = "value"
        if op == "value":
            tree[key] = _value(draw, tree[key])
        elif op == "delete":
            del tree[key]
        elif op == "add":
            name = draw(_NAME)
            tree[f"{parent}/{name}"] = _value(draw, tree[key])
        else:
            parts = key.split("/")
            depth = 2 + index(draw, len(parts) - 2)
            new = draw(_NAME)
            old_prefix = "/".join(parts[:depth]) + "/"
            new_prefix = "/".join([*parts[: depth - 1], new]) + "/"
            tree = {
                (new_prefix + k[len(old_prefix) :] if k.startswith(old_prefix) else k): v
                for k, v in tree.items()
            }
    return DictSource(Node(tree, printed))
