"""One thin module per `gpurack` verb: each registers its arguments and calls domain code.

A module here has `register(subparsers)`; `gpurack.cli` adds every module of BUILTIN, then
every module of the entry-point group `gpurack.commands` (how the lab, a separate
distribution, adds `gpurack lab`). An entry point wins over a built-in verb of its name.
"""

from __future__ import annotations

import argparse
import importlib
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Protocol, TypeAlias

ENTRY_POINT_GROUP = "gpurack.commands"
# In the order `gpurack --help` lists them.
BUILTIN: tuple[str, ...] = (
    "capture",
    "facts",
    "validate",
    "fabric",
    "run",
    "accept",
    "conformance",
    "inventory",
    "queue",
    "report",
    "cost",
    "platform",
    "lab",
)

# A string: argparse's action class is not subscriptable at run time.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CommandModule(Protocol):
    """What a command module provides."""

    def register(self, subparsers: Subparsers) -> None: ...


def builtin(name: str) -> ModuleType:
    """The command module of a built-in verb."""
    return importlib.import_module(f"{__name__}.{name}")


def plugins() -> dict[str, CommandModule]:
    """The command modules installed under the entry-point group, by verb."""
    found: dict[str, CommandModule] = {}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        found.setdefault(point.name, point.load())
    return found


def register_all(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add every built-in verb not replaced by an entry point, then every entry point's verbs."""
    installed = plugins()
    for name in BUILTIN:
        if name not in installed:
            builtin(name).register(subparsers)
    for module in installed.values():
        module.register(subparsers)
